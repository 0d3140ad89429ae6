"""Randomized differential tests of equalities between variables routed by key
(docs/language.md#s3-4b): random queries of ``tests/gen/routing.py`` (routable and not, under
every strategy, projection, PARTITION BY, WITHIN, CONSUME BY, LIMIT) over streams whose key
attributes mix integers, doubles, -0.0, NaN and NULL, against the oracle, which tests every
equality on every valuation and knows nothing of routing. Through ``Query.run`` over dicts
(captures off and on), ``Query.run`` over an Arrow table, and a ``Stream`` fed in chunks with a
``snapshot()`` / ``restore()`` in the middle.

The engine may refuse with E0500 what it does not evaluate yet (a residual test under
NEXT/LAST/MAX/STRICT, ...); everything else must agree with the oracle exactly. A routed query
under NEXT/LAST/MAX has no residual test left and must be evaluated (this is where routing must
leave the candidate set of docs/language.md#s3-9 unchanged).

Examples: ``CEQL_ROUTING_EXAMPLES`` (default 500) per test, 4 tests: 2,000 cases (about 40 s).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import ceql
from conftest import as_triples, check_against
from gen.arrow_input import to_arrow
from gen.routing import ROUTABLE, routing_cases
from test_differential_captures import check_valuations, valuation

EXAMPLES = int(os.environ.get("CEQL_ROUTING_EXAMPLES", "500"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def oracle(case, events=None, captures=False):
    """("static", code) | ("event",) | ("ok", OracleResult)."""
    from oracle import OracleError, OracleEventError, evaluate

    try:
        return ("ok", evaluate(case.text, case.events if events is None else events, schema=case.schema,
                               captures=captures))
    except OracleEventError:
        return ("event",)
    except OracleError as e:
        return ("static", e.code)


def _compiled(case):
    note(repr(case))
    o = oracle(case)
    try:
        q = ceql.compile(case.text, case.schema)
    except ceql.CeqlError as e:
        if e.code == "E0500":
            assert o[0] != "static", "E0500 for a query the oracle rejects with %s" % o[1]
            assert "not supported yet" in str(e), str(e)
            event("refused (E0500)")
            return None, o
        assert o[0] == "static" and o[1] == e.code, "oracle: %s, engine: %s" % (o, e.code)
        event("static error")
        return None, o
    assert o[0] != "static", "the oracle rejects with %s, the engine accepts" % (o,)
    routed = bool(q.describe()["routed_by"])
    event("routed" if routed else "not routed")
    strategy = q.describe()["strategy"]
    if routed and strategy in ("NEXT", "LAST", "MAX"):
        event("routed under %s" % strategy)
    return q, o


def _run(q, events):
    try:
        return ("ok", as_triples(q.run(events)))
    except ceql.CeqlEventError as e:
        return ("event", str(e))


@given(case=routing_cases())
@SETTINGS
def test_run_agrees_with_the_oracle(case):
    q, o = _compiled(case)
    if q is None:
        return
    got = _run(q, case.events)
    assert got[0] == o[0], "engine: %s, oracle: %s" % (got, o[0])
    if o[0] == "ok":
        event("non-empty output" if o[1].outputs else "empty output")
        if o[1].outputs and q.describe()["routed_by"]:
            event("routed, non-empty output")
        check_against(got[1], o[1].matches(), o[1].limit)


@given(case=routing_cases(strategies=("NEXT", "LAST", "MAX", "NEXT", "LAST", "MAX", "ALL"), residual=False,
                          shapes=ROUTABLE))
@SETTINGS
def test_strategies_over_routed_equalities_agree_with_the_oracle(case):
    """NEXT, LAST and MAX choose among the valuations that pass the filters: routed, the
    equalities must leave that set unchanged (docs/language.md#s3-4b)."""
    test_run_agrees_with_the_oracle.hypothesis.inner_test(case)


@given(case=routing_cases(), rnd=st.randoms(use_true_random=False))
@SETTINGS
def test_captures_and_arrow_input_agree_with_the_oracle(case, rnd):
    q, o = _compiled(case)
    if q is None or o[0] != "ok":
        return
    oc = oracle(case, captures=True)
    ms = q.run(case.events, captures=True)
    check_valuations([valuation(m) for m in ms], oc[1].matches(), oc[1].limit)
    # Arrow: a column mixing integers and doubles becomes a double column (the oracle reads
    # the table's rows); NaN stays NaN (Arrow tells it from null).
    table = to_arrow(case.events, rnd) if case.events else None
    if table is None:
        return
    oa = oracle(case, events=table.to_pylist())
    got = _run(q, table)
    assert got[0] == oa[0], "engine over Arrow: %s, oracle: %s" % (got, oa[0])
    if oa[0] == "ok":
        check_against(got[1], oa[1].matches(), oa[1].limit)


@given(case=routing_cases(), data=st.data())
@SETTINGS
def test_stream_with_snapshot_and_restore(case, data):
    q, o = _compiled(case)
    if q is None or o[0] != "ok":
        return
    evs = case.events
    expected = as_triples(q.run(evs))
    check_against(expected, o[1].matches(), o[1].limit)
    s = q.stream()
    cut = data.draw(st.integers(0, len(evs)), label="snapshot at")
    out = []
    i = 0
    while i < cut:
        k = data.draw(st.integers(1, cut - i), label="chunk")
        out += as_triples(s.push_many(evs[i:i + k]))
        i += k
    blob = s.snapshot()
    s2 = ceql.Stream.restore(ceql.compile(case.text, case.schema), blob)
    for ev in evs[cut:]:
        out += as_triples(s2.push(ev))
    assert out == expected, "stream with a restore at %d differs from run\n%r" % (cut, case)


# ------------------------------------------------------------------ hand-picked cases

Q2 = "SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND country != a.country] WITHIN 1 hour"


def test_query_2_is_routed_and_says_so():
    q = ceql.compile(Q2)
    d = q.describe()
    assert d["routed_by"] == [("S>LOGIN", "user")]
    assert d["partitioned"] is False and d["partition_by"] == []
    assert "routed by     S>LOGIN.user" in q.explain()
    assert ceql.compile("SELECT * FROM S WHERE A ; B FILTER B[v > A.v]").describe()["routed_by"] == []


def test_a_routed_query_under_next_is_evaluated():
    # Without routing the equality is a residual test, which NEXT refuses (E0500).
    q = ceql.compile("SELECT NEXT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 5 EVENTS")
    events = [{"type": "LOGIN", "user": u} for u in [1, 2, 1.0, 1, 2]]
    from oracle import evaluate

    expected = evaluate(q.text, events).matches()
    assert expected == [(0, 2, (0, 2)), (0, 3, (0, 3)), (1, 4, (1, 4))]
    assert as_triples(q.run(events)) == expected


def test_what_routing_cannot_key_raises_an_event_error():
    q = ceql.compile("SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]")
    # A double of 2^53 or more equals several integers under `=`.
    with pytest.raises(ceql.CeqlEventError, match="cannot route by the double"):
        q.run([{"type": "LOGIN", "user": 2 ** 53 + 1}, {"type": "LOGIN", "user": float(2 ** 53)}])
    # A string meets numbers inside the window: `=` between them is a type error.
    with pytest.raises(ceql.CeqlEventError, match="cannot compare a string with a number"):
        q.run([{"type": "LOGIN", "user": 1}, {"type": "LOGIN", "user": "1"}])
    # The error names the attribute; the stream goes on without the refused event (which
    # takes no position).
    s = q.stream()
    s.push({"type": "LOGIN", "user": 7})
    with pytest.raises(ceql.CeqlEventError) as e:
        s.push({"type": "LOGIN", "user": "7"})
    assert e.value.field == "user"
    assert [(m.start, m.end) for m in s.push({"type": "LOGIN", "user": 7.0})] == [(0, 1)]
