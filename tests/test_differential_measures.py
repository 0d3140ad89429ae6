"""Randomized differential tests of measures (docs/language.md#s3-5a): random queries of
``tests/gen/correlation.py`` with one to three aggregates in the SELECT list, with and without
filters between events, under every strategy, with projection, PARTITION BY, WITHIN,
CONSUME BY and LIMIT, against the oracle (``tests/oracle/evaluate.py``, which computes the
measures of each output from the design's text). Through ``Query.run`` (captures off and on),
``run_arrow`` (every input kind: dicts, pandas, Arrow) and a ``Stream`` fed in chunks with a
``snapshot()`` / ``restore()`` in the middle.

The engine may refuse what it does not evaluate yet with E0500 (never a wrong answer).

Examples: ``CEQL_MEASURES_EXAMPLES`` (default 300) per test, 4 tests: 1,200 cases.
"""

from __future__ import annotations

import math
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import ceql
from gen.correlation import correlation_cases
from test_differential_correlation import _agree_statically, oracle
from gen.differential import check_stream_with_restore

EXAMPLES = int(os.environ.get("CEQL_MEASURES_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def canon(v):
    """A measure value in a form that sorts and compares as the specification says:
    numbers as numbers (1 == 1.0), NaN equal to NaN."""
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, float):
        if math.isnan(v):
            return ("nan",)
        if v == int(v):
            return ("num", int(v))
        return ("num", v)
    if isinstance(v, int):
        return ("num", v)
    return ("str", v)


def out_of(start, end, positions, measures):
    return (start, end, tuple(positions), tuple((n, canon(v)) for n, v in measures))


def engine_outputs(ms):
    return [out_of(m.start, m.end, m.positions, m.measures.items()) for m in ms]


def oracle_outputs(res):
    return [out_of(s, e, ps, meas) for s, e, ps, meas in res.matches()]


def check(emitted, expected, limit):
    """No repeats, in order of end, the expected set (under LIMIT n: min(n, |O_j|) of O_j)."""
    dupes = [t for t, c in Counter(emitted).items() if c > 1]
    assert not dupes, "repeated outputs: %s" % dupes
    ends = [t[1] for t in emitted]
    assert ends == sorted(ends), "outputs must be reported in order of end"
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


def _accepted(case):
    q, o = _agree_statically(case)
    if q is None:
        return None, None
    return q, o


def check_measures_agree(case):
    """``Query.run`` gives the oracle's complex events and measures, or a data error where
    some order of evaluation raises one (oracle note 16)."""
    q, o = _accepted(case)
    if q is None:
        return
    try:
        ms = q.run(case.events)
    except ceql.CeqlEventError:
        assert o[0] == "event" or oracle(case, data_errors="may")[0] == "event", \
            "the engine raised an event error that no order of evaluation raises\n%r" % case
        event("data error")
        return
    assert o[0] == "ok", "the oracle raised an event error that every order raises, the engine did not\n%r" % case
    res = o[1]
    event("non-empty output" if res.outputs else "empty output")
    assert all(list(m.measures) == q.measure_names for m in ms) if ms else True
    check(engine_outputs(ms), oracle_outputs(res), res.limit)


@given(case=correlation_cases(measures=True))
@SETTINGS
def test_measures_agree_with_the_oracle(case):
    check_measures_agree(case)


@given(case=correlation_cases(measures=True, mismatches=True).filter(lambda c: "limit" not in c.clauses))
@SETTINGS
def test_data_errors_with_measures(case):
    """Schema-less events with a string ``v``: aggregates and filters raise exactly where the
    oracle does (docs/language.md#s3-4a; LIMIT left out, as in test_differential_correlation)."""
    check_measures_agree(case)


@given(case=correlation_cases(measures=True))
@SETTINGS
def test_measures_with_captures_agree_with_the_oracle(case):
    q, o = _accepted(case)
    if q is None or o[0] != "ok":
        return
    oc = oracle(case, captures=True)
    ms = q.run(case.events, captures=True)
    got = [(m.start, m.end, tuple(sorted((p, tuple(sorted(vs))) for p, vs in zip(m.positions, m.variables))),
            tuple((n, canon(v)) for n, v in m.measures.items())) for m in ms]
    want = [(s, e, val, tuple((n, canon(v)) for n, v in meas)) for s, e, val, meas in oc[1].matches()]
    check(got, want, oc[1].limit)


@given(case=correlation_cases(measures=True), data=st.data())
@SETTINGS
def test_run_arrow_measure_columns(case, data):
    """run_arrow's measure columns hold run's measures, from dicts, pandas or Arrow input;
    join_events repeats them per event."""
    import pyarrow as pa
    from gen.arrow_input import to_arrow

    q, o = _accepted(case)
    if q is None or o[0] != "ok":
        return
    expected = engine_outputs(q.run(case.events))
    kind = data.draw(st.sampled_from(["dicts", "pandas", "arrow"]), label="input")
    if kind == "arrow":
        events = to_arrow(case.events)
        if events is None:
            return
        # The table's rows are the events the oracle must see (ints widened to floats, say).
        expected = engine_outputs(q.run(events.to_pylist()))
    elif kind == "pandas":
        import pandas as pd

        events = pd.DataFrame(case.events) if case.events else pd.DataFrame({"type": []})
        if len(case.events) and events.isna().any().any():
            return  # pandas turns missing ints into NaN floats: another input
    else:
        events = case.events
    event("input: " + kind)
    table = q.run_arrow(events)
    names = q.measure_names
    assert table.column_names[:4] == ["match_id", "start", "end", "positions"]
    assert table.column_names[4:] == names
    rows = table.to_pylist()
    got = [out_of(r["start"], r["end"], r["positions"], [(n, r[n]) for n in names]) for r in rows]
    assert got == expected, "run_arrow's measures differ from run's\n%r" % case
    if rows and kind == "arrow":
        joined = ceql.join_events(table, events)
        for n in names:
            per_row = joined.column(n).to_pylist()
            firsts = {}
            for mid, v in zip(joined.column("match_id").to_pylist(), per_row):
                firsts.setdefault(mid, v)
                assert canon(firsts[mid]) == canon(v)
    # run_arrow_batches has the same columns, with the schema announced before reading.
    reader = q.run_arrow_batches(events if kind != "pandas" else events, slice_rows=3)
    batches = list(reader)
    if batches:
        assert pa.Table.from_batches(batches).to_pylist() == rows
    assert reader.schema.names == table.schema.names


@given(case=correlation_cases(measures=True), data=st.data())
@SETTINGS
def test_stream_with_snapshot_and_restore(case, data):
    q, o = _accepted(case)
    if q is None or o[0] != "ok":
        return
    check_stream_with_restore(case, q, data, engine_outputs)


# -- measures of complex events that wait for a deadline (docs/language.md#s3-3b, #s3-5a) --
# mostly rare events (D is noise), so that many complex events survive their deadline
ABSENT_ATOMICS = ["D", "D", "D FILTER D[v > 2]", "C FILTER C[v > 4]", "B FILTER B[v > 4] OR D",
                  "D FILTER D[v < 2] OR C FILTER C[w > 2.5]"]


@st.composite
def deadline_measure_cases(draw):
    """A measures case (schema-less) whose formula gets `` ; ABSENT(β) FOR d``, with a
    ``WITHIN`` duration instead of its window and CONSUME BY, and time stamps (seconds,
    non-decreasing, ties possible) on its events."""
    from gen.case import Case, join_clauses

    mismatches = draw(st.integers(0, 3), label="strings among the numbers") == 0
    case = draw(correlation_cases(measures=True, max_events=14, mismatches=mismatches).filter(lambda c: c.schema is None))
    clauses = {k: v for k, v in case.clauses.items() if k not in ("window", "consume")}
    formula = case.clauses["where"][len(" WHERE "):]
    absent = draw(st.sampled_from(ABSENT_ATOMICS), label="absent")
    d = draw(st.sampled_from([0, 1, 2, 3]), label="d")
    clauses["where"] = " WHERE (%s) ; ABSENT(%s) FOR %d seconds" % (formula, absent, d)
    clauses["window"] = " WITHIN %d seconds" % draw(st.integers(1, 6), label="window")
    steps = draw(st.lists(st.integers(0, 2), min_size=len(case.events), max_size=len(case.events)))
    t, events = 0, []
    for e, step in zip(case.events, steps):
        t += step
        events.append(dict(e, ts=t))
    return Case(text=join_clauses(clauses), events=events, schema=None, time_field="ts", time_unit="s",
                clauses=clauses)


@given(case=deadline_measure_cases(), data=st.data())
@settings(SETTINGS, max_examples=3 * EXAMPLES)  # fast, and most random queries find nothing
def test_measures_of_matches_waiting_for_a_deadline(case, data):
    """The measures a complex event had when it ended are reported when its deadline
    passes: ``run`` (with and without closing the deadlines), and a ``Stream`` with a
    snapshot and a restore while complex events wait."""
    from oracle import OracleError, OracleEventError, evaluate

    note(repr(case))
    try:
        q = ceql.compile(case.text)
    except ceql.CeqlInternalError:
        raise
    except ceql.CeqlError as e:
        # The same static error as the oracle (the generator writes some ill-formed
        # queries), or a refusal of what the engine does not evaluate yet.
        try:
            evaluate(case.text, [], time_field="ts", time_unit="s")
        except OracleError as o:
            assert o.code == e.code, "oracle %s, engine %s" % (o.code, e)
            event("static error")
            return
        assert e.code == "E0500" and "not supported yet" in str(e), "the oracle accepts it, the engine: %s" % e
        event("refused (E0500)")
        return
    timed = dict(time_field="ts", time_unit="s")
    for close in (False, True):
        try:
            ms = q.run(case.events, close_deadlines=close, **timed)
        except ceql.CeqlEventError:
            # Some order of evaluation raises it (oracle note 16: measures are computed
            # when the complex event ends, also if the absence later drops it).
            with pytest.raises(OracleEventError):
                evaluate(case.text, case.events, close_deadlines=close, data_errors="may", **timed)
            event("data error")
            return
        try:
            res = evaluate(case.text, case.events, close_deadlines=close, **timed)
        except OracleEventError:
            raise AssertionError("the oracle raises a data error that every order raises; the engine did not")
        assert all(m.deadline is not None for m in ms)
        event("close=%s: %s" % (close, "non-empty" if res.outputs else "empty"))
        check(engine_outputs(ms), oracle_outputs(res), res.limit)
    check_stream_with_restore(case, q, data, engine_outputs, time_field="ts", time_unit="s")
