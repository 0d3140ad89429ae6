"""Randomized differential tests of the trailing absence with a deadline,
``ψ ; ABSENT(β) FOR d`` (docs/language.md#s3-3b), against the brute-force oracle.

The cases are those of the ``absent`` profile (random formulas, with absences between
patterns too) with a required ``WITHIN`` duration and no ``CONSUME BY``; the formula ``ψ``
gets `` ; ABSENT(β) FOR d`` appended (in parentheses, so that ``ψ`` stays one operand).
Checked: ``run()`` (deadlines reached by the input), ``run(close_deadlines=True)``, the
same through ``run_arrow``, and a
stream pushed in random chunks with ``advance_watermark`` calls (never past the next
event's time stamp) and a snapshot/restore round trip, closed at the end: the union of
what it returns equals the oracle's closed output.

``CEQL_DEADLINE_EXAMPLES`` examples per test and mode (default 120: two tests x 2 modes x 2
strategy sets, each case run with and without ``close_deadlines``, plus 2 x 60 static-error
cases: 1,080 cases).
"""

from __future__ import annotations

import dataclasses
import os

import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

import ceql
import gen
import test_differential
from conftest import as_triples, check_against
from gen.case import join_clauses
from test_differential import MODES, _seeded

EXAMPLES = int(os.environ.get("CEQL_DEADLINE_EXAMPLES", "120"))
SETTINGS = settings(test_differential.SETTINGS, max_examples=EXAMPLES)

# mostly rare events (C is the rarest type of gen/event_streams.py), so that many matches survive
ATOMICS = ["C", "C", "C FILTER C[v > 2]", "C FILTER C[v > 2]", "B FILTER B[v > 4]", "S>C", "A FILTER A[s = 'a']",
           "B", "A"]
DEADLINES = ["0 seconds", "500 ms", "1 second", "1.5 seconds", "3 seconds", "1 second 500 ms"]
# time stamps are in ticks of 0.5 s (gen/event_streams.py), so these deadlines fall on, between
# and beyond ticks
STRATEGY_SETS = {"all": ("", "ALL", "ANY"), "others": ("NEXT", "LAST", "MAX", "STRICT")}


def _where(parts, tail=None) -> str:
    """The WHERE clause `(formula) ; <tail>`, tail defaulting to `ABSENT(atomic) FOR d`."""
    tail = tail if tail is not None else "ABSENT(%s) FOR %s" % (parts["atomic"], parts["d"])
    return "%s (%s) ; %s" % (parts["head"], parts["formula"], tail)


@st.composite
def deadline_cases(draw, schema: bool, strategies, with_parts=False):
    # half of the formulas have absences between patterns too
    prof = gen.profile("absent_core", schema, windows=("time",), window_required=True, partition=True,
                       strategies=strategies, absent=draw(st.booleans(), label="absences inside"))
    case = draw(gen.cases(prof), label="base case")
    where = case.clauses["where"]  # [separator or comment] WHERE formula
    cut = where.upper().index("WHERE") + len("WHERE")
    parts = {"head": where[:cut], "formula": where[cut:].strip(),
             "atomic": " OR ".join(draw(st.lists(st.sampled_from(ATOMICS), min_size=1, max_size=3),
                                        label="alternatives")),
             "d": draw(st.sampled_from(DEADLINES))}
    clauses = dict(case.clauses, where=_where(parts))
    case = dataclasses.replace(case, text=join_clauses(clauses), clauses=clauses, tree=None)
    return (case, parts) if with_parts else case


def _oracle(case, close):
    from oracle import OracleError, OracleEventError, evaluate

    try:
        return ("ok", evaluate(case.text, case.events, schema=case.schema, compat_ignore_strategy=case.compat,
                               close_deadlines=close, **case.run_kwargs()))
    except OracleEventError:
        return ("event",)
    except OracleError as e:
        return ("static", e.code)


def _engine(case, close):
    try:
        q = ceql.compile(case.text, case.schema, compat_ignore_strategy=case.compat)
    except ceql.CeqlInternalError:
        raise
    except ceql.CeqlError as e:
        return ("static", e.code)
    try:
        matches = q.run(case.events, close_deadlines=close, **case.engine_kwargs())
    except ceql.CeqlEventError:
        return ("event",)
    gen.check_match_events(matches, case.events)
    return ("ok", as_triples(matches))


def _engine_arrow(case, close):
    """The same through ``run_arrow`` (the Arrow table's rows as triples)."""
    q = ceql.compile(case.text, case.schema, compat_ignore_strategy=case.compat)
    try:
        table = q.run_arrow(case.events, close_deadlines=close, **case.engine_kwargs())
    except ceql.CeqlEventError:
        return ("event",)
    assert table.column("match_id").to_pylist() == list(range(table.num_rows))
    return ("ok", [(r["start"], r["end"], tuple(r["positions"])) for r in table.to_pylist()])


def _compare(case, oracle_out, engine_out):
    assert oracle_out[0] == engine_out[0], "oracle %r, engine %r\n%r" % (oracle_out, engine_out, case)
    if oracle_out[0] == "static":
        assert oracle_out[1] == engine_out[1], "oracle %r, engine %r\n%r" % (oracle_out, engine_out, case)
    if oracle_out[0] != "ok":
        return
    res = oracle_out[1]
    try:
        check_against(engine_out[1], res.matches(), res.limit)
    except AssertionError as e:
        raise AssertionError("%s\nengine: %s\noracle: %s\n%r" % (e, engine_out[1], res.matches(), case)) from None


@pytest.mark.parametrize("schema", MODES)
@pytest.mark.parametrize("strategies", sorted(STRATEGY_SETS))
@SETTINGS
@_seeded
@given(data=st.data())
def test_deadline_run_against_oracle(strategies, schema, data):
    case = data.draw(deadline_cases(schema, STRATEGY_SETS[strategies]), label="case")
    note(repr(case))
    for close in (False, True):
        oracle_out = _oracle(case, close)
        assert oracle_out[0] != "static", "generator produced an ill-formed query: %s\n%r" % (oracle_out, case)
        if oracle_out[0] == "ok":
            event("close=%s: %s" % (close, "non-empty" if oracle_out[1].outputs else "empty"))
        _compare(case, oracle_out, _engine(case, close))
        if oracle_out[0] != "static":
            _compare(case, oracle_out, _engine_arrow(case, close))


def _time(event, case):
    """The event's time stamp in the unit advance_watermark takes (the time field's), or None
    (a declared primary_time is in nanoseconds, not in the time unit: no watermark then)."""
    if case.time_field is not None:
        return event.get(case.time_field)
    return None


@pytest.mark.parametrize("schema", MODES)
@pytest.mark.parametrize("strategies", sorted(STRATEGY_SETS))
@SETTINGS
@_seeded
@given(data=st.data())
def test_deadline_stream_watermark_snapshot(strategies, schema, data):
    case = data.draw(deadline_cases(schema, STRATEGY_SETS[strategies]), label="case")
    note(repr(case))
    oracle_out = _oracle(case, True)
    if oracle_out[0] != "ok":
        return
    q = ceql.compile(case.text, case.schema, compat_ignore_strategy=case.compat)
    s = q.stream(**case.engine_kwargs())
    got = []
    evs = case.events
    i = 0
    try:
        while i < len(evs):
            n = data.draw(st.integers(1, 4), label="chunk")
            got += s.push_many(evs[i:i + n])
            i += n
            if i < len(evs) and data.draw(st.integers(0, 2), label="watermark") == 0:
                # a watermark no later than every event still to come (none becomes late)
                times = [_time(e, case) for e in evs[i:]]
                if times and all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in times):
                    got += s.advance_watermark(min(times))
            if data.draw(st.integers(0, 5), label="snapshot") == 0:
                s = ceql.Stream.restore(ceql.compile(case.text, case.schema, compat_ignore_strategy=case.compat),
                                        s.snapshot())
        got += s.close_deadlines()
    except ceql.CeqlEventError:
        return  # data errors are compared by the run() test
    assert s.waiting == 0
    res = oracle_out[1]
    triples = as_triples(got)
    # the union of every call's output is the closed output (watermarks fire some earlier)
    if res.limit is None:
        assert sorted(triples) == sorted(res.matches()), "stream %s\noracle %s\n%r" % (triples, res.matches(), case)
    else:
        check_against(sorted(triples, key=lambda t: (t[1], t[0], t[2])), res.matches(), res.limit)


@pytest.mark.parametrize("schema", MODES)
@settings(SETTINGS, max_examples=EXAMPLES // 2)
@_seeded
@given(data=st.data())
def test_deadline_static_errors(schema, data):
    """FOR misplaced (E0303) and missing requirements (E0304) on both sides."""
    case, parts = data.draw(deadline_cases(schema, ("",), with_parts=True), label="case")
    mutation = data.draw(st.sampled_from(["consume", "events window", "inner for", "no for", "double"]))
    clauses = dict(case.clauses)
    absent = "ABSENT(%s)" % parts["atomic"]
    if mutation == "consume":
        clauses["consume"] = " CONSUME BY ANY"
    elif mutation == "events window":
        clauses["window"] = " WITHIN 3 EVENTS"
    elif mutation == "inner for":  # E0303
        clauses["where"] = _where(parts, "ABSENT(C) FOR 1 second ; B ; %s FOR %s" % (absent, parts["d"]))
    elif mutation == "no for":  # E0302: a trailing absence without a deadline
        clauses["where"] = _where(parts, absent)
    else:  # E0302: an absence right before the trailing one
        clauses["where"] = _where(parts, "ABSENT(B) ; %s FOR %s" % (absent, parts["d"]))
    text = join_clauses(clauses)
    case = dataclasses.replace(case, text=text)
    note(repr(case))
    oracle_out = _oracle(case, False)
    assert oracle_out[0] == "static", (oracle_out, case)
    _compare(case, oracle_out, _engine(case, False))
