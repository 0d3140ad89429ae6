"""Randomized tests of ``describe()["relevant_types"]`` (docs/language.md#s5-7): when the
engine says only events of some types can change the result, the engine run on the
stream without the other events must give the oracle's complex events over the whole
stream (positions mapped back), for every strategy, windows, PARTITION BY, CONSUME BY,
NOT, ABSENT, AND, projection, several streams and filters between events (a query
with LIMIT reports no relevant types: which matches it keeps follows an order).

The oracle knows nothing of relevance: it evaluates the whole stream, so a type the
engine wrongly calls irrelevant shows up as a lost or an extra complex event.

Cases whose time stamps go backwards are skipped (the claim is for an input in time
order: an event behind another is late, and dropping the other changes that).
``CEQL_RELEVANCE_EXAMPLES`` examples per test (default 300).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

import ceql
import gen
from conftest import check_against
from gen.correlation import correlation_cases

EXAMPLES = int(os.environ.get("CEQL_RELEVANCE_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])

AREAS = ["mixed", "core", "not", "strategies", "partition", "consume_limit", "windows", "multi_stream",
         "long_streams", "projection", "absent", "conjunction", "long"]


def oracle_outcome(case):
    from oracle import OracleError, OracleEventError, evaluate

    kwargs = case.run_kwargs() if hasattr(case, "run_kwargs") else {}
    try:
        return evaluate(case.text, case.events, schema=case.schema,
                        compat_ignore_strategy=getattr(case, "compat", False), **kwargs)
    except (OracleError, OracleEventError):
        return None


def check_dropping_irrelevant_types(case) -> None:
    """The engine over the relevant events equals the oracle over all of them."""
    note(repr(case))
    if getattr(case, "late", None) is not None:
        event("skipped: late events dropped")
        return
    try:
        q = ceql.compile(case.text, case.schema, compat_ignore_strategy=getattr(case, "compat", False))
    except ceql.CeqlError:
        event("skipped: static error")
        return
    relevant = q.describe()["relevant_types"]
    if relevant is None:
        event("every type relevant")
        return
    expected = oracle_outcome(case)
    if expected is None:
        event("skipped: the oracle raised")
        return
    kept = [i for i, e in enumerate(case.events) if e.get("type") in relevant]
    event("dropped events" if len(kept) < len(case.events) else "nothing to drop")
    kwargs = case.engine_kwargs() if hasattr(case, "engine_kwargs") else {}
    got = q.run([case.events[i] for i in kept], **kwargs)
    mapped = [(kept[m.start], kept[m.end], tuple(kept[p] for p in m.positions)) for m in got]
    try:
        check_against(mapped, expected.matches(), expected.limit)
    except AssertionError as e:
        raise AssertionError(f"{e}\nrelevant: {relevant}\nengine (mapped): {mapped}\n"
                             f"oracle: {expected.matches()}\n{case!r}") from None


@pytest.mark.parametrize("schema", [pytest.param(False, id="open"), pytest.param(True, id="schema")])
@pytest.mark.parametrize("area", AREAS)
@SETTINGS
@given(data=st.data())
def test_irrelevant_events_change_nothing(area, schema, data):
    prof = gen.profile(area, schema)
    case = data.draw(gen.cases(prof), label="case")
    assume(not prof.static_error)
    check_dropping_irrelevant_types(case)


@SETTINGS
@given(case=correlation_cases())
def test_irrelevant_events_change_nothing_with_filters_between_events(case):
    check_dropping_irrelevant_types(case)


@pytest.mark.parametrize("text, relevant", [
    ("SELECT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] WITHIN 5 seconds", ["COLD", "HOT"]),
    ("SELECT NEXT * FROM S WHERE HOT ; (COLD OR B)+ ; A", ["A", "B", "COLD", "HOT"]),
    ("SELECT * FROM S WHERE HOT ; ABSENT(X) ; COLD", ["COLD", "HOT", "X"]),
    ("SELECT * FROM S WHERE HOT : COLD", None),  # the run dies on any event between
    ("SELECT STRICT * FROM S WHERE HOT ; COLD", None),
    ("SELECT * FROM S WHERE HOT ; NOT(X) ; COLD", None),  # NOT(X) reads an event of any other type
    ("SELECT * FROM S WHERE HOT ; COLD:+ ; A", None),
    ("SELECT * FROM S WHERE HOT ; COLD WITHIN 10 EVENTS", None),
    ("SELECT * FROM S WHERE HOT ; COLD WITHIN 5 [ts]", None),
    # Which match LIMIT keeps follows the enumeration order, which other events change:
    # over A B X B A, A ; (B OR (B ; A)) LIMIT 1 kept {0, 1, 4}, and {0, 3, 4} without the X.
    ("SELECT * FROM S WHERE A ; (B OR (B ; A)) LIMIT 1", None),
    ("SELECT * FROM S WHERE HOT ; ABSENT(COLD) FOR 2 seconds WITHIN 5 seconds", None),
    ("SELECT * FROM S WHERE HOT AS a ; ABSENT(X AS x FILTER x[v = a.v]) ; COLD", None),
])
def test_relevant_types_of_known_queries(text, relevant):
    assert ceql.compile(text).describe()["relevant_types"] == relevant


def test_declared_types_stay_relevant():
    """An event of a declared type is checked against its declaration (a wrongly typed
    value is an error) even when no run uses it, so it is not dropped."""
    schema = "CREATE STREAM S { EVENT A { v:int }, EVENT B { v:int }, EVENT C { v:int } }"
    q = ceql.compile("SELECT * FROM S WHERE A ; B", schema)
    assert q.describe()["relevant_types"] == ["A", "B", "C"]
    with pytest.raises(ceql.CeqlEventError):
        q.run([{"type": "A", "v": 1}, {"type": "C", "v": "text"}, {"type": "B", "v": 2}])
