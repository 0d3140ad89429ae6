"""The brute-force oracle reproduces every test vector of docs/language.md#s7, plus the worked examples
of [FCEP] on Figure 1 quoted in the spec."""

import pytest

import vectors
from oracle import evaluate, OracleError


def run(v, **kw):
    return evaluate(v["query"], v["events"], schema=v["schema"], time_field=v.get("time_field"), **kw)


@pytest.mark.parametrize("v", vectors.VECTORS, ids=[v["id"] for v in vectors.VECTORS])
def test_vector(v):
    if "error" in v:
        with pytest.raises(OracleError) as ei:
            run(v)
        assert ei.value.code == v["error"]
        return
    res = run(v)
    assert res.matches() == v["expected"]
    assert res.limit == v["limit"]
    # outputs are keyed by end position and hold (start, data) pairs
    for j, o in res.outputs.items():
        assert o and all(isinstance(d, tuple) for (_, d) in o)
    assert sorted((s, j, d) for j, o in res.outputs.items() for (s, d) in o) == sorted(v["expected"])


@pytest.mark.parametrize("v", [v for v in vectors.VECTORS if v["phase"] == "later"],
                         ids=[v["id"] for v in vectors.VECTORS if v["phase"] == "later"])
def test_strategy_vectors_compat_mode_give_all(v):
    """compat_ignore_strategy=True evaluates the query as ALL (CORE C++ behaviour)."""
    q_all = v["query"]
    for s in ("STRICT ", "NEXT ", "LAST ", "MAX "):
        q_all = q_all.replace("SELECT " + s, "SELECT ")
    ref = evaluate(q_all, v["events"], schema=v["schema"]).matches()
    assert run(v, compat_ignore_strategy=True).matches() == ref


def test_vectors_without_schema_where_possible():
    """Schema-less mode (docs/language.md#s1-1a): the same dicts give the same results (attributes present)."""
    for v in vectors.VECTORS:
        if "error" in v or v["id"] in ("V17", "V18", "V54"):
            continue  # these rely on attributes being *declared* but absent (NULL)
        res = evaluate(v["query"], v["events"], time_field=v.get("time_field"))
        assert res.matches() == v["expected"], v["id"]


# ---------------------------------------------------------------- [FCEP] worked examples

FIG1 = vectors.FIG1_EVENTS


def fig1(strategy, phi):
    v = vectors.BY_ID["V25"]
    q = "SELECT %s * FROM S WHERE %s" % (strategy, phi)
    return evaluate(q, v["events"], schema=vectors.FIG1_SCHEMA).matches()


def test_next_phi3():
    assert fig1("NEXT", vectors.PHI3) == [(3, 7, (3, 4, 6, 7))]


def test_last_phi3_and_max_phi3():
    assert fig1("LAST", vectors.PHI3) == [(3, 7, (3, 4, 6, 7))]
    assert fig1("MAX", vectors.PHI3) == [(3, 7, (3, 4, 6, 7))]


def test_last_phi1():
    assert fig1("LAST", vectors.PHI1) == [(1, 2, (1, 2)), (5, 8, (5, 8))]


def test_max_phi1_contains_both_end_8():
    got = fig1("MAX", vectors.PHI1)
    assert {(1, 8, (1, 8)), (5, 8, (5, 8))} <= set(got)


def test_strict_phi1():
    assert fig1("STRICT", vectors.PHI1) == [(1, 2, (1, 2))]


def test_limit_vectors_pre_limit_sets():
    for vid, n in (("V60", 1), ("V61", 0)):
        v = vectors.BY_ID[vid]
        res = run(v)
        assert res.limit == n
        assert res.matches() == v["expected"]
