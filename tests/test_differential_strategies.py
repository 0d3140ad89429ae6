"""Randomized differential tests of the selection strategies (NEXT, LAST, MAX,
STRICT) against the brute-force oracle, which implements each strategy from its
definition (docs/language.md#s3-6) over all valuations with the same end.

The queries come from ``tests/gen`` with every feature switched on (projection,
windows, PARTITION BY, CONSUME BY, LIMIT, NOT, filters), in open mode and with a
declared schema. ``CEQL_STRATEGY_EXAMPLES`` examples per strategy and mode (default
1,000: 2,000 cases per strategy, 8,000 in all).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

import gen
import test_differential
from test_differential import differential

EXAMPLES = int(os.environ.get("CEQL_STRATEGY_EXAMPLES", "1000"))
SEED = test_differential.SEED
SETTINGS = settings(test_differential.SETTINGS, max_examples=EXAMPLES)


@pytest.mark.parametrize("schema", [pytest.param(False, id="open"), pytest.param(True, id="schema")])
@pytest.mark.parametrize("strategy", ["NEXT", "LAST", "MAX", "STRICT"])
@SETTINGS
@given(data=st.data())
def test_strategy_against_oracle(strategy, schema, data):
    prof = gen.profile("mixed", schema, strategies=(strategy,))
    differential(data.draw(gen.cases(prof), label="case"), prof)


if SEED is not None:
    test_strategy_against_oracle = seed(int(SEED))(test_strategy_against_oracle)
