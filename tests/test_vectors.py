"""Every test vector of docs/language.md#s7, run on the engine (with and without the
declared schema), compared with the expected sets parsed from that page (tests/vectors.py)."""

from __future__ import annotations

import pytest

import ceql
import vectors
from conftest import as_triples, check_against

CORE = [v for v in vectors.VECTORS if v["phase"] == "core"]
LATER = [v for v in vectors.VECTORS if v["phase"] == "later"]
# Vectors whose meaning depends on declared-but-absent attributes (NULL by declaration).
NEEDS_SCHEMA = {"V17", "V18", "V54"}


def run_vector(v, schema=True):
    q = ceql.compile(v["query"], v["schema"] if schema else None)
    return as_triples(q.run(v["events"], time_field=v.get("time_field")))


@pytest.mark.parametrize("v", CORE, ids=[v["id"] for v in CORE])
def test_core_vector_with_schema(v):
    if "error" in v:
        with pytest.raises(ceql.CeqlError) as e:
            ceql.compile(v["query"], v["schema"])
        assert e.value.code == v["error"]
        return
    check_against(run_vector(v), v["expected"], v.get("limit"))


@pytest.mark.parametrize("v", [v for v in CORE if v["id"] not in NEEDS_SCHEMA], ids=lambda v: v["id"])
def test_core_vector_without_schema(v):
    if "error" in v:
        with pytest.raises(ceql.CeqlError) as e:
            ceql.compile(v["query"])
        assert e.value.code == v["error"]
        return
    check_against(run_vector(v, schema=False), v["expected"], v.get("limit"))


@pytest.mark.parametrize("v", LATER, ids=[v["id"] for v in LATER])
def test_strategy_vector_with_schema(v):
    check_against(run_vector(v), v["expected"], v.get("limit"))


@pytest.mark.parametrize("v", LATER, ids=[v["id"] for v in LATER])
def test_strategy_vector_without_schema(v):
    check_against(run_vector(v, schema=False), v["expected"], v.get("limit"))


def _fig1(query_body, strategy):
    v = vectors.BY_ID["V25"]
    q = ceql.compile(f"SELECT {strategy} * FROM S WHERE {query_body}", v["schema"])
    return {m.positions for m in q.run(v["events"])}


def test_foundations_running_example_strategies():
    """The worked examples of [FCEP] stated by the issue: NEXT(φ3) = {3,4,6,7};
    LAST(φ1) = {5,8}; MAX(φ1) ⊇ {1,8}, {5,8}; STRICT(φ1) = {1,2}."""
    for s in ("NEXT", "LAST", "MAX"):
        assert _fig1(vectors.PHI3, s) == {(3, 4, 6, 7)}, s
    assert (5, 8) in _fig1(vectors.PHI1, "LAST") and (1, 8) not in _fig1(vectors.PHI1, "LAST")
    assert {(1, 8), (5, 8)} <= _fig1(vectors.PHI1, "MAX")
    assert _fig1(vectors.PHI1, "STRICT") == {(1, 2)}
