"""Randomized differential tests of filters between events inside an iteration
(docs/language.md#s3-4c): ``((A AS a ; B AS b) FILTER b[v > a.v])+`` tests the filter on each
iteration (re-binding, [FCEP]), and a valuation with several decompositions is one output if
one of them passes. Random queries of ``tests/gen/correlation.py`` over
:data:`gen.correlation.ITERATION_SHAPES` (nested ``+``, ``OR`` in the body, filters inside and
outside the ``+``), with every strategy, projection, PARTITION BY, WITHIN, CONSUME BY and
LIMIT, against the oracle (``tests/oracle/semantics.py``: ``⟦ψ+⟧`` from ``⟦ψ FILTER θ⟧``),
through ``Query.run`` (captures off and on) and a ``Stream`` fed in chunks with a
``snapshot()`` / ``restore()`` in the middle.

The engine may refuse with E0500 (never a wrong answer) a filter in an
iteration that can start with ``NOT(...)``, or on a variable also bound outside the filtered
formula; everything else must agree with the oracle exactly.

Examples: ``CEQL_ITERATION_EXAMPLES`` (default 300) per test, 3 tests: 900 cases.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ceql
from conftest import as_triples
from gen.correlation import ITERATION_SHAPES, correlation_cases
from test_differential_correlation import _agree_statically, check_captures_agree, check_run_agrees
from gen.differential import check_stream_with_restore

EXAMPLES = int(os.environ.get("CEQL_ITERATION_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CASES = correlation_cases(shapes=ITERATION_SHAPES, max_events=9)


@given(case=CASES)
@SETTINGS
def test_run_agrees_with_the_oracle(case):
    check_run_agrees(case)


@given(case=CASES)
@SETTINGS
def test_captures_agree_with_the_oracle(case):
    check_captures_agree(case)


@given(case=CASES, data=st.data())
@SETTINGS
def test_stream_with_snapshot_and_restore(case, data):
    q, o = _agree_statically(case)
    if q is None or o[0] != "ok":
        return
    check_stream_with_restore(case, q, data, as_triples)


def _run(text, evs, **kw):
    return sorted((m.start, m.end, m.positions) for m in ceql.compile(text).run(evs, **kw))


def test_the_sections_example():
    """docs/language.md#s3-4c: inside the +, each B is compared with its iteration's A;
    after the +, with every A of the match."""
    from oracle import evaluate

    evs = [{"type": "A", "v": 1}, {"type": "B", "v": 2}, {"type": "A", "v": 3}, {"type": "B", "v": 4}]
    inside = "SELECT * FROM S WHERE ((A AS a ; B AS b) FILTER b[v > a.v])+"
    after = "SELECT * FROM S WHERE (A AS a ; B AS b)+ FILTER b[v > a.v]"
    got_in, got_after = _run(inside, evs), _run(after, evs)
    assert (0, 3, (0, 1, 2, 3)) in got_in and (0, 3, (0, 1, 2, 3)) not in got_after
    assert (0, 3, (0, 3)) in got_in and (0, 3, (0, 3)) in got_after
    assert got_in == sorted(evaluate(inside, evs).matches())
    assert got_after == sorted(evaluate(after, evs).matches())


def test_decompositions_of_one_valuation_are_one_output():
    """((B AS b)+ FILTER b[v > PREV(v)])+ over B(2) B(3) B(1): {0,1,2} passes as the
    iterations {0,1} {2} and fails as {0} {1,2} or {0,1,2}: it is produced, once (the
    iteration marker is not reported, with captures on either)."""
    from oracle import evaluate

    evs = [{"type": "B", "v": 2}, {"type": "B", "v": 3}, {"type": "B", "v": 1}]
    text = "SELECT * FROM S WHERE ((B AS b)+ FILTER b[v > PREV(v)])+"
    got = _run(text, evs)
    assert got == sorted(evaluate(text, evs).matches())
    assert got.count((0, 2, (0, 1, 2))) == 1
    caps = ceql.compile(text).run(evs, captures=True)
    keys = [(m.start, m.end, tuple(sorted(m.captures.items()))) for m in caps]
    assert len(keys) == len(set(keys)) and all(set(m.captures) <= {"B", "b"} for m in caps)


@pytest.mark.parametrize("query,message", [
    ("SELECT * FROM S WHERE (NOT(C) ; (A AS a ; B AS b) FILTER b[v > a.v])+", "NOT"),
    ("SELECT * FROM S WHERE (NOT(C) ; A AS a ; B AS b FILTER b[v > a.v])+", "NOT"),
])
def test_what_cannot_be_cut_into_iterations_is_refused_with_a_caret(query, message):
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile(query)
    assert e.value.code == "E0500"
    assert "not supported yet" in str(e.value) and message in str(e.value)
    assert "^" in str(e.value)


def test_the_readme_example_on_the_stock_sample():
    """README, "Inside an iteration": rounds of a SELL then a BUY above that SELL."""
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "examples" / "stock" / "stock_sample.csv"
    with open(path) as f:
        trades = [dict(r, type=r.pop("event_type"), price=float(r["price"]), stock_time=int(r["stock_time"]))
                  for r in csv.DictReader(f)]
    tail = "FILTER s[name = 'INTC'] PARTITION BY [name] WITHIN 1 second"
    inside = ceql.compile("SELECT * FROM Stock WHERE ((SELL AS s ; BUY AS b) FILTER b[price > s.price])+ " + tail)
    after = ceql.compile("SELECT * FROM Stock WHERE (SELL AS s ; BUY AS b)+ FILTER b[price > s.price] "
                         + tail.replace("FILTER", "AND"))
    ms = inside.run(trades, time_field="stock_time", time_unit="ms", captures=True)
    other = {m.positions for m in after.run(trades, time_field="stock_time", time_unit="ms")}
    assert (len(ms), len(other)) == (6741, 5845)
    assert sum(m.positions not in other for m in ms) == 896
    m = next(m for m in ms if m.positions == (1898, 1908, 1960, 1966))
    assert m.captures["s"] == (1898, 1960) and m.captures["b"] == (1908, 1966)
