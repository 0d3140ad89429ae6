"""Minimal reproductions of the engine bugs found by the differential tests
(tests/test_differential*.py), each asserting the spec-correct answer (the oracle's, checked by
``test_expectations_are_the_oracles``). Open bugs are ``xfail(strict=True)``: when a fix lands,
the test XPASSes, fails the suite, and the marker (and the matching entry of
``gen.KNOWN_BUGS``) must be removed. Fixed bugs stay here as plain regression tests.
"""

from __future__ import annotations

import pytest

import ceql
import gen
from conftest import as_triples, check_against
from oracle import OracleError, evaluate

E = lambda types: [{"type": t} for t in types]  # noqa: E731

CASES = {
    # docs/language.md#s3-6: (K, D) pairs compare K first. A run that binds its first event and one that
    # starts with NOT at the same event tie on K = {start}; D prefers the binding run only
    # if the keys stay equal. Here K = {0} against {0, 1}: the NOT start wins under NEXT.
    "next_not_start_wins_on_a_later_key": dict(
        query="SELECT NEXT * FROM S WHERE (A ; NOT(B)) OR (NOT(B) ; C)", schema=None,
        events=E("AC"), expected=[(0, 1, (1,))]),
    "next_not_start_wins_on_a_later_key_contiguous": dict(
        query="SELECT NEXT * FROM S WHERE (NOT(X) : (B OR (A OR A))) OR (C : NOT(C)) WITHIN 6 EVENTS",
        schema=None, events=E("XACA"), expected=[(2, 3, (3,))]),
    "next_not_start_wins_inside_iteration": dict(
        query="SELECT NEXT * FROM S WHERE (((NOT(B) OR B) OR (NOT(X) ; C)))+ WITHIN 6 EVENTS", schema=None,
        events=E("BCAB"), expected=[(0, 0, (0,)), (0, 1, (1,)), (0, 2, (1,)), (0, 3, (1, 3))]),
    "next_binding_start_wins_a_tie": dict(
        query="SELECT NEXT * FROM S WHERE (A ; NOT(B)) OR (NOT(B) ; NOT(B))", schema=None,
        events=E("AC"), expected=[(0, 1, (0,))]),
    # docs/language.md#s3-3: `S>T` is "as T, restricted to stream(u_k) = S"; open mode without FROM, the stream of
    # an input dict is its "stream" key (oracle note 9). The engine ignores the qualifier.
    "qualified_atom_other_stream": dict(
        query="SELECT * WHERE S>A", schema=None,
        events=[{"type": "A", "stream": "T"}, {"type": "A", "stream": "S"}],
        expected=[(1, 1, (1,))]),
    "qualified_filter_other_stream": dict(
        query="SELECT * WHERE A FILTER S>A[v > 1]", schema=None,
        events=[{"type": "A", "stream": "T", "v": 0}, {"type": "A", "stream": "S", "v": 0}],
        expected=[(0, 0, (0,))]),
    "qualified_select_other_stream": dict(
        query="SELECT S>A WHERE A", schema=None,
        events=[{"type": "A", "stream": "T"}, {"type": "A", "stream": "S"}],
        expected=[(0, 0, ()), (1, 1, (1,))]),
    # docs/language.md#s3-4: IN RANGE with a NULL operand is UNKNOWN, NOT UNKNOWN = UNKNOWN, a filter needs TRUE.
    "not_in_range_null_upper_bound": dict(
        query="SELECT * WHERE A FILTER A[NOT v IN RANGE(0, t)]", schema=None,
        events=[{"type": "A", "v": -1}],  # t absent: NULL
        expected=[]),
    "not_in_range_null_lower_bound": dict(
        query="SELECT * WHERE A FILTER A[NOT v IN RANGE(t, 0)]", schema=None,
        events=[{"type": "A", "v": 1, "t": None}],
        expected=[]),
    # debug assertion in runtime/step.rs (union-list invariant) on formulas with NOT
    "ulist_invariant_not_plus": dict(
        query="SELECT * WHERE NOT(A):+ ; NOT(B)", schema=None,
        events=E("XAXXBAX"),
        expected=[(0, 1, ()), (0, 2, ()), (0, 3, ()), (2, 3, ()), (0, 5, ()), (2, 5, ()), (3, 5, ()),
                  (4, 5, ()), (0, 6, ()), (2, 6, ()), (3, 6, ()), (4, 6, ())]),
    "ulist_invariant_not_or": dict(
        query="SELECT * WHERE (NOT(B) OR A) ; NOT(A)", schema=None,
        events=E("XXAX"),
        expected=[(0, 1, ()), (0, 3, ()), (1, 3, ()), (2, 3, ()), (2, 3, (2,))]),
    # docs/language.md#s1-2 "Supplied attributes that are not declared are ignored"; docs/language.md#s3-7 an event whose [a]
    # coordinate is NULL is dropped. Y is not declared by the schema, so its t is NULL.
    "undeclared_type_window_attr_not": dict(
        query="SELECT * WHERE NOT(A) WITHIN 2 [t]", schema=gen.SCHEMA,
        events=[{"type": "Y", "t": 0}],
        expected=[]),
    # docs/language.md#s1-2: an event is (stream, type, attrs, ts); the "type" and "stream" keys of an input dict are
    # its type and stream, not attributes (API: dicts with "type", optional "stream", attributes).
    # Open mode: the engine reads them as attributes.
    "undeclared_type_window_attr_late": dict(
        query="SELECT * WHERE A WITHIN 2 [t]", schema=gen.SCHEMA,
        events=[{"type": "Y", "t": 3}, {"type": "A", "t": 1}],
        expected=[(1, 1, (1,))]),
}


def _engine(name):
    c = CASES[name]
    q = ceql.compile(c["query"], c["schema"])
    return as_triples(q.run(c["events"]))


def _check(name):
    check_against(_engine(name), CASES[name]["expected"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_expectations_are_the_oracles(name):
    c = CASES[name]
    assert evaluate(c["query"], c["events"], schema=c["schema"]).matches() == sorted(
        c["expected"], key=lambda m: (m[1], m[0], m[2]))


# ---------------------------------------------------------------------------------------------


# fixed in the commit that added these cases: NEXT preferred a run binding its first event to
# a NOT start of the same event for good, instead of only while their keys K stay equal (docs/language.md#s3-6)
@pytest.mark.parametrize("name", ["next_not_start_wins_on_a_later_key", "next_not_start_wins_on_a_later_key_contiguous",
                                  "next_not_start_wins_inside_iteration", "next_binding_start_wins_a_tie"])
def test_next_compares_keys_before_the_start_mark(name):
    _check(name)


def test_strategies_on_disjunctions_of_not_starts_agree_with_the_oracle():
    """Random formulas `(NOT(t) ; φ) OR (a ; ψ)` (two runs starting at one event, one
    binding it and one not), the shape that found the bug above; 600 seeded cases."""
    import random

    rng = random.Random(20261122)
    types = "ABCX"

    def formula(depth):
        r = rng.random()
        if depth >= 3 or r < 0.3:
            return f"NOT({rng.choice(types)})" if rng.random() < 0.3 else rng.choice("ABC")
        if r < 0.55:
            return f"({formula(depth + 1)} ; {formula(depth + 1)})"
        if r < 0.75:
            return f"({formula(depth + 1)} OR {formula(depth + 1)})"
        if r < 0.85:
            return f"({formula(depth + 1)} : {formula(depth + 1)})"
        return f"({formula(depth + 1)})+"

    checked = 0
    for _ in range(600):
        strategy = rng.choice(["NEXT", "LAST", "MAX", "STRICT"])
        first, second = rng.choice([";", ":"]), rng.choice([";", ":"])
        body = f"(NOT({rng.choice(types)}) {first} {formula(1)}) OR ({rng.choice('ABC')} {second} {formula(1)})"
        query = f"SELECT {strategy} * FROM S WHERE {body} WITHIN 6 EVENTS"
        events = E(rng.choice(types) for _ in range(rng.randint(1, 6)))
        try:
            want = evaluate(query, events).matches()
        except OracleError:
            continue
        got = sorted(as_triples(ceql.compile(query).run(events)), key=lambda m: (m[1], m[0], m[2]))
        assert got == want, (query, [e["type"] for e in events])
        checked += 1
    assert checked > 500


# fixed in 30b94eb: open mode without FROM, S>T ignored the event's 'stream' key
@pytest.mark.parametrize("name", ["qualified_atom_other_stream", "qualified_filter_other_stream",
                                  "qualified_select_other_stream"])
def test_qualified_type_respects_stream_without_from(name):
    _check(name)


# fixed in 3d0671e: NOT e IN RANGE(lo, hi) with a NULL bound was TRUE instead of UNKNOWN (docs/language.md#s3-4)
@pytest.mark.parametrize("name", ["not_in_range_null_upper_bound", "not_in_range_null_lower_bound"])
def test_not_in_range_with_null_bound_is_unknown(name):
    _check(name)


# fixed in 3d0671e: the debug assertion `check_invariants(&e.ul) && e.ul.len() <= prev_len + 2`
# (runtime/step.rs) failed (CeqlInternalError in debug builds) on formulas with NOT
@pytest.mark.parametrize("name", ["ulist_invariant_not_plus", "ulist_invariant_not_or"])
def test_union_list_invariant_with_not(name):
    _check(name)


# fixed in 3d0671e: with a schema, WITHIN n [t] read t from an event of an undeclared type
# (undeclared attributes must be ignored, docs/language.md#s1-2, so the event has no coordinate and is dropped, docs/language.md#s3-7)
@pytest.mark.parametrize("name", ["undeclared_type_window_attr_not", "undeclared_type_window_attr_late"])
def test_window_attribute_of_undeclared_type_is_null(name):
    _check(name)


# fixed in b9e6af9: open mode read the input dict's 'type' / 'stream' keys as attributes (docs/language.md#s1-2);
# since the hardening issue such queries, which could never match, are refused at compile time
@pytest.mark.parametrize("query, code", [
    ("SELECT * WHERE A FILTER A[`type` = 'A']", "E0204"),
    ("SELECT * WHERE A ; B PARTITION BY [`stream`]", "E0207"),
    ("SELECT * WHERE A ; B WITHIN 3 [`type`]", "E0206"),
])
def test_type_and_stream_keys_are_not_attributes(query, code):
    with pytest.raises(ceql.CeqlNameError) as err:
        ceql.compile(query)
    assert err.value.code == code and "not an attribute" in err.value.message
    with pytest.raises(OracleError) as oracle_err:
        evaluate(query, [])
    assert oracle_err.value.code == code


# fixed in b9e6af9: Match.events of a match without data positions raised ArrowNotImplementedError
# when run() was given a pyarrow Table
def test_arrow_match_events_of_empty_match():
    pa = pytest.importorskip("pyarrow")
    q = ceql.compile("SELECT NONE WHERE A ; B")
    (m,) = q.run(pa.table({"type": ["A", "B"]}))
    assert (m.start, m.end, m.positions) == (0, 1, ())
    assert m.events == []


# fixed in 769e2dd: an invalid LIKE regular expression (E0101) was reported after name/type/scope errors
@pytest.mark.parametrize("query, schema", [
    ("SELECT * WHERE A FILTER zz[s LIKE '(']", None),  # engine: E0203
    ("SELECT * WHERE (A FILTER B[s LIKE '(']) ; B", None),  # engine: E0301
    ("SELECT * WHERE A FILTER A[v LIKE '(']", gen.SCHEMA),  # engine: E0300
    ("SELECT * WHERE Q FILTER Q[s LIKE '(']", gen.SCHEMA),  # engine: E0201
])
def test_invalid_regex_is_reported_first(query, schema):
    with pytest.raises(OracleError) as o:
        evaluate(query, [], schema=schema)
    assert o.value.code == "E0101"
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile(query, schema)
    assert e.value.code == "E0101"
