"""Randomized differential tests of absence between two patterns, ``ψ1 ; ABSENT(β) ; ψ2``
(docs/language.md#s3-3a), against the brute-force oracle, which implements the written
semantics directly (no position strictly between the two sides satisfies β).

The queries come from ``tests/gen`` with the ``absent`` profile: random formulas where a
``;`` is, half of the time, ``l ; ABSENT(atomic) ; r`` (nested anywhere: under ``+``, in
``OR`` branches, inside ``AS``/``FILTER``), with every other feature switched on (NOT,
filters, projection, windows, PARTITION BY, CONSUME BY, LIMIT). The strategies ALL/ANY and
NEXT/LAST/MAX/STRICT each get their own test; the streaming tests push random chunks and
make a snapshot/restore round trip (tests/test_differential_stream.py).

``CEQL_ABSENT_EXAMPLES`` examples per test and mode (default 120: 10 tests x 2 modes, one
of them with twice as many, 2,640 cases).
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
from test_differential_stream import _check_stream

EXAMPLES = int(os.environ.get("CEQL_ABSENT_EXAMPLES", "120"))
SETTINGS = settings(test_differential.SETTINGS, max_examples=EXAMPLES)


@pytest.mark.parametrize("schema", MODES)
@pytest.mark.parametrize("strategies", sorted(STRATEGY_SETS))
@SETTINGS
@_seeded
@given(data=st.data())
def test_absence_against_oracle(strategies, schema, data):
    prof = gen.profile("absent", schema, strategies=STRATEGY_SETS[strategies])
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@settings(SETTINGS, max_examples=2 * EXAMPLES)
@_seeded
@given(data=st.data())
def test_absence_core(schema, data):
    """Smaller formulas over longer streams, every strategy, projection and LIMIT: most
    cases have matches (the feature-rich tests above mostly check that nothing is emitted)."""
    prof = gen.profile("absent_core", schema, strategies=gen.ALL_STRATEGIES)
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_absence_deep_formulas(schema, data):
    """Depth 4 (several absences in one chain, absences inside iterations of absences)."""
    prof = gen.profile("absent", schema, max_depth=4, strategies=gen.ALL_STRATEGIES)
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_absence_multi_stream(schema, data):
    """FROM S1, S2 with S1>A / S2>A atoms inside and outside ABSENT."""
    prof = gen.profile("absent", schema, multi_stream=True, other_stream=False)
    differential(data.draw(gen.cases(prof), label="case"), prof)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_absence_stream_chunked(schema, data):
    prof = gen.profile("absent", schema, strategies=gen.ALL_STRATEGIES)
    _check_stream(data.draw(gen.cases(prof), label="case"), data, snapshot=False)


@pytest.mark.parametrize("schema", MODES)
@SETTINGS
@_seeded
@given(data=st.data())
def test_absence_stream_snapshot_restore(schema, data):
    prof = gen.profile("absent", schema, strategies=gen.ALL_STRATEGIES)
    _check_stream(data.draw(gen.cases(prof), label="case"), data, snapshot=True)
