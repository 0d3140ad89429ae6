"""The oracle's predicates between events, PREV and aggregates (docs/design/correlation.md, section 2)
on hand-checked examples: each expected output is worked out from the design's text in the
comment above it, not taken from any engine."""

import pytest

from oracle import OracleError, OracleEventError, evaluate
from oracle.nodes import show
from oracle.parser import parse_query


def ev(type_, **attrs):
    return dict(type=type_, **attrs)


def matches(query, events, **kw):
    return evaluate("SELECT * FROM S WHERE " + query if not query.startswith("SELECT") else query, events, **kw).matches()


def test_syntax_of_the_new_terms():
    q = parse_query("SELECT a, count(b) AS n, max(b.price) AS top FROM S WHERE A AS a ; (B AS b)+ "
                    "FILTER b[price > a.price AND price > PREV(price)] AND a[v < last(b.v)]")
    assert q.select == ["a"]
    assert [(name, show(agg)) for name, agg in q.measures] == [("n", "count(b)"), ("top", "max(b.price)")]
    assert show(q.where.theta) == "(b[((price > a.price) AND (price > PREV(price)))] AND a[(v < last(b.v))])"
    assert parse_query("SELECT *, sum(b.v) AS s FROM S WHERE B AS b").select == "*"
    # Only measures: no variable is listed, so no position is reported.
    assert parse_query("SELECT count(b) AS n FROM S WHERE B AS b").select == "NONE"


def test_query_10_of_the_lazy_chain_paper():
    # a < b < c by position, names MSFT, GOOG, AAPL, and a.price < b.price < c.price:
    # a=0 (10): b=1 (12) then c=4 (14) passes, c=5 (12) fails 12 < 12; b=3 (11) then c=4 and c=5 pass.
    # a=2 (13): the only later GOOG is 3 (11), not above 13.
    stream = [ev("T", name="MSFT", price=10.0), ev("T", name="GOOG", price=12.0), ev("T", name="MSFT", price=13.0),
              ev("T", name="GOOG", price=11.0), ev("T", name="AAPL", price=14.0), ev("T", name="AAPL", price=12.0)]
    q = ("T AS a ; T AS b ; T AS c FILTER a[name = 'MSFT'] AND b[name = 'GOOG'] AND c[name = 'AAPL'] "
         "AND a[price < b.price] AND b[price < c.price]")
    assert matches(q, stream) == [(0, 4, (0, 1, 4)), (0, 4, (0, 3, 4)), (0, 5, (0, 3, 5))]


def test_equality_join_without_partition_by():
    # Same user, another country: u1 logs in from FR (0), FR (2), US (3); u2 from DE twice.
    stream = [ev("LOGIN", user="u1", country="FR"), ev("LOGIN", user="u2", country="DE"),
              ev("LOGIN", user="u1", country="FR"), ev("LOGIN", user="u1", country="US"),
              ev("LOGIN", user="u2", country="DE")]
    q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND country != a.country]"
    assert matches(q, stream) == [(0, 3, (0, 3)), (2, 3, (2, 3))]


def test_an_iteration_compared_with_an_outer_variable():
    # Every BUY of the run above s (10): 1 (11) and 3 (12) qualify, 2 (9) does not; e below s:
    # only 4 (8). The runs are the non-empty subsets of {1, 3}.
    stream = [ev("SELL", price=10), ev("BUY", price=11), ev("BUY", price=9), ev("BUY", price=12),
              ev("SELL", price=8), ev("SELL", price=10)]
    q = "SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER b[price > s.price] AND e[price < s.price]"
    assert matches(q, stream) == [(0, 4, (0, 1, 3, 4)), (0, 4, (0, 1, 4)), (0, 4, (0, 3, 4))]


def test_prev_gives_the_strictly_rising_runs():
    # Prices 1, 3, 2, 4: every non-empty subsequence whose prices strictly rise; one event has
    # no pair to compare, so it passes.
    stream = [ev("BUY", price=1), ev("BUY", price=3), ev("BUY", price=2), ev("BUY", price=4)]
    expected = [
        (0, 0, (0,)),
        (0, 1, (0, 1)), (1, 1, (1,)),
        (0, 2, (0, 2)), (2, 2, (2,)),
        (0, 3, (0, 1, 3)), (0, 3, (0, 2, 3)), (0, 3, (0, 3)), (1, 3, (1, 3)), (2, 3, (2, 3)), (3, 3, (3,)),
    ]
    assert matches("(BUY AS b)+ FILTER b[price > PREV(price)]", stream) == expected


def test_aggregate_filter_and_measures():
    # b = {1}: avg 2 < 5 passes; {2}: avg 6 fails; {1, 2}: avg 4 passes.
    stream = [ev("A", v=0), ev("B", v=2), ev("B", v=6), ev("C", v=5)]
    q = "SELECT *, count(b) AS n, avg(b.v) AS m FROM S WHERE A AS a ; (B AS b)+ ; C AS c FILTER c[v > avg(b.v)]"
    assert matches(q, stream) == [
        (0, 3, (0, 1, 2, 3), (("n", 2), ("m", 4.0))),
        (0, 3, (0, 1, 3), (("n", 1), ("m", 2.0))),
    ]


def test_aggregates_skip_nulls_and_are_null_over_nothing():
    # sum over b = {1, 2} with v = 3 and NULL is 3; min/max/first/last read the events by position.
    stream = [ev("A"), ev("B", v=3), ev("B", v=None), ev("C", v=1)]
    q = ("SELECT sum(b.v) AS s, min(b.v) AS lo, first(b.v) AS f, last(b.v) AS l, count(b) AS n "
         "FROM S WHERE A ; (B AS b)+ ; C")
    got = {m[2:] for m in matches(q, stream)}
    assert got == {
        ((), (("s", 3), ("lo", 3), ("f", 3), ("l", 3), ("n", 1))),
        ((), (("s", None), ("lo", None), ("f", None), ("l", None), ("n", 1))),
        ((), (("s", 3), ("lo", 3), ("f", 3), ("l", None), ("n", 2))),
    }


def test_a_filter_inside_the_iteration_rebinds_its_variables():
    # Stream A(1) B(2) A(5) B(6). Inside the +, each iteration compares its own a and b, so the
    # run 0 1 2 3 passes; outside, b = {1, 3} and a = {0, 2} are compared pairwise and
    # B(2) > A(5) fails.
    stream = [ev("A", v=1), ev("B", v=2), ev("A", v=5), ev("B", v=6)]
    inner = matches("(A AS a ; B AS b FILTER b[v > a.v])+", stream)
    outer = matches("(A AS a ; B AS b)+ FILTER b[v > a.v]", stream)
    assert inner == [(0, 1, (0, 1)), (0, 3, (0, 1, 2, 3)), (0, 3, (0, 3)), (2, 3, (2, 3))]
    assert outer == [(0, 1, (0, 1)), (0, 3, (0, 3)), (2, 3, (2, 3))]


SCHEMA = "CREATE STREAM S { EVENT A { v:int, s:string }, EVENT B { v:int, s:string }, EVENT C { v:int } }"


@pytest.mark.parametrize("query,code", [
    ("A AS a ; B AS b FILTER b[v > q.v]", "E0203"),  # q is no variable
    ("A AS a ; B AS b FILTER b[v > a.zz]", "E0204"),  # A declares no zz
    ("A AS a ; B AS b FILTER b[s > a.v]", "E0300"),  # a string against a number
    ("A AS a ; B AS b FILTER b[v > sum(a.s)]", "E0300"),  # sum of strings
    ("(A AS a OR B) ; C AS c FILTER c[v > a.v]", "E0305"),  # the B branch binds no a
    ("A AS a ; NOT(B FILTER B[v > a.v]) ; C", "E0301"),  # NOT reads one event
    ("(A FILTER A[v > c.v]) ; C AS c", "E0301"),  # c is bound outside the filtered formula
])
def test_static_errors(query, code):
    with pytest.raises(OracleError) as e:
        evaluate("SELECT * FROM S WHERE " + query, [], schema=SCHEMA)
    assert e.value.code == code


def test_an_aggregate_may_read_a_variable_that_a_branch_leaves_empty():
    # count(a) is 0 in the B branch: no E0305, and 0 < 1 passes there.
    stream = [ev("B", v=0), ev("C", v=1)]
    assert matches("(A AS a OR B) ; C AS c FILTER c[v > count(a)]", stream, schema=SCHEMA) == [(0, 1, (0, 1))]


def test_a_type_error_between_two_events_without_a_schema_is_an_event_error():
    with pytest.raises(OracleEventError):
        matches("A AS a ; B AS b FILTER b[s > a.v]", [ev("A", v=1), ev("B", s="x")])
