"""Alternatives inside an absence, ``ABSENT(β1 OR … OR βn)`` (docs/language.md#s3-3a,
"Alternatives"): none of them in the gap, or, with ``FOR d``, none of them before the
deadline. Expected values are written from the text and checked against the engine
and the brute-force oracle; the randomized comparisons are in
tests/test_differential_absence.py and tests/test_differential_deadline.py, whose
generators draw alternatives."""

from __future__ import annotations

import pytest

import ceql
import oracle

SCHEMA = "CREATE STREAM S { EVENT A { v:int, x:int }, EVENT B { v:int, x:int }, EVENT C { v:int, x:int }, " \
         "EVENT D { v:int, x:int }, EVENT X { v:int, x:int } }"


def ev(spec):
    """``"A B:3 D"``: one event per word, ``type[:v]``, time stamp = index (seconds), x = v."""
    out = []
    for i, w in enumerate(spec.split()):
        t, _, v = w.partition(":")
        v = int(v) if v else i
        out.append({"type": t, "v": v, "x": v, "ts": i})
    return out


def both(query, spec, **kw):
    """(engine, oracle) complex events, each as sorted (start, end, positions)."""
    events = ev(spec)
    timed = dict(time_field="ts", time_unit="s") if "WITHIN" in query and "EVENTS" not in query else {}
    engine = sorted((m.start, m.end, tuple(m.positions))
                    for m in ceql.compile(query, SCHEMA).run(events, **timed, **kw))
    truth = sorted(oracle.evaluate(query, events, schema=SCHEMA, **timed, **kw).matches())
    return engine, truth


def check(query, spec, expected, **kw):
    engine, truth = both(query, spec, **kw)
    assert truth == expected, f"oracle: {truth}"
    assert engine == expected, f"engine: {engine}"


Q = "SELECT * FROM S WHERE A ; ABSENT(B OR C) ; D"


def test_none_of_the_alternatives_in_the_gap():
    # A B D: a B in the gap; A X D: nothing; A C D: a C in the gap; the longer pairs hold a B or C
    check(Q, "A B D A X D A C D", [(3, 5, (3, 5))])
    check(Q, "A D", [(0, 1, (0, 1))])


def test_alternatives_are_the_absences_side_by_side():
    side = "SELECT * FROM S WHERE A ; ABSENT(B) ; ABSENT(C) ; D"
    for spec in ["A B D A X D A C D", "A X D C A D B A D", "A A D D", "A C X B D A D"]:
        assert both(Q, spec) == both(side, spec)


def test_an_or_after_a_filter_continues_it_only_before_a_filter_term():
    # two alternatives: a B with v > 1, or any C
    two = "SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1] OR C) ; D"
    check(two, "A B:0 D", [(0, 2, (0, 2))])
    check(two, "A B:5 D", [])
    check(two, "A C D", [])
    # one alternative: a B with v > 1 or v < 0 (the OR is the filter's: a filter term follows)
    one = "SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1] OR B[v < 0]) ; D"
    check(one, "A B:0 D", [(0, 2, (0, 2))])
    check(one, "A B:-1 D", [])
    check(one, "A C D", [(0, 2, (0, 2))])


def test_three_alternatives_and_qualified_types():
    q = "SELECT * FROM S WHERE A ; ABSENT(S>B OR C FILTER C[v = 7] OR X) ; D"
    check(q, "A C:1 D", [(0, 2, (0, 2))])
    check(q, "A C:7 D", [])
    check(q, "A X D", [])
    check(q, "A B D", [])


def test_an_alternative_with_a_condition_on_the_match():
    # a B whose x exceeds the D's x violates; so does any C
    q = "SELECT * FROM S WHERE A ; ABSENT(B AS b FILTER b[x > d.x] OR C) ; D AS d"
    check(q, "A B:1 D:5", [(0, 2, (0, 2))])
    check(q, "A B:9 D:5", [])
    check(q, "A C:1 D:5", [])


def test_each_alternative_names_its_own_event():
    q = "SELECT * FROM S WHERE A AS a ; ABSENT(B AS y FILTER y[x < a.x] OR C AS y FILTER y[x > a.x]) ; D"
    # the B has x 1 < 4 (violates); the C has x 9 > 4 (violates); the B with 6 and the C with 2 do not
    check(q, "A:4 B:1 D", [])
    check(q, "A:4 C:9 D", [])
    check(q, "A:4 B:6 C:2 D", [(0, 3, (0, 3))])


TRAILING = "SELECT * FROM S WHERE A ; ABSENT(B OR C FILTER C[v > 1]) FOR 2 seconds WITHIN 10 seconds"


def test_trailing_alternatives_cancel_before_the_deadline():
    # A@0: a B at 1 cancels. A@2: the C at 3 has v 0, the C at 4 has v 7 (cancels).
    # A@5: nothing until 7 (its deadline); the X at 8 passes it. A@8 waits (the input ends).
    check(TRAILING, "A B A C:0 C:7 A X X A", [(5, 5, (5,))])
    check(TRAILING, "A B A C:0 C:7 A X X A", [(5, 5, (5,)), (8, 8, (8,))], close_deadlines=True)


def test_explain_reads_the_alternatives():
    text = ceql.compile(TRAILING, SCHEMA).explain()
    assert "ABSENT(B OR C" in text


@pytest.mark.parametrize("query, code", [
    ("SELECT * FROM S WHERE ABSENT(B OR C) ; D", "E0302"),  # starts the chain
    ("SELECT * FROM S WHERE A ; ABSENT(B OR C)", "E0302"),  # ends it without FOR
    ("SELECT * FROM S WHERE A ; ABSENT(B OR C) FOR 1 second ; D WITHIN 5 seconds", "E0303"),
    # a trailing alternative that reads the match (as for one alternative)
    ("SELECT * FROM S WHERE A AS a ; ABSENT(B OR C FILTER C[x > a.x]) FOR 1 second WITHIN 5 seconds", "E0500"),
    # an alternative's filter on another alternative's type
    ("SELECT * FROM S WHERE A ; ABSENT(B FILTER C[v > 1] OR C) ; D", "E0301"),
    # the alternatives are single events, not formulas
    ("SELECT * FROM S WHERE A ; ABSENT(B OR (C ; X)) ; D", "E0100"),
    ("SELECT * FROM S WHERE A ; ABSENT(B ; C) ; D", "E0100"),
    ("SELECT * FROM S WHERE A ; ABSENT(B OR) ; D", "E0100"),
])
def test_errors(query, code):
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile(query, SCHEMA)
    assert e.value.code == code, str(e.value)
    if code == "E0500":  # an engine limit: the oracle evaluates it (tests/oracle, note 17)
        return
    with pytest.raises(oracle.OracleError) as o:
        oracle.evaluate(query, [], schema=SCHEMA)
    if code != "E0100":  # the oracle's syntax errors are not coded
        assert o.value.code == code


def test_explain_names_an_alternative_tested_per_valuation():
    # The formula keeps the alternative the automaton tests; the other, which reads the
    # match, is named among the clauses tested per valuation (adversarial review F3).
    text = ceql.compile("SELECT * FROM S WHERE A AS a ; ABSENT(B FILTER B[x > 1] OR C AS c FILTER c[x < a.x]) ; "
                        "D AS d WITHIN 3 EVENTS", SCHEMA).explain()
    assert "ABSENT(B[x > 1])" in text
    assert "ABSENT(C FILTER c[x < a.x]) reading the match" in text


def test_selecting_an_absent_name_warns():
    # The name of an absent event binds no event of the match (W0407); an AS of the
    # pattern with the same name is another variable, and selects its events.
    q = ceql.compile("SELECT q FROM S WHERE A ; ABSENT(B AS q OR C) ; D WITHIN 5 EVENTS", SCHEMA)
    assert [(w.code, w.column) for w in q.warnings] == [("W0407", 8)]
    assert "selects nothing" in q.warnings[0].message
    both = ceql.compile("SELECT q FROM S WHERE A AS q ; ABSENT(B AS q) ; D WITHIN 5 EVENTS", SCHEMA)
    assert [w.code for w in both.warnings] == []
