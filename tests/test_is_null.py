"""``e IS [NOT] NULL`` (docs/language.md#s3-4): TRUE or FALSE, never UNKNOWN; NULL is a missing
attribute, a None, or arithmetic that is NULL; a NaN is a value. Expected values are derived by
hand from the spec; the oracle (written from the spec) is checked on the same cases, and the
differential generators (tests/gen/predicates.py, tests/gen/correlation.py) draw these forms too."""

from __future__ import annotations

import pyarrow as pa
import pytest

import ceql
from oracle import OracleError, OracleEventError, evaluate

EVENTS = [{"type": "A", "v": 1}, {"type": "A"}, {"type": "A", "v": None}, {"type": "A", "v": float("nan")},
          {"type": "A", "v": 2**62}]


@pytest.mark.parametrize("pred, want", [
    ("v IS NULL", [1, 2]),                       # missing and None; NaN is a value
    ("v IS NOT NULL", [0, 3, 4]),
    ("NOT (v IS NULL)", [0, 3, 4]),              # two-valued: NOT is exact
    ("v * 4 IS NULL", [1, 2, 4]),                # 2^64 overflows: NULL
    ("v / 0 IS NULL", [0, 1, 2, 3, 4]),          # a division by zero is NULL, for doubles too
    ("v IS NULL OR v > 1", [1, 2, 4]),           # NaN > 1 is UNKNOWN
    ("is IS NULL AND null IS NULL", [0, 1, 2, 3, 4]),  # IS and NULL are not reserved
    ("v is not null", [0, 3, 4]),                # any case
])
def test_is_null_on_one_event(pred, want):
    text = "SELECT * FROM S WHERE A FILTER A[%s]" % pred
    got = [m.start for m in ceql.compile(text).run(EVENTS)]
    assert got == want
    assert [m[0] for m in evaluate(text, EVENTS).matches()] == want
    table = pa.table({"type": ["A"] * 5, "v": pa.array([1.0, None, None, float("nan"), 2.0**62])})
    if "4 IS" not in pred:  # as doubles, 2^62 * 4 does not overflow
        assert [m.start for m in ceql.compile(text).run(table)] == want


def test_is_null_on_other_events():
    """y.attr, PREV and aggregates: b's PREV term is not tested on b's first event."""
    evs = [{"type": "A"}, {"type": "A", "v": 1}, {"type": "B", "v": 5}, {"type": "B"}, {"type": "B", "v": 7}]
    cases = {
        "A AS a ; B AS b FILTER b[a.v IS NULL]": [(0, 2), (0, 3), (0, 4)],
        "A AS a ; B AS b FILTER b[a.v IS NOT NULL AND v IS NOT NULL]": [(1, 2), (1, 4)],
        # end - start <= 2: b = {2}, {2}, {3}; b = {2, 3} fails (PREV of 3 is 5)
        "A ; (B AS b)+ FILTER b[PREV(v) IS NULL] WITHIN 2 EVENTS": [(0, 2), (1, 2), (1, 3)],
        "A AS a ; B FILTER B[max(a.v) IS NULL]": [(0, 2), (0, 3), (0, 4)],
    }
    for formula, want in cases.items():
        text = "SELECT * FROM S WHERE " + formula
        got = sorted({(m.start, m.end) for m in ceql.compile(text).run(evs)})
        assert got == want, formula
        assert sorted({m[:2] for m in evaluate(text, evs).matches()}) == want, formula


def test_the_expression_still_type_checks():
    schema = "CREATE STREAM S { EVENT A { v:int, s:string } }"
    with pytest.raises(ceql.CeqlTypeError):
        ceql.compile("SELECT * FROM S WHERE A FILTER A[s + 1 IS NULL]", schema)
    with pytest.raises(OracleError):
        evaluate("SELECT * FROM S WHERE A FILTER A[s + 1 IS NULL]", [], schema=schema)
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[s IS NULL]", schema)
    assert [m.start for m in q.run([{"type": "A", "v": 1}, {"type": "A", "s": "x"}])] == [0]
    with pytest.raises(ceql.CeqlEventError, match="field `s`"):
        ceql.compile("SELECT * FROM S WHERE A FILTER A[s + 1 IS NULL]").run([{"type": "A", "s": "x"}])
    with pytest.raises(OracleEventError):
        evaluate("SELECT * FROM S WHERE A FILTER A[s + 1 IS NULL]", [{"type": "A", "s": "x"}])


@pytest.mark.parametrize("text, expected", [
    ("SELECT * FROM S WHERE A FILTER A[v IS 1]", "expected NOT or NULL"),
    ("SELECT * FROM S WHERE A FILTER A[v IS NOT]", "expected NULL"),
])
def test_a_malformed_is_null_is_a_syntax_error(text, expected):
    with pytest.raises(ceql.CeqlSyntaxError, match=expected):
        ceql.compile(text)
