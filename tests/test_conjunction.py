"""The engine's conjunction ``ψ1 AND ψ2`` (docs/language.md#s3-3c) on the hand-worked examples
of tests/test_oracle_conjunction.py (expected values derived there from the written rule), and
what only the engine has: the product automaton's size, the limit error E0102, the checks,
``explain``, captures, streams and deadlines."""

from __future__ import annotations

import time

import pytest

import ceql
from test_oracle_conjunction import ev

# (query, events, expected complex events sorted by end, start, positions); derivations in
# tests/test_oracle_conjunction.py
CASES = [
    ("SELECT * FROM S WHERE A AND B", "A B A", [(0, 1, (0, 1)), (1, 2, (1, 2))]),
    ("SELECT * FROM S WHERE (A ; B) AND (C ; D) AND E", "C A E D B", [(0, 4, (0, 1, 2, 3, 4))]),
    ("SELECT * FROM S WHERE (A ; B) AND (C ; D) AND E", "C B E D A", []),
    ("SELECT * FROM S WHERE A AS x AND A AS y", "A", []),
    ("SELECT * FROM S WHERE A AS x AND A AS y", "A A", [(0, 1, (0, 1))]),
    ("SELECT * FROM S WHERE A AND A", "A A A", [(0, 1, (0, 1)), (0, 2, (0, 2)), (1, 2, (1, 2))]),
    ("SELECT * FROM S WHERE NOT(B) AND C", "C", [(0, 0, (0,))]),
    ("SELECT * FROM S WHERE NOT(B) AND C", "X C", [(0, 1, (1,)), (1, 1, (1,))]),
    ("SELECT * FROM S WHERE (A OR B) AND C", "A B C", [(0, 2, (0, 2)), (1, 2, (1, 2))]),
    ("SELECT * FROM S WHERE (A AND B)+", "B A A B",
     [(0, 1, (0, 1)), (0, 2, (0, 2)), (0, 3, (0, 1, 2, 3)), (1, 3, (1, 3)), (2, 3, (2, 3))]),
    ("SELECT * FROM S WHERE A : (B AND C)", "A C X B", [(0, 3, (0, 1, 3))]),
    ("SELECT * FROM S WHERE A : (B AND C)", "A X C B", []),
    ("SELECT * FROM S WHERE (A AS x AND B AS x) FILTER x[v > 1]", "A:v=2 B:v=1 B:v=3", [(0, 2, (0, 2))]),
    ("SELECT * FROM S WHERE A AND B WITHIN 1 EVENTS", "A C B A", [(2, 3, (2, 3))]),
    ("SELECT * FROM S WHERE A AND B PARTITION BY [k]", "A:k=1 B:k=2 B:k=1", [(0, 2, (0, 2))]),
    ("SELECT NEXT * FROM S WHERE A AND B", "A A B", [(0, 2, (0, 2))]),
    ("SELECT LAST * FROM S WHERE A AND B", "A A B", [(1, 2, (1, 2))]),
    ("SELECT STRICT * FROM S WHERE A AND B", "A X B", []),
    ("SELECT STRICT * FROM S WHERE A AND B", "B A", [(0, 1, (0, 1))]),
    ("SELECT MAX * FROM S WHERE A AND B+", "A B B", [(0, 1, (0, 1)), (0, 2, (0, 1, 2))]),
    ("SELECT * FROM S WHERE A AND B CONSUME BY ANY", "A B A B", [(0, 1, (0, 1)), (2, 3, (2, 3))]),
    ("SELECT B FROM S WHERE A AND B", "B A", [(0, 1, (0,))]),
    ("SELECT * FROM S WHERE (A ; ABSENT(B) ; C) AND B", "A B C", []),
    ("SELECT * FROM S WHERE (A ; ABSENT(B) ; C) AND B", "B A C", [(0, 2, (0, 1, 2))]),
    # a B event is both the left side's non-(B[v > 5]) and the right side's B[v > 1] (the
    # product's negative literal, docs/language.md#s5-3): B(3) alone, B(3) with the later B(7)
    # or B(0) as the non-(B[v > 5]), B(7) with B(0)
    ("SELECT * FROM S WHERE NOT(B FILTER B[v > 5]) AND B FILTER B[v > 1]", "B:v=3 B:v=7 B:v=0",
     [(0, 0, (0,)), (0, 1, (1,)), (0, 2, (0,)), (1, 2, (1,))]),
]


def triples(matches):
    return sorted((m.start, m.end, tuple(m.positions)) for m in matches)


@pytest.mark.parametrize("query,events,expected", CASES)
def test_hand_worked_examples(query, events, expected):
    assert triples(ceql.compile(query).run(ev(events))) == expected


def test_two_valuations_of_one_complex_event_with_captures():
    ms = ceql.compile("SELECT * FROM S WHERE A AS x AND A AS y").run(ev("A A"), captures=True)
    assert sorted((m.captures["x"], m.captures["y"]) for m in ms) == [((0,), (1,)), ((1,), (0,))]


def test_trailing_absence_after_a_conjunction():
    q = ceql.compile("SELECT * FROM S WHERE (A AND B) ; ABSENT(C) FOR 2 seconds WITHIN 10 seconds")
    events = [{"type": "A", "ts": 0}, {"type": "B", "ts": 1}, {"type": "X", "ts": 5}]
    ms = q.run(events, time_field="ts", time_unit="s")
    assert triples(ms) == [(0, 1, (0, 1))] and ms[0].deadline == 3 * 10**9
    events.insert(2, {"type": "C", "ts": 2})
    assert q.run(events, time_field="ts", time_unit="s") == []


def test_stream_snapshot_round_trip():
    q = ceql.compile("SELECT * FROM S WHERE (A ; B) AND C PARTITION BY [k] WITHIN 5 EVENTS")
    events = ev("A:k=1 C:k=2 C:k=1 A:k=2 B:k=1 B:k=2")
    s = q.stream()
    out = s.push_many(events[:3])
    s = ceql.Stream.restore(q, s.snapshot())
    out += s.push_many(events[3:])
    # k=1: A0 C2 B4 -> [0,4]; k=2: C1 A3 B5 -> [1,5]
    assert [(m.start, m.end, m.positions) for m in out] == [(0, 4, (0, 2, 4)), (1, 5, (1, 3, 5))]


def test_the_product_has_2_to_the_n_states_against_the_or_of_n_factorial_sequences():
    import itertools

    # n = 3: 8 states against 1 + 6 x 3 = 19; n = 5: 32 against 1 + 120 x 5 = 601
    for n, conj_states, disj_states in ((3, 8, 19), (5, 32, 601)):
        types = "ABCDE"[:n]
        conj = ceql.compile("SELECT * FROM S WHERE " + " AND ".join(types))
        orders = " OR ".join("(%s)" % " ; ".join(p) for p in itertools.permutations(types))
        disj = ceql.compile("SELECT * FROM S WHERE " + orders)
        assert (conj.describe()["states"], disj.describe()["states"]) == (conj_states, disj_states)
        events = ev("E D C B A C B A E")
        assert triples(conj.run(events)) == triples(disj.run(events))


def test_a_product_beyond_the_limit_is_refused_fast():
    # 20 conjoined events: 2^20 states with ~20 transitions each, beyond 2^20 transitions
    text = "SELECT * FROM S WHERE " + " AND ".join("T%d" % i for i in range(20))
    t0 = time.monotonic()
    with pytest.raises(ceql.CeqlSyntaxError) as e:
        ceql.compile(text)
    assert e.value.code == "E0102" and "conjunction" in e.value.message
    assert time.monotonic() - t0 < 30


def test_absent_is_not_an_operand_of_and():
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile("SELECT * FROM S WHERE A AND ABSENT(B)")
    assert e.value.code == "E0302"
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile("SELECT * FROM S WHERE A AND ABSENT(B) FOR 1 second WITHIN 1 minute")
    assert e.value.code == "E0303"


def test_an_as_name_on_both_sides_warns():
    q = ceql.compile("SELECT * FROM S WHERE A AS x AND B AS x WITHIN 3 EVENTS")
    assert [w.code for w in q.warnings] == ["W0401"]
    assert "conjunction" in q.warnings[0].message


def test_filter_scope_and_definite_binding():
    # a filter after the conjunction may name variables of either side (E0301 otherwise) ...
    ceql.compile("SELECT * FROM S WHERE (A AND B) FILTER A[v > 1] AND B[v > 2]")
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile("SELECT * FROM S WHERE (A FILTER B[v > 1]) AND B")
    assert e.value.code == "E0301"
    # ... and every valuation binds both sides' variables (no E0305 for y.attr)
    ceql.compile("SELECT * FROM S WHERE (A AS a AND B AS b) FILTER b[v > a.v]")


def test_predicates_between_events_across_the_two_sides():
    q = ceql.compile("SELECT * FROM S WHERE (A AS a AND B AS b) FILTER b[v > a.v] WITHIN 3 EVENTS")
    # b.v > a.v for (A0,B1): 5 > 1, (A0,B2): 9 > 1, (A3,B1): 5 > 4, (A3,B2): 9 > 4; not for
    # (A3,B1) over A:v=6 (5 > 6 fails)
    assert triples(q.run(ev("A:v=1 B:v=5 B:v=9 A:v=4"))) == [(0, 1, (0, 1)), (0, 2, (0, 2)), (1, 3, (1, 3)),
                                                               (2, 3, (2, 3))]
    assert triples(q.run(ev("A:v=1 B:v=5 B:v=9 A:v=6"))) == [(0, 1, (0, 1)), (0, 2, (0, 2)), (2, 3, (2, 3))]


def test_explain_and_describe():
    q = ceql.compile("SELECT * FROM S WHERE NOT(B FILTER B[v > 5]) AND B FILTER B[v > 1]")
    text = q.explain()
    assert "NOT(B[v > 5]) AND B[v > 1]" in text  # the outer filter is not pushed into NOT
    assert "B[v > 1 AND NOT (v > 5)]" in text  # the product's negative literal
    assert q.describe()["states"] == 4
    assert q.to_dot().count("->") == q.describe()["transitions"] + 1  # and the start arrow
