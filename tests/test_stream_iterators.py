"""``Stream.push_many`` (and ``Query.run``) over an iterator that raises part-way
(issue 15's verification, R7): the events pulled before the exception were
processed in chunks of 4,096 and the matches of those chunks lost, and the
pulled events of the last, partial chunk were dropped without a word. Now every
pulled event is processed, the stream's position counts them, and the iterator's
exception carries the call's matches in ``matches``."""

from __future__ import annotations

import pytest

import ceql

QUERY = "SELECT * FROM S WHERE A ; B FILTER A[x > 5] WITHIN 3 EVENTS"


class SourceFailed(Exception):
    """What a failing event source raises."""


def _events(n: int, offset: int = 0) -> list:
    return [{"type": "AB"[i % 2], "x": (i + offset) % 11} for i in range(n)]


def _failing(events: list, error: BaseException):
    yield from events
    raise error


def _triples(matches) -> list:
    return [(m.start, m.end, tuple(m.positions)) for m in matches]


@pytest.mark.parametrize("pulled", [8, 4096, 4097, 10_001])
def test_events_pulled_before_the_iterator_fails_are_processed_and_their_matches_kept(pulled):
    q = ceql.compile(QUERY)
    events = _events(pulled)
    expected = q.run(events)  # the same events, as a list
    assert expected  # the pattern matches in them
    s = q.stream()
    with pytest.raises(SourceFailed) as failure:
        s.push_many(_failing(events, SourceFailed("connection reset")))
    assert s.position == pulled
    assert _triples(failure.value.matches) == _triples(expected)
    assert [m.events for m in failure.value.matches] == [m.events for m in expected]
    # The stream goes on as if the events had come in one call.
    more = _events(50, offset=pulled)
    later = s.push_many(iter(more))
    whole = q.run(events + more)
    assert _triples(failure.value.matches) + _triples(later) == _triples(whole)


def test_query_run_over_a_failing_generator_keeps_the_matches_too():
    q = ceql.compile(QUERY)
    events = _events(5000)
    with pytest.raises(KeyError) as failure:
        q.run(_failing(events, KeyError("gone")))
    assert _triples(failure.value.matches) == _triples(q.run(events))


def test_a_bad_event_among_the_pulled_ones_is_reported_first():
    """A bad event pulled before the iterator failed is the earlier problem: its
    CeqlEventError is raised (with the matches before it), the iterator's
    exception as its context."""
    q = ceql.compile(QUERY)
    events = _events(4100)
    events[4098] = {"x": 1}  # no type
    s = q.stream()
    with pytest.raises(ceql.CeqlEventError) as bad:
        s.push_many(_failing(events, SourceFailed("late failure")))
    assert bad.value.position == 4098 and s.position == 4098
    assert isinstance(bad.value.__context__, SourceFailed)
    assert _triples(bad.value.matches) == _triples(q.run(events[:4098]))


def test_the_readme_and_docstring_say_what_push_many_does_when_the_iterator_fails():
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme[readme.index("### Streams"):readme.index("### Bad events")]
    assert "iterator" in section and "`.matches`" in section
    assert "every event pulled before the exception is processed" in " ".join(ceql.Stream.push_many.__doc__.split())


def _refilled(events: list):
    """A reader that refills one dict for every event."""
    buf: dict = {}
    for e in events:
        buf.clear()
        buf.update(e)
        yield buf


@pytest.mark.parametrize("n", [9, 5000])
def test_an_iterator_refilling_one_dict_is_refused_not_read_as_its_last_event(n):
    # Read in chunks after the iterator moved on, every place of one refilled dict
    # would hold its last event's fields: A(x=9) ; B would be lost.
    events = _events(n)
    expected = _triples(ceql.compile(QUERY).run(events))
    assert expected  # the refilled stream has matches to lose
    with pytest.raises(ceql.CeqlError, match="same dict object as its events 0 and 1") as info:
        ceql.compile(QUERY).run(_refilled(events))
    assert info.value.code == "STREAM" and info.value.matches == []


def test_a_refilled_dict_after_a_full_chunk_keeps_the_earlier_chunks_matches():
    events = _events(4096)
    fresh = ceql.compile(QUERY).stream()
    expected = _triples(fresh.push_many(events))

    def fresh_then_refilled():
        yield from (dict(e) for e in events)
        yield from _refilled(_events(4))

    stream = ceql.compile(QUERY).stream()
    with pytest.raises(ceql.CeqlError, match="events 4096 and 4097") as info:
        stream.push_many(fresh_then_refilled())
    assert _triples(info.value.matches) == expected
    assert stream.position == 4096  # the refused chunk was not pushed


def test_one_event_object_repeated_in_a_list_is_read_at_the_call():
    # A list is read when it is pushed: one unchanged dict repeated is three events.
    a = {"type": "A", "x": 9}
    b = {"type": "B", "x": 0}
    got = sorted(_triples(ceql.compile(QUERY).run([a, a, b])))
    assert got == [(0, 2, (0, 2)), (1, 2, (1, 2))]


def test_a_dict_yielded_again_at_the_start_of_the_next_chunk_is_refused_too():
    def reused_at_the_boundary():
        for i, e in enumerate(_events(5000)):
            d = dict(e)
            yield d
            if i == 4095:  # the last event of the first chunk, again as the first of the next
                yield d

    with pytest.raises(ceql.CeqlError, match="events 4095 and 4096"):
        ceql.compile(QUERY).stream().push_many(reused_at_the_boundary())
