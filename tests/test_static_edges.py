"""Static checks at the edges of the grammar, found by an adversarial review
(2026-11-28): each case is decided by the text of docs/language.md, and the engine
and the oracle (tests/oracle) are both held to it.

* `*` listed twice in a SELECT list (docs/language.md#s2-2: `*` goes with measures only, once);
* `-9223372036854775808`, the one integer literal beyond 64 bits that a minus brings
  back (docs/language.md#s2-1), alike in comparisons and in sets;
* bare predicates whose type the query alone fixes as not boolean (docs/language.md#s3-4)."""

from __future__ import annotations

import pytest

import ceql
from oracle import OracleError, evaluate

MIN = -(2 ** 63)


def _engine_code(text: str):
    try:
        ceql.compile(text)
    except ceql.CeqlError as e:
        return e.code
    return None


def _oracle_code(text: str):
    try:
        evaluate(text, [])
    except OracleError as e:
        return e.code
    return None


@pytest.mark.parametrize("text, code", [
    ("SELECT *, * FROM S WHERE A", "E0100"),
    ("SELECT *, count(A) AS n, * FROM S WHERE A", "E0100"),
    ("SELECT *, A FROM S WHERE A", "E0100"),
    ("SELECT *, count(A) AS n FROM S WHERE A", None),
    ("SELECT * FROM S WHERE A FILTER A[v > -9223372036854775808]", None),
    ("SELECT * FROM S WHERE A FILTER A[v IN {-9223372036854775808..0}]", None),
    ("SELECT * FROM S WHERE A FILTER A[v IN {-9223372036854775808}]", None),
    ("SELECT * FROM S WHERE A FILTER A[v = - -9223372036854775808]", None),
    ("SELECT * FROM S WHERE A FILTER A[v > 9223372036854775808]", "E0101"),
    ("SELECT * FROM S WHERE A FILTER A[v IN {9223372036854775808}]", "E0101"),
    ("SELECT * FROM S WHERE A FILTER A[v - 9223372036854775808 > 0]", "E0101"),
    ("SELECT * FROM S WHERE A FILTER A[v = -(9223372036854775808)]", "E0101"),
    ("SELECT * FROM S WHERE A FILTER A[v = - +9223372036854775808]", "E0101"),
    ("SELECT * FROM S WHERE A FILTER A[1]", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A['x']", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A[v + 1]", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A[-v]", "E0300"),
    ("SELECT * FROM S WHERE A ; B FILTER B[sum(A.v)]", "E0300"),
    ("SELECT * FROM S WHERE A ; B FILTER B[count(A)]", "E0300"),
    ("SELECT * FROM S WHERE A ; B FILTER B[first(A.v)]", None),
    ("SELECT * FROM S WHERE A FILTER A[v]", None),
])
def test_the_engine_and_the_oracle_give_the_code_of_the_spec(text, code):
    assert _oracle_code(text) == code
    assert _engine_code(text) == code


def test_minus_2_63_is_the_smallest_integer_in_both_forms():
    events = [{"type": "A", "v": MIN}, {"type": "A", "v": MIN + 1}, {"type": "A", "v": 0}]
    for text, positions in [
        ("SELECT * FROM S WHERE A FILTER A[v = -9223372036854775808]", [(0,)]),
        ("SELECT * FROM S WHERE A FILTER A[v > -9223372036854775808]", [(1,), (2,)]),
        ("SELECT * FROM S WHERE A FILTER A[v IN {-9223372036854775808..-9223372036854775807}]", [(0,), (1,)]),
    ]:
        assert [m.positions for m in ceql.compile(text).run(events)] == positions
        assert sorted(p for ms in evaluate(text, events).outputs.values() for _, p in ms) == positions


def test_the_negation_of_minus_2_63_overflows_to_null():
    # docs/language.md#s3-4: an overflowing arithmetic result is NULL, and a comparison with NULL is UNKNOWN.
    text = "SELECT * FROM S WHERE A FILTER A[v = - -9223372036854775808]"
    events = [{"type": "A", "v": MIN}, {"type": "A", "v": 2 ** 63 - 1}]
    assert ceql.compile(text).run(events) == []
    assert not evaluate(text, events).outputs
