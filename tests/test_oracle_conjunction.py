"""Unit tests of the oracle's conjunction ``ψ1 AND ψ2`` (docs/language.md#s3-3c), on examples
worked out by hand from the written rule: one valuation of each side, with disjoint data,
over the hull ``[min(i1,i2), max(j1,j2)]`` of their intervals, with ``μ1 ∪ μ2``.

The expected values are derived in the comments, never from the engine; the same cases run
on the engine in tests/test_conjunction.py.
"""

import pytest

from oracle import OracleError, evaluate
from oracle.nodes import show
from oracle.parser import parse_query


def where(text):
    return show(parse_query("SELECT * FROM S WHERE " + text).where)


def ev(spec):
    """'A B:v=3 C' -> events (open mode); attributes after ':' as name=int, comma separated."""
    out = []
    for tok in spec.split():
        t, _, attrs = tok.partition(":")
        e = {"type": t}
        for a in filter(None, attrs.split(",")):
            k, _, v = a.partition("=")
            e[k] = int(v)
        out.append(e)
    return out


def run(query, events, **kw):
    return evaluate(query, events, **kw).matches()


# ============================================================ precedence (docs/language.md#s2-3)

@pytest.mark.parametrize("text,tree", [
    ("A ; B AND C", "((A ; B) AND C)"),  # ; binds tighter than AND
    ("A AND B ; C", "(A AND (B ; C))"),
    ("A AND B : C", "(A AND (B : C))"),  # : (40) binds tighter than AND (35)
    ("A : B AND C", "((A : B) AND C)"),
    ("A AND B OR C", "((A AND B) OR C)"),  # AND binds tighter than OR
    ("A OR B AND C", "(A OR (B AND C))"),
    ("A AND B AND C", "((A AND B) AND C)"),  # left-associative
    ("A AND B AS x", "(A AND (B AS x))"),  # postfixes bind tightest
    ("A AND B+", "(A AND (B+))"),
    ("(A AND B)+", "((A AND B)+)"),
    ("a AnD b", "(a AND b)"),  # keywords in any case
    # AND after FILTER: continues the filter iff a whole filter term follows (docs/language.md#s3-3c, remark 3)
    ("A AND B FILTER A[v > 1] AND B[v > 2]", "((A AND B) FILTER (A[(v > 1)] AND B[(v > 2)]))"),
    ("A FILTER A[v > 1] AND B", "((A FILTER A[(v > 1)]) AND B)"),
    ("A FILTER A[v > 1] AND (B ; C)", "((A FILTER A[(v > 1)]) AND (B ; C))"),
    ("A FILTER A[v > 1] AND (B[v > 2] OR A[v < 0])",
     "(A FILTER (A[(v > 1)] AND (B[(v > 2)] OR A[(v < 0)])))"),
    ("A FILTER A[v > 1] AND B FILTER B[v > 2]", "(((A FILTER A[(v > 1)]) AND B) FILTER B[(v > 2)])"),
])
def test_precedence(text, tree):
    assert where(text) == tree


# ============================================================ the rule

def test_any_order():
    # A: [0,0]{0}, [2,2]{2}; B: [1,1]{1}. Pairs (A0,B1) -> [0,1]; (A2,B1) -> [1,2].
    assert run("SELECT * FROM S WHERE A AND B", ev("A B A")) == [(0, 1, (0, 1)), (1, 2, (1, 2))]


def test_partial_sequence_of_the_lazy_chain_paper():
    # AND(SEQ(A,B), SEQ(C,D), E) over C A E D B: A;B = [1,4]{1,4}, C;D = [0,3]{0,3}, E = [2,2]{2};
    # one valuation each, pairwise disjoint: [0,4] with every position.
    q = "SELECT * FROM S WHERE (A ; B) AND (C ; D) AND E"
    assert run(q, ev("C A E D B")) == [(0, 4, (0, 1, 2, 3, 4))]
    # the order inside a SEQ still matters: B before A gives no A ; B
    assert run(q, ev("C B E D A")) == []


def test_distinct_events():
    # one A cannot be both x and y
    assert run("SELECT * FROM S WHERE A AS x AND A AS y", ev("A")) == []
    # two As: x=0,y=1 and x=1,y=0, both [0,1]{0,1}: one complex event ...
    assert run("SELECT * FROM S WHERE A AS x AND A AS y", ev("A A")) == [(0, 1, (0, 1))]
    # ... and two valuations with captures on
    res = evaluate("SELECT * FROM S WHERE A AS x AND A AS y", ev("A A"), captures=True)
    assert res.outputs == {1: {(0, ((0, ("A", "x")), (1, ("A", "y")))), (0, ((0, ("A", "y")), (1, ("A", "x"))))}}
    # A AND A is two distinct As in any order: over A A A, pairs {0,1}, {0,2}, {1,2}
    assert run("SELECT * FROM S WHERE A AND A", ev("A A A")) == [(0, 1, (0, 1)), (0, 2, (0, 2)), (1, 2, (1, 2))]


def test_not_consumes_without_capturing():
    # NOT(B) over C: ([0,0], {}); C: ([0,0], {C:0}); data {} and {0} are disjoint: [0,0]{0}
    assert run("SELECT * FROM S WHERE NOT(B) AND C", ev("C")) == [(0, 0, (0,))]
    # over X C: NOT(B) at 0 or 1, C at 1: [0,1]{1} and [1,1]{1}
    assert run("SELECT * FROM S WHERE NOT(B) AND C", ev("X C")) == [(0, 1, (1,)), (1, 1, (1,))]


def test_or_distributes():
    # (A OR B) AND C over A B C: A with C -> [0,2]{0,2}; B with C -> [1,2]{1,2}
    assert run("SELECT * FROM S WHERE (A OR B) AND C", ev("A B C")) == [(0, 2, (0, 2)), (1, 2, (1, 2))]


def test_iteration_of_a_conjunction():
    # A AND B over B A A B: [0,1]{0,1}, [0,2]{0,2}, [1,3]{1,3}, [2,3]{2,3}. (..)+ adds V ; V'
    # with V.end < V'.start: only [0,1] then [2,3] -> [0,3]{0,1,2,3}.
    assert run("SELECT * FROM S WHERE (A AND B)+", ev("B A A B")) == [
        (0, 1, (0, 1)), (0, 2, (0, 2)), (0, 3, (0, 1, 2, 3)), (1, 3, (1, 3)), (2, 3, (2, 3))]


def test_contiguous_before_a_conjunction():
    # A : (B AND C): the conjunction's first event (of either side) right after A
    q = "SELECT * FROM S WHERE A : (B AND C)"
    assert run(q, ev("A C X B")) == [(0, 3, (0, 1, 3))]  # B AND C = [1,3], starts at 0+1
    assert run(q, ev("A X C B")) == []  # B AND C = [2,3]


def test_filter_after_the_conjunction_is_for_all_over_both_sides():
    # x holds A and B; pairs A0B1 (v 2, 1: 1 > 1 fails) and A0B2 (v 2, 3): [0,2]{0,2}
    q = "SELECT * FROM S WHERE (A AS x AND B AS x) FILTER x[v > 1]"
    assert run(q, ev("A:v=2 B:v=1 B:v=3")) == [(0, 2, (0, 2))]


def test_window_bounds_the_hull():
    # (A0,B2) -> [0,2], 2 events wide > 1: out; (A3,B2) -> [2,3]: in
    assert run("SELECT * FROM S WHERE A AND B WITHIN 1 EVENTS", ev("A C B A")) == [(2, 3, (2, 3))]


def test_partition_by():
    # only A0 and B2 share k=1
    assert run("SELECT * FROM S WHERE A AND B PARTITION BY [k]", ev("A:k=1 B:k=2 B:k=1")) == [(0, 2, (0, 2))]


def test_strategies():
    # at end 2: [0,2]{0,2} and [1,2]{1,2}; K = {0,2} vs {1,2}, min of the difference is 0
    assert run("SELECT NEXT * FROM S WHERE A AND B", ev("A A B")) == [(0, 2, (0, 2))]
    assert run("SELECT LAST * FROM S WHERE A AND B", ev("A A B")) == [(1, 2, (1, 2))]
    # STRICT: position 1 of [0,2] is captured by no side
    assert run("SELECT STRICT * FROM S WHERE A AND B", ev("A X B")) == []
    assert run("SELECT STRICT * FROM S WHERE A AND B", ev("B A")) == [(0, 1, (0, 1))]
    # MAX over A AND B+ on A B B: end 1: [0,1]{0,1}; end 2: {0,2} is dominated by {0,1,2}
    assert run("SELECT MAX * FROM S WHERE A AND B+", ev("A B B")) == [(0, 1, (0, 1)), (0, 2, (0, 1, 2))]


def test_consume_by_any():
    # [0,1] is output at 1 and resets: later valuations must start after 1 ([2,3] only)
    assert run("SELECT * FROM S WHERE A AND B CONSUME BY ANY", ev("A B A B")) == [(0, 1, (0, 1)), (2, 3, (2, 3))]


def test_projection():
    # SELECT B keeps B's positions; the interval is the hull
    assert run("SELECT B FROM S WHERE A AND B", ev("B A")) == [(0, 1, (0,))]


def test_absence_inside_a_side_reads_the_stream():
    q = "SELECT * FROM S WHERE (A ; ABSENT(B) ; C) AND B"
    # the B at 1 lies in the gap between A and C: no left valuation
    assert run(q, ev("A B C")) == []
    # the B at 0 is outside the gap: left [1,2], right [0,0] -> [0,2]
    assert run(q, ev("B A C")) == [(0, 2, (0, 1, 2))]


def test_trailing_absence_after_a_conjunction():
    q = "SELECT * FROM S WHERE (A AND B) ; ABSENT(C) FOR 2 seconds WITHIN 10 seconds"
    # [0,1] ends at ts 1 s, deadline 3 s; X at 5 s passes it with no C: reported
    events = [{"type": "A", "ts": 0}, {"type": "B", "ts": 1}, {"type": "X", "ts": 5}]
    assert run(q, events, time_field="ts", time_unit="s") == [(0, 1, (0, 1))]
    # a C at 2 s (before the deadline) cancels it
    events.insert(2, {"type": "C", "ts": 2})
    assert run(q, events, time_field="ts", time_unit="s") == []


def test_absent_is_not_an_operand_of_and():
    with pytest.raises(OracleError) as e:
        evaluate("SELECT * FROM S WHERE A AND ABSENT(B)", ev("A"))
    assert e.value.code == "E0302"
