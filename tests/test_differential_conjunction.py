"""Randomized differential tests of the conjunction ``ψ1 AND ψ2`` (docs/language.md#s3-3c)
against the brute-force oracle, which implements the written rule directly (one valuation of
each side with disjoint data, over the hull of their intervals).

The queries come from ``tests/gen`` with the ``conjunction`` profiles (tests/gen/conjunction.py):
half of the formulas are rooted at a conjunction (n-ary, the paper's partial sequences,
absence chains as operands, under ``+``/``:+``/``AS``/``FILTER``, inside ``;`` and ``:``), and
``AND`` is also one of the random operators everywhere below, mixed with ``;``, ``:``,
``OR``, ``+``, ``:+``, ``AS``, ``NOT`` and filters; the clauses vary projection, windows
(EVENTS, attribute and duration), ``PARTITION BY``, ``CONSUME BY`` and ``LIMIT``. Each
strategy set gets its own test; captures on (valuations, docs/language.md#s3-2a) and stream
pushes with a snapshot/restore round trip reuse the checks of
tests/test_differential_captures.py and tests/test_differential_stream.py.

``CEQL_CONJUNCTION_EXAMPLES`` examples per test and mode (default 50: 13 tests x 2 modes, two
of them with twice as many, 1,300 cases, about 80 s on a shared 2-core machine).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gen
import test_differential
from gen.differential import STRATEGY_SETS
from test_differential import MODES, _seeded, differential
from test_differential_captures import _differential as captures_differential
from test_differential_stream import _check_stream

EXAMPLES = int(os.environ.get("CEQL_CONJUNCTION_EXAMPLES", "50"))
SETTINGS = settings(test_differential.SETTINGS, max_examples=EXAMPLES)


@pytest.mark.parametrize("schema", MODES)
@pytest.mark.parametrize("strategies", sorted(STRATEGY_SETS))
@SETTINGS
@_seeded
@given(data=st.data())
def test_conjunction_against_oracle(strategies, schema, data):
    prof = gen.profile("conjunction", schema, strategies=STRATEGY_SETS[strategies])
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@settings(SETTINGS, max_examples=2 * EXAMPLES)
@_seeded
@given(data=st.data())
def test_conjunction_core(schema, data):
    """Smaller formulas over longer streams, every strategy, projection and LIMIT: most cases
    have matches (the feature-rich tests above mostly check that nothing is emitted)."""
    prof = gen.profile("conjunction_core", schema, strategies=gen.ALL_STRATEGIES)
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_conjunction_with_absence(schema, data):
    """`l ; ABSENT(β) ; r` anywhere in the formula, and as a conjunction's operand."""
    prof = gen.profile("conjunction", schema, absent=True, strategies=gen.ALL_STRATEGIES)
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_conjunction_multi_stream(schema, data):
    """FROM S1, S2 with S1>A / S2>A atoms on both sides of AND."""
    prof = gen.profile("conjunction", schema, multi_stream=True, other_stream=False, strategies=gen.ALL_STRATEGIES)
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@settings(SETTINGS, max_examples=2 * EXAMPLES)
@_seeded
@given(data=st.data())
def test_conjunction_captures(schema, data):
    """Captures on: the valuations μ1 ∪ μ2 themselves (two valuations of one complex event,
    `A AS x AND A AS y`, are two outputs), every strategy."""
    prof = gen.profile("conjunction", schema, strategies=gen.ALL_STRATEGIES)
    captures_differential(data.draw(gen.cases(prof), label="case"), data)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_conjunction_stream_chunked(schema, data):
    prof = gen.profile("conjunction", schema, strategies=gen.ALL_STRATEGIES)
    _check_stream(data.draw(gen.cases(prof), label="case"), data, snapshot=False)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_conjunction_stream_snapshot_restore(schema, data):
    prof = gen.profile("conjunction", schema, strategies=gen.ALL_STRATEGIES)
    _check_stream(data.draw(gen.cases(prof), label="case"), data, snapshot=True)
