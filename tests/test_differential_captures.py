"""Randomized differential tests of captures (docs/language.md#s3-2a): with ``captures=True`` the
engine's outputs are valuations, compared with the oracle's valuations restricted to the reported
variables of the SELECT list (``tests/oracle``, ``evaluate(..., captures=True)``), on the random
queries and streams of ``tests/gen``: every strategy, PARTITION BY, WITHIN, CONSUME BY / LIMIT,
projection, NOT, several streams; through ``Query.run``, ``run_arrow`` (the ``variables`` column
must say what ``Match.variables`` says), and a ``Stream`` fed in chunks with a
``snapshot()`` / ``restore()`` in the middle.

Examples per test function: ``CEQL_CAPTURES_MAIN_EXAMPLES`` (default 600) for the main
comparison, ``CEQL_CAPTURES_EXAMPLES`` (default 200) for the strategies and the stream tests:
2 x 600 + 2 x 2 x 200 = 2,000 random cases, each checked several ways (about 40 s of CPU).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import assume, event, given, note, settings
from hypothesis import strategies as st

import ceql
import gen
from test_differential import MODES, SETTINGS, _seeded

EXAMPLES = int(os.environ.get("CEQL_CAPTURES_EXAMPLES", "200"))
CAP_SETTINGS = settings(SETTINGS, max_examples=EXAMPLES)
MAIN_SETTINGS = settings(SETTINGS, max_examples=int(os.environ.get("CEQL_CAPTURES_MAIN_EXAMPLES", "600")))

AREAS = ["core", "projection", "strategies", "partition", "windows", "consume_limit", "not", "mixed",
         "multi_stream", "filters", "long_streams"]


def valuation(m):
    """A captures-on Match as (start, end, sorted ((position, sorted variable names), ...))."""
    return (m.start, m.end, tuple(sorted((p, tuple(sorted(vs))) for p, vs in zip(m.positions, m.variables))))


def check_match(m):
    """Match.captures, Match.variables and Match.positions say the same thing."""
    assert len(m.variables) == len(m.positions)
    caps = {}
    for p, vs in zip(m.positions, m.variables):
        assert vs, "every reported position was captured by some variable"
        for v in vs:
            caps.setdefault(v, []).append(p)
    assert m.captures == {v: tuple(ps) for v, ps in caps.items()}
    assert list(m.captures) == sorted(caps, key=lambda v: caps[v][0]), "variables in order of first position"


def check_valuations(emitted, expected, limit):
    """As conftest.check_against, for valuations: no repeats, in order of end, the expected set
    (under LIMIT n: min(n, |O_j|) of O_j per end)."""
    dupes = [t for t, c in Counter(emitted).items() if c > 1]
    assert not dupes, "repeated valuations: %s" % dupes
    ends = [e for _, e, _ in emitted]
    assert ends == sorted(ends), "valuations must be reported in order of end"
    if limit is None:
        assert sorted(emitted) == sorted(expected)
        return
    by_end, got = {}, {}
    for t in expected:
        by_end.setdefault(t[1], set()).add(t)
    for t in emitted:
        got.setdefault(t[1], set()).add(t)
    for end in set(by_end) | set(got):
        assert got.get(end, set()) <= by_end.get(end, set())
        assert len(got.get(end, ())) == min(limit, len(by_end.get(end, ())))


def oracle_valuations(case):
    """("static", code) | ("event",) | ("ok", OracleResult) with captures."""
    from oracle import OracleError, OracleEventError, evaluate

    try:
        res = evaluate(case.text, case.events, schema=case.schema, compat_ignore_strategy=case.compat,
                       captures=True, **case.run_kwargs())
    except OracleEventError:
        return ("event",)
    except OracleError as e:
        return ("static", e.code)
    return ("ok", res)


def engine_valuations(q, case):
    """("event",) | ("ok", valuations, matches) of q.run(captures=True)."""
    try:
        ms = q.run(case.events, captures=True, **case.engine_kwargs())
    except ceql.CeqlEventError:
        return ("event",)
    for m in ms:
        check_match(m)
    return ("ok", [valuation(m) for m in ms], ms)


def arrow_valuations(table):
    """The valuations of a run_arrow(captures=True) table."""
    rows = table.to_pylist()
    return [(r["start"], r["end"], tuple(sorted((p, tuple(sorted(vs))) for p, vs in zip(r["positions"], r["variables"]))))
            for r in rows]


def _compiled(case):
    c = gen.compile_engine(case)
    assume(c[0] == "ok")
    return c[1]


def _differential(case, data):
    note(repr(case))
    oracle_out = oracle_valuations(case)
    assume(oracle_out[0] != "static")
    q = _compiled(case)
    engine_out = engine_valuations(q, case)
    event("oracle: " + ("event error" if oracle_out[0] == "event" else "ok"))
    assert engine_out[0] == oracle_out[0], "oracle: %s, engine: %s\n%r" % (oracle_out[0], engine_out[0], case)
    if oracle_out[0] != "ok":
        return
    res = oracle_out[1]
    event("non-empty output" if res.outputs else "empty output")
    emitted = engine_out[1]
    check_valuations(emitted, res.matches(), res.limit)
    # Match.events_of: the events of each variable.
    for m in engine_out[2][:5]:
        for v, ps in m.captures.items():
            assert [e["type"] for e in m.events_of(v)] == [case.events[p]["type"] for p in ps]
    if res.limit is None:
        # The union of each valuation is a complex event of the captures-off run, and back.
        off = {(m.start, m.end, tuple(m.positions)) for m in q.run(case.events, **case.engine_kwargs())}
        on = {(s, e, tuple(p for p, _ in val)) for s, e, val in emitted}
        assert on == off, "captures on and off give different complex events\n%r" % case
    if data.draw(st.booleans(), label="arrow"):
        table = q.run_arrow(case.events, captures=True, **case.engine_kwargs())
        assert arrow_valuations(table) == emitted, "run_arrow's variables differ from run's"


@pytest.mark.parametrize("schema", MODES)
@MAIN_SETTINGS
@_seeded
@given(data=st.data())
def test_captures_differential(schema, data):
    area = data.draw(st.sampled_from(AREAS), label="area")
    prof = gen.profile(area, schema)
    _differential(data.draw(gen.cases(prof), label="case"), data)


@pytest.mark.parametrize("schema", MODES)
@CAP_SETTINGS
@_seeded
@given(data=st.data())
def test_captures_strategies(schema, data):
    prof = gen.profile("strategies", schema)
    _differential(data.draw(gen.cases(prof), label="case"), data)


@pytest.mark.parametrize("schema", MODES)
@CAP_SETTINGS
@_seeded
@given(data=st.data())
def test_captures_stream_and_snapshot(schema, data):
    """A captures-on Stream fed in chunks, with a snapshot/restore at a random point, emits
    exactly the valuations of the one-shot run."""
    area = data.draw(st.sampled_from(["mixed", "windows", "partition", "consume_limit", "strategies", "not"]),
                     label="area")
    case = data.draw(gen.cases(gen.profile(area, schema)), label="case")
    note(repr(case))
    q = _compiled(case)
    whole = engine_valuations(q, case)
    assume(whole[0] == "ok")
    evs = case.events
    det = data.draw(st.sampled_from([None, None, 1, 2, 4]), label="max_det_states")
    s = q.stream(captures=True, max_det_states=det, **case.engine_kwargs())
    cut = data.draw(st.integers(0, len(evs)), label="snapshot at")
    out = []
    try:
        i = 0
        while i < cut:
            k = data.draw(st.integers(1, cut - i), label="chunk")
            out += s.push_many(list(evs[i:i + k]))
            i += k
        s = ceql.Stream.restore(q, s.snapshot())
        out += s.push_many(list(evs[cut:]))
    except ceql.CeqlMemoryError as e:
        # a tiny cache budget may refuse the query; never a wrong answer
        assert any(f"max_det_states = {n}," in str(e) for n in (1, 2, 4)), e
        event("refused: tiny cache budget")
        return
    for m in out:
        check_match(m)
    assert [valuation(m) for m in out] == whole[1]
