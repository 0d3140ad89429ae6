"""Deadlines of a trailing absence fire on the reorder buffer's watermark, not on arrival
order (issue 17: "Deadlines from part 1 fire on the watermark"): with ``max_delay``, the
output on a stream shuffled within the delay equals the output on the sorted stream. The
expected values follow from docs/language.md#s3-3b and #s3-7a on the sorted stream."""

from __future__ import annotations

import pytest

import ceql

QUERY = """SELECT * FROM S WHERE ORDER AS o ; ABSENT(PAYMENT) FOR 10 seconds
PARTITION BY [id] WITHIN 1 minute"""

SORTED = [
    {"type": "ORDER", "id": 1, "t": 0},  # paid at 5 s: no alert
    {"type": "PAYMENT", "id": 1, "t": 5},
    {"type": "ORDER", "id": 2, "t": 20},  # never paid: deadline 30 s
    {"type": "PING", "id": 9, "t": 100},  # time passes 30 s: order 2 is reported
]


def spans(matches):
    return sorted((m.start, m.end, tuple(m.positions)) for m in matches)


def test_sorted_input_reports_only_the_unpaid_order():
    q = ceql.compile(QUERY)
    assert spans(q.run(SORTED, time_field="t", time_unit="s")) == [(2, 2, (2,))]


def test_a_later_event_arriving_early_does_not_fire_a_deadline_before_the_payment():
    # The PING at 100 s arrives before the payment at 5 s. In arrival order it would pass
    # order 1's deadline (10 s) before the payment is seen; with max_delay the buffer
    # releases the events in time order, so the payment cancels order 1 first.
    shuffled = [SORTED[0], SORTED[3], SORTED[1], SORTED[2]]
    q = ceql.compile(QUERY)
    stream = q.stream(time_field="t", time_unit="s", max_delay=120)
    out = []
    for e in shuffled:
        out += stream.push(e)
    out += stream.flush()
    # Positions are those of the sorted stream; order 2's deadline (30 s) is passed by the
    # PING at 100 s once it is released.
    assert spans(out) == [(2, 2, (2,))]
    assert spans(q.run(shuffled, time_field="t", time_unit="s", max_delay=120)) == [(2, 2, (2,))]


def test_without_the_buffer_the_early_event_is_late():
    # Without max_delay the same arrival order is refused (time went backwards), never a
    # silently different answer.
    q = ceql.compile(QUERY)
    shuffled = [SORTED[0], SORTED[3], SORTED[1], SORTED[2]]
    try:
        q.run(shuffled, time_field="t", time_unit="s")
    except ceql.CeqlEventError:
        return
    raise AssertionError("an out-of-order stream without max_delay must raise")


def test_describe_names_the_deadline_and_the_query_is_not_split_by_key():
    d = ceql.compile(QUERY).describe()
    assert d["trailing_absence"] == 10 * 10**9
    # A deadline is passed by events of any partition (docs/language.md#s3-3b).
    assert d["key_independent"] is False
    assert ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [id] WITHIN 1 minute").describe()["trailing_absence"] is None


# ceql.spark runs a trailing absence (deadlines on Spark's watermark, closed at the end of a
# batch): tests/test_spark_absence.py.


def test_a_deadline_match_keeps_its_captures():
    # Order 2 (position 1) is never paid: reported after 11 s with o and ORDER capturing it
    # (docs/language.md#s3-2a, #s3-3b), with and without the reorder buffer.
    events = [
        {"type": "ORDER", "id": 1, "t": 0},
        {"type": "ORDER", "id": 2, "t": 1},
        {"type": "PAYMENT", "id": 1, "t": 5},
        {"type": "PING", "id": 9, "t": 100},
    ]
    q = ceql.compile(QUERY)
    for kw in ({}, {"max_delay": 5}):
        (m,) = q.run(events, time_field="t", time_unit="s", captures=True, **kw)
        assert m.positions == (1,)
        assert m.captures == {"ORDER": (1,), "o": (1,)}
        assert m.deadline == 11 * 10**9


@pytest.mark.parametrize("query,code", [
    # A trailing absence reads its own event only; ABSENT, like NOT, has no PREV.
    ("SELECT * FROM S WHERE A AS a ; C ; ABSENT(B FILTER B[v > a.v]) FOR 1 second WITHIN 1 minute", "E0500"),
    ("SELECT * FROM S WHERE A AS a ; ABSENT(B FILTER B[v > PREV(v)]) ; C", "E0301"),
])
def test_what_absence_does_not_combine_with_is_refused(query, code):
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile(query)
    assert e.value.code == code


@pytest.mark.parametrize("query", [
    "SELECT * FROM S WHERE A AS a ; ABSENT(B) ; C AS c FILTER c[v > a.v]",
    "SELECT * FROM S WHERE (A AS a ; C AS c FILTER c[v > a.v]) ; ABSENT(B) FOR 1 second WITHIN 1 minute",
    "SELECT * FROM S WHERE A AS a ; ABSENT(B FILTER B[v > a.v]) ; C",
])
def test_filters_between_events_combine_with_absent(query):
    """docs/language.md#s3-3a: filters between events next to ABSENT, and an absence whose
    filter reads the match, agree with the oracle (tests/test_differential_absence_correlated.py
    draws many more)."""
    from oracle import evaluate

    ev = [{"type": "A", "v": 1, "ts": 0}, {"type": "B", "v": 2, "ts": 1}, {"type": "C", "v": 2, "ts": 2},
          {"type": "A", "v": 3, "ts": 3}, {"type": "C", "v": 5, "ts": 4}, {"type": "X", "ts": 10}]
    got = sorted((m.start, m.end, m.positions) for m in ceql.compile(query).run(ev, time_field="ts", time_unit="s"))
    assert got == evaluate(query, ev, time_field="ts", time_unit="s").matches()


def test_the_push_that_moves_the_watermark_past_a_deadline_returns_its_match():
    """With max_delay, the match of an order whose deadline the watermark passed waited
    for the next released event (Stream.waiting said 0), and a no-op advance_watermark
    returned it: the push that moved the watermark hands it over."""
    q = ceql.compile("SELECT * FROM S WHERE ORDER ; ABSENT(PAYMENT) FOR 10 seconds PARTITION BY [id] WITHIN 1 minute")
    s = q.stream(time_field="t", time_unit="s", max_delay=5)
    assert s.push({"type": "ORDER", "id": 2, "t": 3}) == []
    first = s.push({"type": "X", "t": 30})  # the watermark is now 25, past the deadline 13
    assert [m.positions for m in first] == [(0,)]
    assert s.advance_watermark(25) == [] and s.push({"type": "X", "t": 31}) == []
