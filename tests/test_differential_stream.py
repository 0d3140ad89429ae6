"""Differential tests through the streaming API: ``q.stream()`` fed with a random chunking of
``push`` / ``push_many`` (list, tuple, generator), compared with the oracle and with the
one-shot ``q.run`` (which must give exactly the same list); and a ``snapshot()`` /
``Stream.restore()`` round trip at a random point in the middle: the restored stream (into the
same or a freshly compiled query) and the original one are then both continued and must emit
exactly what the uninterrupted run emits.

Example counts and seeds as in ``test_differential.py`` (``CEQL_DIFF_EXAMPLES``,
``CEQL_DIFF_SEED``).
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import assume, event, given, note
from hypothesis import strategies as st

import ceql
import gen
from conftest import as_triples
from test_differential import MODES, SETTINGS, _seeded

AREAS = ["mixed", "windows", "partition", "consume_limit", "not", "filters", "long_streams", "long_streams",
         "strategies"]


def _profile(area: str, schema: bool) -> gen.Profile:
    # the stream tests need no ill-formed queries: compile errors are covered elsewhere
    return gen.profile(area, schema)


def _triples(matches, all_events):
    gen.check_match_events(matches, all_events, arrow=True)  # retained event data, also across a restore
    return as_triples(matches)


def _feed(stream, events, data, label, all_events, table=None, offset=0):
    """Pushes `events` in random chunks (as Arrow slices of `table` too, if given; `events`
    starts at row `offset` of it); returns the emitted triples."""
    out = []
    i = 0
    hows = ["push", "push_many", "tuple", "iter"] + (["arrow", "arrow"] if table is not None else [])
    while i < len(events):
        size = data.draw(st.integers(1, len(events) - i), label="%s chunk" % label)
        chunk = events[i:i + size]
        how = data.draw(st.sampled_from(hows), label="%s how" % label)
        if how == "arrow":
            out += _triples(stream.push_batch(table.slice(offset + i, size)), all_events)
        elif how == "push":
            for ev in chunk:
                out += _triples(stream.push(ev), all_events)
        elif how == "push_many":
            out += _triples(stream.push_many(list(chunk)), all_events)
        elif how == "tuple":
            out += _triples(stream.push_many(tuple(chunk)), all_events)
        else:
            out += _triples(stream.push_many(ev for ev in chunk), all_events)
        i += size
    return out


def _new_stream(q, case, data):
    kw = case.engine_kwargs()
    # sometimes a tiny determinization cache, to exercise cache clears
    det = data.draw(st.sampled_from([None, None, 1, 2, 4]), label="max_det_states")
    return q.stream(max_det_states=det, **kw)


def _stream_outcome(q, case, data, snapshot: bool, table=None):
    """("ok", triples) | ("event",) for the streaming evaluation of the case."""
    s = _new_stream(q, case, data)
    evs = case.events
    try:
        if not snapshot:
            return ("ok", _feed(s, evs, data, "all", evs, table))
        cut = data.draw(st.integers(0, len(evs)), label="snapshot at")
        out = _feed(s, evs[:cut], data, "before", evs, table)
        blob = s.snapshot()
        fresh = data.draw(st.booleans(), label="restore into a freshly compiled query")
        q2 = ceql.compile(case.text, case.schema, compat_ignore_strategy=case.compat) if fresh else q
        s2 = ceql.Stream.restore(q2, blob)
        assert s2.position == s.position == cut
        # continue the restored stream and the original one with the same chunking
        rest = evs[cut:]
        state = data.draw(st.randoms(use_true_random=False), label="chunking")
        sizes = []
        i = 0
        while i < len(rest):
            k = state.randint(1, len(rest) - i)
            sizes.append(k)
            i += k
        o1, o2 = [], []
        i = 0
        for k in sizes:
            chunk = rest[i:i + k]
            o2 += _triples(s2.push_many(list(chunk)), evs)
            o1 += _triples(s.push_many(list(chunk)), evs)
            i += k
        assert o1 == o2, "restored stream differs from the original after the snapshot:\n%s\n%s" % (o2, o1)
        return ("ok", out + o2)
    except ceql.CeqlInternalError:
        raise
    except ceql.CeqlEventError:
        return ("event",)
    except ceql.CeqlMemoryError as e:
        # The cache budget covers the det-states in use: with a tiny budget a query
        # whose runs need more of them at once is refused, never answered wrongly.
        assert any(f"max_det_states = {n}," in str(e) for n in (1, 2, 4)), e
        return ("memory",)


def _check_stream(case: gen.Case, data, snapshot: bool):
    try:
        _check_stream_inner(case, data, snapshot)
    except ceql.CeqlInternalError as e:
        if gen.is_known_panic(e):
            event("discarded: known engine panic")
            assume(False)
        raise


def _check_stream_inner(case: gen.Case, data, snapshot: bool):
    table = None
    if data.draw(st.integers(0, 3), label="columnar") == 0:
        # Arrow chunks mixed with dict chunks of the same rows
        conv = gen.columnar(case, data.draw(st.randoms(use_true_random=False), label="column types"))
        if conv is not None:
            table, case = conv
    note(repr(case))
    oracle_out = gen.run_oracle(case)
    assert oracle_out[0] != "static", "generator produced an ill-formed query: %s\n%r" % (oracle_out, case)
    c = gen.compile_engine(case)
    if c[0] != "ok":
        gen.check_outcomes(case, oracle_out, c)  # fails: the engine rejects a valid query
        return
    q = c[1]
    run_out = gen.run_engine(case)
    streamed = _stream_outcome(q, case, data, snapshot, table)
    if streamed[0] == "memory":
        event("refused: more det-states in use than a tiny cache budget")
        return
    event("oracle: " + gen.outcome_label(oracle_out))
    # streaming vs the oracle
    gen.check_outcomes(case, oracle_out, streamed)
    # streaming vs run(): the same list, in the same order (LIMIT choice included, docs/language.md#s3-11)
    assert streamed[0] == run_out[0], "run(): %s, stream: %s\n%r" % (run_out, streamed, case)
    if streamed[0] == "ok":
        assert streamed[1] == run_out[1], "run() and stream() differ:\nrun:    %s\nstream: %s\n%r" % (
            run_out[1], streamed[1], case)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_stream_chunked(schema, data):
    area = data.draw(st.sampled_from(AREAS), label="area")
    case = data.draw(gen.cases(_profile(area, schema)), label="case")
    _check_stream(case, data, snapshot=False)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_stream_snapshot_restore(schema, data):
    area = data.draw(st.sampled_from(AREAS), label="area")
    case = data.draw(gen.cases(_profile(area, schema)), label="case")
    _check_stream(case, data, snapshot=True)
