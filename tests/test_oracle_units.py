"""Unit tests of the oracle: lexer/parser (docs/language.md#s2), predicate logic (docs/language.md#s3-4), static checks (docs/language.md#s4)
and a few pipeline rules (docs/language.md#s3-7 to #s3-10) on hand-checked examples."""

import math

import pytest

from oracle import evaluate, OracleError
from oracle.nodes import show
from oracle.parser import parse_query
from oracle.predicates import and3, or3, not3, eval_pred, eval_expr, arith
from oracle import nodes as N
from oracle.schema import parse_schema

import vectors

SCHEMA = vectors.DEFAULT_SCHEMA


def where(text):
    return show(parse_query("SELECT * FROM S WHERE " + text).where)


def pred(text):
    """Parse the predicate of `A[...]`."""
    q = parse_query("SELECT * FROM S WHERE A FILTER A[%s]" % text)
    return q.where.theta.pred


def P(text, **attrs):
    return eval_pred(pred(text), attrs)


def code_of(query, events=(), schema=SCHEMA, **kw):
    with pytest.raises(OracleError) as ei:
        evaluate(query, list(events), schema=schema, **kw)
    return ei.value.code


def ev(types):
    return [{"type": t} for t in types.split()]


# ============================================================ docs/language.md#s2-3 CEL precedence

@pytest.mark.parametrize("text,tree", [
    # the consequences list of docs/language.md#s2-3
    ("A ; B OR C", "((A ; B) OR C)"),
    ("A ; B AS x", "(A ; (B AS x))"),
    ("A OR B AS x", "(A OR (B AS x))"),
    ("A ; B FILTER A[v > 1]", "((A ; B) FILTER A[(v > 1)])"),
    ("A FILTER A[v > 1] ; B", "((A FILTER A[(v > 1)]) ; B)"),
    ("A : B ; C", "(A : (B ; C))"),
    # left associativity
    ("A ; B ; C", "((A ; B) ; C)"),
    ("A : B : C", "((A : B) : C)"),
    ("A OR B OR C", "((A OR B) OR C)"),
    ("A ; B : C", "((A ; B) : C)"),
    ("A OR B ; C", "(A OR (B ; C))"),
    ("A OR B : C", "(A OR (B : C))"),
    # postfix operators
    ("A ; B+", "(A ; (B+))"),
    ("A ; B:+ ; C", "((A ; (B:+)) ; C)"),
    ("A+ AS x", "((A+) AS x)"),
    ("A AS x+", "((A AS x)+)"),
    ("(A ; B)+", "((A ; B)+)"),
    ("A : NOT(B):+ : C", "((A : (NOT(B):+)) : C)"),
    ("A OR B FILTER A[v > 1]", "((A OR B) FILTER A[(v > 1)])"),
    ("A FILTER A[v > 1] FILTER A[v < 5]", "((A FILTER A[(v > 1)]) FILTER A[(v < 5)])"),
    ("A ; B AS x FILTER x[v > 1] ; C", "(((A ; (B AS x)) FILTER x[(v > 1)]) ; C)"),
    ("S>A ; B", "(S>A ; B)"),
    # NOT(atomic) with filters inside
    ("NOT(B FILTER B[v > 5] OR B[v < 2])", "NOT((B FILTER (B[(v > 5)] OR B[(v < 2)])))"),
    ("NOT(B FILTER B[v > 5] FILTER B[v < 9])", "NOT(((B FILTER B[(v > 5)]) FILTER B[(v < 9)]))"),
])
def test_cel_precedence(text, tree):
    assert where(text) == tree


@pytest.mark.parametrize("text,tree", [
    # an OR continues the filter only if a whole filter term follows
    ("A FILTER A[v > 1] OR B", "((A FILTER A[(v > 1)]) OR B)"),
    ("A FILTER A[v > 1] OR (B ; C)", "((A FILTER A[(v > 1)]) OR (B ; C))"),
    ("A FILTER A[v > 1] OR A[v < 0]", "(A FILTER (A[(v > 1)] OR A[(v < 0)]))"),
    ("A FILTER A[v > 1] OR (A[v < 0])", "(A FILTER (A[(v > 1)] OR A[(v < 0)]))"),
    # AND binds tighter than OR in filters
    ("A FILTER A[v = 1] OR A[v = 2] AND A[k = 3]", "(A FILTER (A[(v = 1)] OR (A[(v = 2)] AND A[(k = 3)])))"),
    ("A FILTER (A[v = 1] OR A[v = 2]) AND A[k = 3]", "(A FILTER ((A[(v = 1)] OR A[(v = 2)]) AND A[(k = 3)]))"),
    ("A FILTER S>A[v = 1]", "(A FILTER S>A[(v = 1)])"),
])
def test_filter_grouping(text, tree):
    assert where(text) == tree


@pytest.mark.parametrize("text,tree", [
    ("NOT v > 5 AND v > 2 OR v = 9", "(((NOT (v > 5)) AND (v > 2)) OR (v = 9))"),  # V16
    ("v = 1 OR v = 2 AND v = 3", "((v = 1) OR ((v = 2) AND (v = 3)))"),
    ("NOT NOT v = 1", "(NOT (NOT (v = 1)))"),
    ("NOT (v = 1 OR v = 2)", "(NOT ((v = 1) OR (v = 2)))"),
    ("(v = 1 OR v = 2) AND k = 3", "(((v = 1) OR (v = 2)) AND (k = 3))"),
    ("(v) > 1", "(v > 1)"),
    ("(v + 1) * 2 = 4", "(((v + 1) * 2) = 4)"),
    ("v + 2 * 3 - 4 / 2 % 3 > 0", "(((v + (2 * 3)) - ((4 / 2) % 3)) > 0)"),
    ("1 - 2 - 3 = v", "(((1 - 2) - 3) = v)"),
    ("-v * -2 > - - 1", "(((-v) * (-2)) > (-(-1)))"),
    ("v IN RANGE(1, k + 1)", "(v IN RANGE(1, (k + 1)))"),
    ("v NOT IN {1, -2, 3.5}", "(v NOT IN {1, -2, 3.5})"),
    ("v IN {-1..}", "(v IN {-1..})"),
    ("v IN {..10}", "(v IN {..10})"),
    ("v IN {1..10}", "(v IN {1..10})"),
    ("s IN {'a', \"b\"}", "(s IN {'a', 'b'})"),
    ("s LIKE 'x.*'", "(s LIKE 'x.*')"),
    ("v == 1 AND v <> 2", "((v = 1) AND (v != 2))"),
    ("TRUE", "True"),
    ("b = false", "(b = False)"),
    ("`TRUE` = 1", "(TRUE = 1)"),
])
def test_predicate_precedence(text, tree):
    assert show(pred(text)) == tree


# ============================================================ docs/language.md#s2-1 lexical structure

def test_keywords_case_insensitive_and_comments():
    q = parse_query("""select /* block */ * from S -- line comment
                       where A ; b as X FiLtEr X[v > 1] within 3 events consume by any limit 2""")
    assert show(q.where) == "((A ; (b AS X)) FILTER X[(v > 1)])"
    assert q.window == ("EVENTS", 3) and q.consume == "ANY" and q.limit == 2


def test_unterminated_block_comment_runs_to_end():
    q = parse_query("SELECT * FROM S WHERE A ; B /* never closed LIMIT 3")
    assert q.limit is None and show(q.where) == "(A ; B)"


def test_back_quoted_identifiers_and_strings():
    q = parse_query("SELECT * FROM `S` WHERE `A` AS `my``x` FILTER `my``x`[`select` = 'it''s' OR s = \"say \"\"hi\"\"\"]")
    assert q.from_streams == ["S"]
    assert show(q.where) == "((A AS my`x) FILTER my`x[((select = \"it's\") OR (s = 'say \"hi\"'))])"


def test_reserved_keyword_needs_back_quotes():
    assert code_of("SELECT * FROM S WHERE A AS select", schema=None) == "E0100"
    parse_query("SELECT * FROM S WHERE A AS `select`")


def test_double_literals():
    assert show(pred("v > 1.5 AND v < .5e1 AND v > 2.e-1")) == "(((v > 1.5) AND (v < 5.0)) AND (v > 0.2))"


@pytest.mark.parametrize("text", [
    "",
    "   -- nothing",
    "SELECT * FROM S WHERE A ; ; B",
    "SELECT * FROM S WHERE A B",
    "SELECT * FROM S WHERE A FILTER A[v > 1] AND ;",
    "SELECT * FROM S WHERE A LIMIT 1 SELECT * FROM S WHERE B",
    "SELECT * FROM S WHERE A;",
    "SELECT * FROM S",
    "SELECT FROM S WHERE A",
    "SELECT * FROM S WHERE A FILTER A[v > 1 > 2]",
    "SELECT * FROM S WHERE A FILTER A[v ! 1]",
    "SELECT * FROM S WHERE A FILTER A['unterminated]",
    "SELECT * FROM S WHERE NOT(A ; B)",
    "SELECT * FROM S WHERE A WITHIN 3",
    "SELECT * FROM S WHERE A WITHIN 3 WEEKS",
])
def test_syntax_errors(text):
    assert code_of(text, schema=None) == "E0100"


def test_literal_errors():
    assert code_of("SELECT * FROM S WHERE A FILTER A[v > 9223372036854775808]") == "E0101"
    assert code_of("SELECT * FROM S WHERE A FILTER A[s LIKE '(']") == "E0101"
    assert code_of("SELECT * FROM S WHERE A LIMIT 99999999999999999999") == "E0101"
    evaluate("SELECT * FROM S WHERE A FILTER A[v > 9223372036854775807]", [], schema=SCHEMA)


def test_windows_parse():
    assert parse_query("SELECT * WHERE A WITHIN 1 hours 30 minutes").window == ("TIME", 5400 * 10 ** 9)
    assert parse_query("SELECT * WHERE A WITHIN 1.5 HOURS").window == ("TIME", 5400 * 10 ** 9)
    assert parse_query("SELECT * WHERE A WITHIN 2 ms 1 day").window == ("TIME", 2 * 10 ** 6 + 86400 * 10 ** 9)
    assert parse_query("SELECT * WHERE A WITHIN 0.0000000015 seconds").window == ("TIME", 1)
    assert parse_query("SELECT * WHERE A WITHIN 5 [t]").window == ("ATTR", 5, "t")
    assert parse_query("SELECT * WHERE A PARTITION BY [k, w], [v]").partition == [["k", "w"], ["v"]]


def test_select_list_forms():
    assert parse_query("SELECT x, S>A, y[a, b] FROM S WHERE A").select == ["x", ("S", "A"), "y"]
    assert parse_query("SELECT NONE WHERE A").select == "NONE"
    assert parse_query("SELECT MAX * WHERE A").strategy == "MAX"


# ============================================================ docs/language.md#s3-4 three-valued logic

T, F, U = True, False, None


def test_kleene_tables():
    assert not3(T) is F and not3(F) is T and not3(U) is U
    assert and3(F, U) is F and and3(U, F) is F and and3(T, U) is U and and3(U, U) is U and and3(T, T) is T
    assert or3(T, U) is T and or3(U, T) is T and or3(F, U) is U and or3(U, U) is U and or3(F, F) is F


def test_null_comparisons_are_unknown():
    assert P("w > 1") is U
    assert P("NOT w > 1") is U
    assert P("w = w") is U
    assert P("w > 1 OR v = 0", v=0) is T
    assert P("w > 1 AND v = 1", v=0) is F
    assert P("w LIKE 'a'") is U
    assert P("w IN {1, 2}") is U
    assert P("w NOT IN {1, 2}") is U
    assert P("w IN RANGE(1, 2)") is U
    assert P("v IN RANGE(w, 2)", v=1) is U
    assert P("w + 1 > 0") is U
    assert P("b") is U


def test_arithmetic():
    assert eval_expr(pred("7 / 2 = 0").left, {}) == 3
    assert eval_expr(pred("-7 / 2 = 0").left, {}) == -3   # truncation toward zero
    assert eval_expr(pred("7 / -2 = 0").left, {}) == -3
    assert eval_expr(pred("-7 % 2 = 0").left, {}) == -1   # sign of the dividend
    assert eval_expr(pred("7 % -2 = 0").left, {}) == 1
    assert eval_expr(pred("7.0 / 2 = 0").left, {}) == 3.5
    assert eval_expr(pred("-7.5 % 2 = 0").left, {}) == -1.5
    assert eval_expr(pred("1 / 0 = 0").left, {}) is None
    assert eval_expr(pred("1 % 0 = 0").left, {}) is None
    assert eval_expr(pred("1.0 / 0 = 0").left, {}) is None
    assert eval_expr(pred("9223372036854775807 + 1 = 0").left, {}) is None  # overflow -> NULL
    assert eval_expr(pred("9223372036854775807 * 2 = 0").left, {}) is None
    assert eval_expr(pred("-9223372036854775807 - 2 = 0").left, {}) is None
    assert eval_expr(pred("v / -1 = 0").left, {"v": -2 ** 63}) is None
    assert eval_expr(pred("-v = 0").left, {"v": -2 ** 63}) is None
    assert eval_expr(pred("9223372036854775807 + 1.0 = 0").left, {}) == 2.0 ** 63
    assert arith("+", 1, 2) == 3 and isinstance(arith("+", 1, 2.0), float)
    assert P("v / 2 = 1", v=3) is T  # V15


def test_comparisons():
    assert P("v = 1", v=1.0) is T           # int and double compare numerically
    assert P("v < 2", v=1.5) is T
    assert P("v > 1", v=float("nan")) is U  # NaN behaves like NULL
    assert P("NOT v > 1", v=float("nan")) is U
    assert P("s = 'a'", s="a") is T and P("s != 'a'", s="b") is T
    assert P("b = TRUE", b=True) is T and P("b != true", b=False) is T
    assert P("b", b=True) is T and P("NOT b", b=True) is F and P("TRUE") is T and P("FALSE") is F


def test_like_is_unanchored_search():
    assert P("s LIKE 'b.r'", s="xbarx") is T
    assert P("s LIKE 'b.r'", s="BAR") is F
    assert P("s LIKE '^b.r$'", s="xbarx") is F
    assert P("s LIKE '^b.r$'", s="bar") is T
    assert P("s LIKE ''", s="") is T


def test_in_sets_and_ranges():
    assert P("v IN {1, 3}", v=3) is T and P("v IN {1, 3}", v=2) is F
    assert P("v IN {1, 3}", v=3.0) is T
    assert P("v NOT IN {..10}", v=11) is T and P("v NOT IN {..10}", v=10) is F
    assert P("v IN {-2..2}", v=-2) is T and P("v IN {-2..2}", v=2) is T and P("v IN {-2..2}", v=3) is F
    assert P("v IN {5..}", v=5) is T and P("v IN {5..}", v=4.5) is F
    assert P("s IN {'a', 'b'}", s="b") is T and P("s NOT IN {'a', 'b'}", s="c") is T
    assert P("v IN RANGE(2, 3)", v=2) is T and P("v IN RANGE(2, 3)", v=3) is T  # inclusive
    assert P("v IN RANGE(2, 3)", v=4) is F and P("NOT v IN RANGE(2, 3)", v=4) is T


def test_data_errors_without_schema():
    with pytest.raises(OracleError) as ei:
        evaluate("SELECT * WHERE A FILTER A[v > 1]", [{"type": "A", "v": "x"}])
    assert ei.value.code == "EVENT"
    # a NULL operand is UNKNOWN, not a type error
    assert evaluate("SELECT * WHERE A FILTER A[v > 1]", [{"type": "A", "v": None}, {"type": "A"}]).matches() == []


# ============================================================ docs/language.md#s4 static checks

@pytest.mark.parametrize("query,code", [
    ("SELECT * FROM T WHERE A", "E0200"),
    ("SELECT * FROM S WHERE Q ; B", "E0201"),
    ("SELECT * FROM S WHERE S>Q", "E0202"),
    ("SELECT * FROM S WHERE S2>A", "E0202"),
    ("SELECT * FROM S WHERE A FILTER q[v > 1]", "E0203"),
    ("SELECT q FROM S WHERE A", "E0203"),
    ("SELECT * FROM S WHERE A ; B FILTER B[zz = 'x']", "E0204"),
    ("SELECT * FROM S WHERE A AS B", "E0205"),
    ("SELECT * FROM S WHERE A ; B WITHIN 0 SECONDS", "E0206"),
    ("SELECT * FROM S WHERE A ; B WITHIN 3 [s]", "E0206"),
    ("SELECT * FROM S WHERE A PARTITION BY [zz]", "E0207"),
    ("SELECT * FROM S WHERE A FILTER A[v = 'x']", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A[s < 'b']", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A[s + 1 > 2]", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A[v LIKE 'x']", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A[v]", "E0300"),
    ("SELECT * FROM S WHERE A FILTER A[v IN {1, 'a'}]", "E0300"),
    ("SELECT * FROM S WHERE (A FILTER B[v > 5]) ; B", "E0301"),      # V44
    ("SELECT * FROM S WHERE A ; NOT(B) ; C FILTER B[v > 1]", "E0301"),
    ("SELECT * FROM S WHERE NOT(B FILTER C[v > 1]) ; C", "E0301"),
    ("SELECT * FROM S WHERE (A ; B AS x) ; (C FILTER x[v > 1])", "E0301"),
    ("SELECT * FROM S WHERE ABSENT(B) ; C", "E0302"),
    ("SELECT * FROM S WHERE A ; ABSENT(B)", "E0302"),
    ("SELECT * FROM S WHERE A : ABSENT(B) ; C", "E0302"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) FOR 1 second ; C WITHIN 1 minute", "E0303"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) FOR 1 second WITHIN 3 EVENTS", "E0304"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) FOR 1 second WITHIN 1 minute CONSUME BY ANY", "E0304"),
])
def test_static_errors(query, code):
    assert code_of(query) == code


def test_e0208_and_e0209():
    two = vectors.TWO_STREAMS_SCHEMA
    assert code_of("SELECT * WHERE A", schema=two) == "E0208"
    assert code_of("SELECT * WHERE A", schema="CREATE STREAM S { EVENT A { v:int, v:int } }") == "E0209"
    assert code_of("SELECT * WHERE A", schema="CREATE STREAM S { EVENT A { v:Int } }") == "E0209"
    s = parse_schema("create stream S { event A { a:long, b:integer, c:float, d:str, e:bool, f:primary_time } }")
    assert s.streams == {"S": {"A": {"a": "int", "b": "int", "c": "double", "d": "string",
                                     "e": "bool", "f": "primary_time"}}}


def test_well_formed_filters_are_accepted():
    ok = [
        "SELECT * FROM S WHERE (A OR B) FILTER A[v > 1]",          # vacuous in the B branch
        "SELECT * FROM S WHERE A ; (B AS b)+ ; C FILTER b[v > 2]",
        "SELECT * FROM S WHERE (A AS x OR B AS y) ; A AS x",      # W0401 only
        "SELECT * FROM S WHERE A ; B FILTER S>A[v = 1]",
        "SELECT STRICT * FROM S WHERE A ; B",                     # no E0500
        "SELECT NEXT * FROM S WHERE A ; B",
        "SELECT LAST * FROM S WHERE A ; B",
        "SELECT MAX * FROM S WHERE A ; B",
        "SELECT * FROM S WHERE A ; B WITHIN 0 [t]",               # n >= 0 accepted (docs/language.md#s3-7, D15)
        "SELECT * FROM S WHERE A ; B WITHIN 0 EVENTS",
    ]
    for q in ok:
        evaluate(q, [], schema=SCHEMA)


def test_vacuous_filter_in_or_branch():
    r = evaluate("SELECT * FROM S WHERE (A OR B) FILTER A[v > 1]",
                 [{"type": "A", "v": 0}, {"type": "B", "v": 0}, {"type": "A", "v": 5}])
    assert r.matches() == [(1, 1, (1,)), (2, 2, (2,))]


# ============================================================ pipeline rules

def test_no_from_and_schema_less_streams():
    r = evaluate("SELECT * WHERE A ; B", ev("A X B"))
    assert r.matches() == [(0, 2, (0, 2))]
    # with one FROM stream, events without "stream" belong to it
    assert evaluate("SELECT * FROM S WHERE A : B", ev("A X B")).matches() == []


def test_window_zero_events_and_zero_attr():
    assert evaluate("SELECT * WHERE A+ WITHIN 0 EVENTS", ev("A A")).matches() == [(0, 0, (0,)), (1, 1, (1,))]
    r = evaluate("SELECT * WHERE A ; B WITHIN 0 [t]", [{"type": "A", "t": 4}, {"type": "B", "t": 4}, {"type": "B", "t": 5}])
    assert r.matches() == [(0, 1, (0, 1))]


def test_late_events_and_null_coordinates_are_dropped():
    evs = [{"type": "A", "t": 5}, {"type": "A", "t": None}, {"type": "B", "t": 4}, {"type": "B", "t": 5}]
    r = evaluate("SELECT * WHERE A ; B WITHIN 10 [t]", evs)
    assert r.matches() == [(0, 3, (0, 3))]
    # without a time-based window nothing is dropped
    assert evaluate("SELECT * WHERE A ; B WITHIN 10 EVENTS", evs).matches() == [
        (0, 2, (0, 2)), (1, 2, (1, 2)), (0, 3, (0, 3)), (1, 3, (1, 3))]


def test_time_units_and_primary_time():
    sch = "CREATE STREAM S { EVENT A { ts: primary_time }, EVENT B { ts: primary_time } }"
    evs = [{"type": "A", "ts": 0}, {"type": "B", "ts": 90 * 60 * 10 ** 9}, {"type": "B", "ts": 90 * 60 * 10 ** 9 + 1}]
    r = evaluate("SELECT * WHERE A ; B WITHIN 1 HOUR 30 MINUTES", evs, schema=sch)
    assert r.matches() == [(0, 1, (0, 1))]
    evs2 = [{"type": "A", "t": 0}, {"type": "B", "t": 1.5}, {"type": "B", "t": 1.6}]
    r2 = evaluate("SELECT * WHERE A ; B WITHIN 1500 MS", evs2, time_field="t", time_unit="s")
    assert r2.matches() == [(0, 1, (0, 1))]


def test_partition_keys_are_typed():
    evs = [{"type": "A", "k": 1}, {"type": "B", "k": 1.0}, {"type": "B", "k": 1}, {"type": "B", "k": True}]
    assert evaluate("SELECT * WHERE A ; B PARTITION BY [k]", evs).matches() == [(0, 2, (0, 2))]


def test_partition_group_first_present_attribute_without_schema():
    evs = [{"type": "A", "w": 3, "k": 1}, {"type": "B", "k": 3}, {"type": "B", "k": 1}, {"type": "B", "w": None, "k": 1}]
    assert evaluate("SELECT * WHERE A ; B PARTITION BY [w, k]", evs).matches() == [(0, 1, (0, 1))]


def test_consume_resets_even_under_limit_0():
    r = evaluate("SELECT * WHERE A ; B CONSUME BY ANY LIMIT 0", ev("A B B A B"))
    assert r.limit == 0
    assert r.matches() == [(0, 1, (0, 1)), (3, 4, (3, 4))]


def test_consume_by_partition_without_partition_by_is_any():
    a = evaluate("SELECT * WHERE A ; B CONSUME BY PARTITION", ev("A B B")).matches()
    assert a == [(0, 1, (0, 1))]


def test_strategy_order_before_window_and_projection():
    # V40 shape with LAST: the preferred (most recent) match is inside the window
    assert evaluate("SELECT LAST * WHERE A ; B WITHIN 2 EVENTS", ev("A X A B")).matches() == [(2, 3, (2, 3))]
    # strategy before projection: STRICT with a projected variable still matches
    r = evaluate("SELECT STRICT x WHERE A ; B ; C AS x", ev("A B C"))
    assert r.matches() == [(0, 2, (2,))]


def test_strict_and_next_with_unmarked_start():
    # K(V) = D(V) u {start}: NOT(...) first
    r = evaluate("SELECT NEXT * WHERE NOT(B) ; C", ev("X A C"))
    assert r.matches() == [(0, 2, (2,))]
    r = evaluate("SELECT STRICT * WHERE NOT(B) ; C", ev("X A C"))
    assert r.matches() == [(1, 2, (2,))]
    r = evaluate("SELECT MAX * WHERE NOT(B) ; C", ev("X A C"))
    assert r.matches() == [(0, 2, (2,)), (1, 2, (2,))]


def test_compat_ignore_strategy():
    r = evaluate("SELECT NEXT * WHERE A ; B", ev("A A B"), compat_ignore_strategy=True)
    assert r.matches() == [(0, 2, (0, 2)), (1, 2, (1, 2))]


def test_select_qualified_and_type_variables():
    two = vectors.TWO_STREAMS_SCHEMA
    evs = [{"stream": "S1", "type": "A", "v": 0}, {"stream": "S2", "type": "A", "v": 0}, {"stream": "S2", "type": "C", "v": 0}]
    r = evaluate("SELECT S2>A FROM S1, S2 WHERE A ; A ; C", evs, schema=two)
    assert r.matches() == [(0, 2, (1,))]
    r = evaluate("SELECT S2>A FROM S2 WHERE A ; C", evs, schema=two)  # S1 events are not in the input
    assert r.matches() == [(1, 2, (1,))]


def test_output_is_a_set():
    r = evaluate("SELECT * WHERE (A AS x) OR (A AS y)", ev("A"))   # V43
    assert r.outputs == {0: {(0, (0,))}}
    r = evaluate("SELECT A, C WHERE A ; B ; C", ev("A B B C"))      # V11
    assert r.outputs == {3: {(0, (0, 3))}}


# ============================================================ readings listed in "Spec notes"

def test_note_late_maximum_updated_before_key_lookup():
    evs = [{"type": "A", "k": 1, "t": 5}, {"type": "Y", "t": 9}, {"type": "B", "k": 1, "t": 7}]
    assert evaluate("SELECT * WHERE A ; B PARTITION BY [k] WITHIN 10 [t]", evs).matches() == []


def test_note_next_keeps_all_valuations_with_the_best_pair():
    r = evaluate("SELECT NEXT x WHERE (A AS x) OR (A AS y)", ev("A"))
    assert r.outputs == {0: {(0, ()), (0, (0,))}}


def test_note_events_outside_the_from_streams():
    two = vectors.TWO_STREAMS_SCHEMA
    evs = [{"stream": "S2", "type": "A", "v": 0}, {"type": "A", "v": 0}, {"stream": "S2", "type": "C", "v": 0}]
    # position 1 has no "stream" while FROM lists two streams: not in the input
    assert evaluate("SELECT * FROM S1, S2 WHERE A : C", evs, schema=two).matches() == [(0, 2, (0, 2))]


def test_note_schema_less_select_of_unnamed_type():
    assert code_of("SELECT C WHERE A ; B", schema=None) == "E0203"
    assert evaluate("SELECT C FROM S WHERE A ; B", ev("A B"), schema=SCHEMA).matches() == [(0, 1, ())]


# ---------------------------------------------------------------- captures (docs/language.md#s3-2a)

def captures_of(query, types):
    return evaluate(query, [{"type": t} for t in types.split()], captures=True).matches()


def test_oracle_captures_v43_two_valuations():
    assert captures_of("SELECT * FROM S WHERE (A AS x) OR (A AS y)", "A") == [
        (0, 0, ((0, ("A", "x")),)), (0, 0, ((0, ("A", "y")),))]
    # captures off: one complex event
    assert evaluate("SELECT * FROM S WHERE (A AS x) OR (A AS y)", [{"type": "A"}]).matches() == [(0, 0, (0,))]


def test_oracle_captures_projection_and_qualified_names():
    assert captures_of("SELECT A FROM S WHERE (A AS x) OR (A AS y)", "A") == [(0, 0, ((0, ("A",)),))]
    assert captures_of("SELECT NONE FROM S WHERE A", "A") == [(0, 0, ())]
    res = evaluate("SELECT * FROM S1, S2 WHERE S1>A ; B",
                   [{"stream": "S1", "type": "A"}, {"stream": "S2", "type": "B"}], captures=True)
    # S1>A is written, so reported; S2>B is not.
    assert res.matches() == [(0, 1, ((0, ("A", "S1>A")), (1, ("B",))))]


def test_remainder_of_an_infinity_is_nan_not_a_crash():
    # IEEE fmod(inf, 2) is NaN; a comparison with NaN is UNKNOWN (docs/language.md#s3-4).
    assert math.isnan(arith("%", math.inf, 2.0))
    assert evaluate("SELECT * FROM S WHERE A FILTER A[v % 2 = 1]", [{"type": "A", "v": math.inf}]).outputs == {}


def test_nan_measures_of_two_valuations_are_one_output():
    # docs/language.md#s3-5a: a NaN equals a NaN in outputs, so the two valuations of
    # `(A AS x) OR (A AS y)`, which project to the same complex event with NaN
    # measures, are one output.
    text = "SELECT ANY avg(A.v) AS m FROM S WHERE (A AS x) OR (A AS y)"
    got = evaluate(text, [{"type": "A", "v": math.nan}]).outputs
    assert len(got[0]) == 1
