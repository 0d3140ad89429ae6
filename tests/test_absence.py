"""Absence between two patterns, ``ψ1 ; ABSENT(β) ; ψ2`` (docs/language.md#s3-3a): the
examples of the section (expected values written from the text), the placement errors
(E0302, with code, line, column and caret), the contextual keyword, and ``explain``.
The randomized comparison with the oracle is tests/test_differential_absence.py."""

from __future__ import annotations

import pytest

import ceql

SCHEMA = "CREATE STREAM S { EVENT A { v:int, s:string, t:int }, EVENT B { v:int }, EVENT C { v:int }, " \
         "EVENT X { v:int } }"


def ev(*types, **attrs):
    return [dict({"type": t, "v": i}, **attrs) for i, t in enumerate(types)]


def intervals(query, events, schema=SCHEMA):
    return sorted((m.start, m.end, tuple(m.positions)) for m in ceql.compile(query, schema).run(events))


def test_absent_versus_not_side_by_side():
    # the table of docs/language.md#s3-3a
    absent = "SELECT * FROM S WHERE A ; ABSENT(B) ; C"
    not_ = "SELECT * FROM S WHERE A ; NOT(B) ; C"
    assert intervals(absent, ev("A", "B", "X", "C")) == []
    assert intervals(not_, ev("A", "B", "X", "C")) == [(0, 3, (0, 3))]
    assert intervals(absent, ev("A", "C")) == [(0, 1, (0, 1))]
    assert intervals(not_, ev("A", "C")) == []


def test_absence_of_a_filtered_type_and_of_several_types():
    q = "SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 2]) ; C"
    # B at 1 has v = 1 (not > 2): it does not violate the absence; B at 3 has v = 3
    assert intervals(q, ev("A", "B", "C", "B", "C")) == [(0, 2, (0, 2))]
    two = "SELECT * FROM S WHERE A ; ABSENT(B) ; ABSENT(X) ; C"
    assert intervals(two, ev("A", "X", "C", "A", "C")) == [(3, 4, (3, 4))]
    assert intervals(two, ev("A", "C", "B", "C")) == [(0, 1, (0, 1))]


def test_the_gap_is_between_the_last_event_of_the_left_and_the_first_of_the_right():
    q = "SELECT * FROM S WHERE (A ; X) ; ABSENT(B) ; (C ; C)"
    # A0 B1 X2 C3 B4 C5: the gap of (A X) then (C C) is between 2 and 3 only if the
    # right side starts at 3; it ends at 5, and the B at 4 is inside the right side's span
    assert intervals(q, ev("A", "B", "X", "C", "B", "C")) == [(0, 5, (0, 2, 3, 5))]


def test_absence_under_partition_by_counts_only_the_partition():
    q = "SELECT * FROM S WHERE A ; ABSENT(B) ; C PARTITION BY [k]"
    events = [{"type": "A", "k": 1}, {"type": "B", "k": 2}, {"type": "C", "k": 1},
              {"type": "B", "k": 1}, {"type": "C", "k": 1}]
    assert sorted((m.start, m.end) for m in ceql.compile(q).run(events)) == [(0, 2)]


def test_absence_inside_iterations_and_or_branches():
    plus = "SELECT * FROM S WHERE (A ; ABSENT(B) ; C)+"
    # each iteration checks its own gap; the B at 2 is between two iterations
    got = intervals(plus, ev("A", "C", "B", "A", "C"))
    assert (0, 4, (0, 1, 3, 4)) in got and (0, 1, (0, 1)) in got and (3, 4, (3, 4)) in got
    assert not any(s == 0 and e == 4 and p == (0, 4) for s, e, p in got)  # A0 .. C4 has the B in the gap
    branch = "SELECT * FROM S WHERE (A ; ABSENT(B) ; C) OR X"
    assert intervals(branch, ev("A", "B", "C", "X")) == [(3, 3, (3,))]


@pytest.mark.parametrize("query,caret", [
    ("SELECT * FROM S WHERE ABSENT(B) ; C", "ABSENT(B)"),
    ("SELECT * FROM S WHERE A ; ABSENT(B)", "ABSENT(B)"),
    ("SELECT * FROM S WHERE ABSENT(B)", "ABSENT(B)"),
    ("SELECT * FROM S WHERE ABSENT(B) OR A", "ABSENT(B)"),
    ("SELECT * FROM S WHERE ABSENT(B)+ ; A", "ABSENT(B)"),
    ("SELECT * FROM S WHERE A ; (ABSENT(B))+ ; C", "(ABSENT(B))"),  # a parenthesised unit spans its parentheses
    ("SELECT * FROM S WHERE A ; ABSENT(B) AS x ; C", "ABSENT(B)"),
    ("SELECT * FROM S WHERE A : ABSENT(B) ; C", "ABSENT(B)"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) : C", "ABSENT(B)"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) FILTER B[v > 1] ; C", "ABSENT(B)"),
    ("SELECT * FROM S WHERE (A ; ABSENT(B)) OR C", "ABSENT(B)"),
    ("SELECT * FROM S WHERE A ; ABSENT(  B FILTER B[v > 1]  )", "ABSENT(  B FILTER B[v > 1]  )"),
])
def test_misplaced_absent_is_E0302_with_a_caret(query, caret):
    with pytest.raises(ceql.CeqlTypeError) as info:
        ceql.compile(query, SCHEMA)
    e = info.value
    assert e.code == "E0302"
    assert e.line == 1
    assert query[e.column - 1: e.end_column - 1] == caret, str(e)
    assert "^" * len(caret) in str(e)


def test_E0302_location_on_a_later_line():
    query = "SELECT *\nFROM S\nWHERE A ;\n  ABSENT(B)"
    with pytest.raises(ceql.CeqlTypeError) as info:
        ceql.compile(query, SCHEMA)
    assert (info.value.code, info.value.line, info.value.column) == ("E0302", 4, 3)


def test_absence_binds_nothing():
    with pytest.raises(ceql.CeqlTypeError) as info:
        ceql.compile("SELECT * FROM S WHERE A ; ABSENT(B) ; C FILTER B[v > 1]", SCHEMA)
    assert info.value.code == "E0301"
    with pytest.raises(ceql.CeqlNameError) as info:
        ceql.compile("SELECT * FROM S WHERE A ; ABSENT(Q) ; C", SCHEMA)
    assert info.value.code == "E0201"


def test_absent_stays_an_identifier():
    # a type named ABSENT, an attribute named absent, an AS name `absent`
    schema = "CREATE STREAM S { EVENT ABSENT { absent:int }, EVENT C { v:int } }"
    q = ceql.compile("SELECT * FROM S WHERE ABSENT ; C FILTER ABSENT[absent > 1]", schema)
    events = [{"type": "ABSENT", "absent": 2}, {"type": "C", "v": 0}]
    assert [(m.start, m.end) for m in q.run(events)] == [(0, 1)]
    q = ceql.compile("SELECT a FROM S WHERE ABSENT AS a ; ABSENT(C) ; ABSENT", schema)
    events = [{"type": "ABSENT", "absent": 0}, {"type": "ABSENT", "absent": 0}, {"type": "C", "v": 0},
              {"type": "ABSENT", "absent": 0}]
    assert sorted((m.start, m.end) for m in q.run(events)) == [(0, 1)]
    # lower case, and a comment between the keyword and its parenthesis
    q = ceql.compile("SELECT * FROM S WHERE A ; absent /* no B */ (B) ; C", SCHEMA)
    assert [(m.start, m.end) for m in q.run(ev("A", "C"))] == [(0, 1)]


def test_explain_renders_the_absence():
    q = ceql.compile("SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1]) ; C", SCHEMA)
    text = q.explain()
    assert "A ; ABSENT(B[v > 1]) ; C" in text or ("ABSENT(" in text and "v > 1" in text), text
