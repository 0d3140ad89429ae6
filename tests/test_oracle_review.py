"""Oracle fixes from the third review of the oracle (H3_FINDINGS.md): each expected answer is
worked out by hand from docs/language.md (and docs/design/correlation.md), never taken from an
engine. Where the engine evaluates the case, it is run too, as a cross-check of the reading
(the oracle itself never imports ceql)."""

from __future__ import annotations

import pytest

import ceql
from oracle import OracleError, OracleEventError, evaluate

SCHEMA = """CREATE STREAM S {
  EVENT A { v:int, k:int, t:int, s:string, w:double },
  EVENT B { v:int, k:int, t:int, s:string, w:double },
  EVENT C { v:int, k:int, t:int, s:string, w:double },
  EVENT X { v:int, k:int, t:int, s:string, w:double }
}"""


def engine(query, events, schema=None, **kw):
    return [(m.start, m.end, tuple(m.positions)) for m in ceql.compile(query, schema).run(events, **kw)]


# ---------------------------------------------------------------------------------------
# Finding 1 (already fixed, kept as a regression test): docs/language.md#s3-4a "A valuation is tested, and can
# raise, only once the rest of the query holds for it".

F1_CASES = [
    ("SELECT * FROM S WHERE A AS a ; B AS b FILTER b[v > a.v] AND b[v > 100]",
     [{"type": "A", "v": "x"}, {"type": "B", "v": 1}], []),
    ("SELECT * FROM S WHERE (A AS a ; B AS b FILTER b[v > a.v]) FILTER b[v > 100]",
     [{"type": "A", "v": "x"}, {"type": "B", "v": 1}], []),
    ("SELECT * FROM S WHERE (A AS a ; B AS b FILTER b[v > a.v]) ; C",
     [{"type": "A", "v": "x"}, {"type": "B", "v": 1}], []),
    ("SELECT * FROM S WHERE (A AS a ; B AS b FILTER b[v > a.v]) ; C FILTER C[v > 5]",
     [{"type": "A", "v": "x"}, {"type": "B", "v": 1}, {"type": "C", "v": 1}], []),
    ("SELECT * FROM S WHERE (A AS a ; C) OR (A AS a2 ; B AS b FILTER b[v > a2.v]) CONSUME BY ANY",
     [{"type": "A", "v": "x"}, {"type": "C"}, {"type": "B", "v": 1}], [(0, 1, (0, 1))]),
]


@pytest.mark.parametrize("query,events,expected", F1_CASES)
def test_no_data_error_for_valuations_the_rest_of_the_query_rules_out(query, events, expected):
    assert evaluate(query, events).matches() == expected


# ---------------------------------------------------------------------------------------
# Finding 2: docs/language.md#s3-7, WITHIN n [a] without declarations: "a value that is not an integer rejects
# the event (CeqlEventError): the check is on the value's type, so a double is rejected even
# when it is whole (1.0)". Rejected (an error), not dropped; the oracle's error for a rejected
# input value is TypeError (CeqlEventError is a TypeError, docs/language.md#s1-2).

@pytest.mark.parametrize("bad", [1.0, 1.5, float("nan"), True, "1"])
def test_a_window_attribute_that_is_not_an_integer_rejects_the_event(bad):
    events = [{"type": "A", "t": 0}, {"type": "B", "t": bad}, {"type": "B", "t": 2}]
    with pytest.raises(TypeError):
        evaluate("SELECT * FROM S WHERE A ; B WITHIN 5 [t]", events)
    with pytest.raises(ceql.CeqlEventError):
        engine("SELECT * FROM S WHERE A ; B WITHIN 5 [t]", events)


def test_a_double_window_attribute_of_a_type_the_query_does_not_name_rejects_it_too():
    # docs/language.md#s1-1a: an event type the query does not name is accepted (it is in the input), and its
    # coordinate is read like any other (docs/language.md#s3-7: "along the accepted events").
    events = [{"type": "A", "t": 0}, {"type": "X", "t": 1.0}, {"type": "B", "t": 2}]
    with pytest.raises(TypeError):
        evaluate("SELECT * FROM S WHERE A ; B WITHIN 5 [t]", events)


def test_integer_and_null_window_attributes_are_still_accepted_or_dropped():
    # An integer coordinate is the coordinate; a NULL one is a late event (dropped, docs/language.md#s3-7).
    events = [{"type": "A", "t": 0}, {"type": "B", "t": None}, {"type": "B"}, {"type": "B", "t": 5}]
    q = "SELECT * FROM S WHERE A ; B WITHIN 5 [t]"
    assert evaluate(q, events).matches() == [(0, 3, (0, 3))]
    assert engine(q, events) == [(0, 3, (0, 3))]


# ---------------------------------------------------------------------------------------
# Finding 3: docs/language.md#s3-5a, outputs with different measure values are two outputs; "measure values
# compare as numbers (1 and 1.0 are equal) and a NaN equals a NaN"; a boolean is not a number
# (docs/language.md#s3-4: booleans and numbers are different kinds).

MQ = "SELECT first(b.v) AS f FROM S WHERE A ; B AS b ; C"


def _measure_events(x, y):
    return [{"type": "A"}, {"type": "B", "v": x}, {"type": "B", "v": y}, {"type": "C"}]


def test_a_boolean_measure_is_not_the_number_one():
    got = evaluate(MQ, _measure_events(True, 1)).matches()
    assert sorted(repr(m[3][0][1]) for m in got) == ["1", "True"]
    assert len(got) == 2 and {m[:3] for m in got} == {(0, 3, ())}
    got = evaluate(MQ, _measure_events(False, 0)).matches()
    assert sorted(repr(m[3][0][1]) for m in got) == ["0", "False"]


def test_one_and_one_point_zero_are_one_measure_value():
    got = evaluate(MQ, _measure_events(1, 1.0)).matches()
    assert len(got) == 1 and got[0][3][0][1] == 1


def test_nan_measures_are_one_output():
    got = evaluate(MQ, _measure_events(float("nan"), float("nan"))).matches()
    assert len(got) == 1


def test_measures_compare_by_kind_with_plain_tuples():
    (m,) = evaluate("SELECT first(b.v) AS f FROM S WHERE A ; B AS b ; C",
                    [{"type": "A"}, {"type": "B", "v": True}, {"type": "C"}]).matches()
    assert m == (0, 2, (), (("f", True),))
    assert m != (0, 2, (), (("f", 1),))
    assert m[3] == (("f", True),) and isinstance(m[3][0][1], bool)


def test_the_engine_agrees_on_true_and_one():
    ms = ceql.compile(MQ).run(_measure_events(True, 1))
    assert sorted(repr(m.measures["f"]) for m in ms) == ["1", "True"]


# ---------------------------------------------------------------------------------------
# Finding 4: a trailing ABSENT(...) FOR whose filter reads the match (spec note 17). docs/language.md#s3-3b:
# an output is kept iff no later event "satisfies β (as for docs/language.md#s3-3a)"; docs/language.md#s3-3a: the absent event's
# own variables hold exactly p, every other variable what the match binds. The engine refuses
# these queries with E0500.

TRAIL = "SELECT * FROM S WHERE A AS a ; ABSENT(%s) FOR 1 SECONDS WITHIN 5 SECONDS"
TRAIL_EVENTS = [{"type": "A", "v": 5, "t": 0}, {"type": "B", "v": 1, "t": 500_000_000},
                {"type": "X", "t": 3_000_000_000}]


@pytest.mark.parametrize("beta,expected", [
    # B(v=1): 1 > 5 is false, so nothing cancels; X passes the deadline: [0,0]{0}
    ("B FILTER B[v > a.v]", [(0, 0, (0,))]),
    # count(a) = 1 (the match's a), 1 > 1 is false
    ("B FILTER B[v > count(a)]", [(0, 0, (0,))]),
    # 1 < 5 is true: the B cancels
    ("B FILTER B[v < a.v]", []),
    ("B FILTER B[v >= count(a)]", []),
    # a name of the absent event is one of its own variables: b holds the B
    ("B AS b FILTER b[v < a.v]", []),
    ("B AS b FILTER b[v > a.v]", [(0, 0, (0,))]),
    # a one-event filter and one reading the match, both needed
    ("B FILTER B[v < a.v] AND B[v > 3]", [(0, 0, (0,))]),
])
def test_a_trailing_absence_reads_the_match(beta, expected):
    got = evaluate(TRAIL % beta, TRAIL_EVENTS, schema=SCHEMA, time_field="t").matches()
    assert got == expected
    try:
        assert engine(TRAIL % beta, TRAIL_EVENTS, SCHEMA, time_field="t") == expected
    except ceql.CeqlError as e:
        assert e.code == "E0500"


def test_a_trailing_absence_reading_the_match_is_per_valuation():
    # Each A is a match of its own (ending at 0 and at 1). The B(v=3) at 2 is in both gaps: it
    # cancels the second (3 > 0) but not the first (3 > 5 is false); X at 3 s passes both
    # deadlines (1 s and 1.1 s).
    q = TRAIL % "B FILTER B[v > a.v]"
    events = [{"type": "A", "v": 5, "t": 0}, {"type": "A", "v": 0, "t": 100_000_000},
              {"type": "B", "v": 3, "t": 500_000_000}, {"type": "X", "t": 3_000_000_000}]
    assert evaluate(q, events, schema=SCHEMA, time_field="t").matches() == [(0, 0, (0,))]


def test_a_trailing_absence_reading_a_variable_after_the_first_event():
    # A AS a ; C AS c ; ABSENT(B FILTER B[v > c.v]): the absent event reads c, bound by the
    # chain. Over A C(v=2) B(v=1) X: 1 > 2 false, kept; with C(v=0): cancelled.
    q = "SELECT * FROM S WHERE A AS a ; C AS c ; ABSENT(B FILTER B[v > c.v]) FOR 1 SECONDS WITHIN 5 SECONDS"
    for cv, expected in [(2, [(0, 1, (0, 1))]), (0, [])]:
        events = [{"type": "A", "t": 0}, {"type": "C", "v": cv, "t": 100}, {"type": "B", "v": 1, "t": 200},
                  {"type": "X", "t": 3_000_000_000}]
        assert evaluate(q, events, schema=SCHEMA, time_field="t").matches() == expected


def test_a_trailing_absence_reading_the_match_raises_its_data_errors():
    # Schema-less: B(v='x') against a.v = 5 is a type error on the kept valuation.
    q = TRAIL % "B FILTER B[v > a.v]"
    events = [{"type": "A", "v": 5, "t": 0}, {"type": "B", "v": "x", "t": 500_000_000},
              {"type": "X", "t": 3_000_000_000}]
    with pytest.raises(OracleEventError):
        evaluate(q, events, time_field="t")
    # ... unless another B in the gap cancels it ("must": FALSE stops the test in some order)
    events.insert(1, {"type": "B", "v": 9, "t": 100})
    assert evaluate(q, events, time_field="t").matches() == []
    with pytest.raises(OracleEventError):
        evaluate(q, events, time_field="t", data_errors="may")


# ---------------------------------------------------------------------------------------
# Finding 5: routing's data errors (docs/language.md#s3-4b) are not modelled (spec note 18): the oracle gives
# the unrouted for-all's answer, which tests/test_oracle_routing.py relies on. The engine
# raises for a routing key of magnitude 2^53.

def test_the_oracle_does_not_model_routing_errors():
    q = "SELECT * FROM S WHERE A AS a ; B AS b FILTER b[w = a.w]"
    events = [{"type": "A", "w": 2.0 ** 53}, {"type": "B", "w": 2.0 ** 53}]
    assert evaluate(q, events, schema=SCHEMA).matches() == [(0, 1, (0, 1))]
    import oracle

    assert "18. Equalities routed by key" in oracle.__doc__
    with pytest.raises(ceql.CeqlEventError):
        engine(q, events, SCHEMA)


# ---------------------------------------------------------------------------------------
# Finding 7: docs/language.md#s1-4, "if the declarations give some event types a primary_time, an event of
# another type (and no time_field) has a missing time stamp"; docs/language.md#s3-7: with late="drop" (the
# oracle's model, spec note 11) it is dropped.

MIXED = "CREATE STREAM S { EVENT A { v:int, t:primary_time }, EVENT B { v:int }, EVENT C { v:int, t:primary_time } }"


@pytest.mark.parametrize("other", [{"type": "B", "v": 1}, {"type": "Q", "v": 1}])
def test_a_missing_time_stamp_is_dropped_when_other_types_carry_event_time(other):
    events = [{"type": "A", "t": 0}, other, {"type": "C", "t": 5}]
    q = "SELECT * FROM S WHERE A ; C WITHIN 10 SECONDS"
    assert evaluate(q, events, schema=MIXED).matches() == [(0, 2, (0, 2))]
    assert engine(q, events, MIXED, late="drop") == [(0, 2, (0, 2))]


def test_a_dropped_event_breaks_no_contiguity_and_matches_nothing():
    # The B without time stamp is in no substream (docs/language.md#s3-1): A : C matches across it, and a
    # pattern on B never matches it.
    events = [{"type": "A", "t": 0}, {"type": "B", "v": 1}, {"type": "C", "t": 5}]
    assert evaluate("SELECT * FROM S WHERE A : C WITHIN 10 SECONDS", events, schema=MIXED).matches() == [
        (0, 2, (0, 2))]
    assert evaluate("SELECT * FROM S WHERE A ; B WITHIN 10 SECONDS", events, schema=MIXED).matches() == []


def test_time_field_still_gives_the_other_types_a_time_stamp():
    # docs/language.md#s1-4 order: primary_time, else time_field.
    events = [{"type": "A", "t": 0}, {"type": "B", "v": 1, "ts": 3}, {"type": "C", "t": 5}]
    q = "SELECT * FROM S WHERE A ; B ; C WITHIN 10 SECONDS"
    assert evaluate(q, events, schema=MIXED, time_field="ts").matches() == [(0, 2, (0, 1, 2))]


def test_no_time_source_at_all_is_still_the_documented_value_error():
    # Spec note 11: wall-clock time is not modelled. The primary_time of a stream not in FROM
    # does not count (the engine uses the wall clock there).
    sch = MIXED + " CREATE STREAM T { EVENT A { v:int }, EVENT C { v:int } }"
    with pytest.raises(ValueError):
        evaluate("SELECT * FROM T WHERE A ; C WITHIN 10 SECONDS", [{"type": "A"}, {"type": "C"}], schema=sch)


# ---------------------------------------------------------------------------------------
# Finding 8: docs/language.md#s1-1, int is "64-bit signed integers"; docs/language.md#s1-2, "A supplied value of the wrong type
# for its declaration rejects the event"; without declarations the value domain is still i64.

@pytest.mark.parametrize("schema", [SCHEMA, None])
@pytest.mark.parametrize("big", [2 ** 70, 2 ** 63, -2 ** 63 - 1])
def test_an_integer_beyond_64_bits_rejects_the_event(schema, big):
    with pytest.raises(TypeError):
        evaluate("SELECT * FROM S WHERE A FILTER A[v > 0]", [{"type": "A", "v": big}], schema=schema)
    with pytest.raises(ceql.CeqlEventError):
        engine("SELECT * FROM S WHERE A FILTER A[v > 0]", [{"type": "A", "v": big}], schema)


@pytest.mark.parametrize("schema", [SCHEMA, None])
def test_the_64_bit_bounds_are_accepted(schema):
    events = [{"type": "A", "v": 2 ** 63 - 1}, {"type": "A", "v": -2 ** 63}]
    assert evaluate("SELECT * FROM S WHERE A FILTER A[v > 0]", events, schema=schema).matches() == [(0, 0, (0,))]


def test_an_integer_beyond_64_bits_for_a_double_attribute_rejects_the_event():
    # docs/language.md#s1-1: "an integer supplied for a double attribute is converted": an integer of the
    # model, i.e. a 64-bit one.
    with pytest.raises(TypeError):
        evaluate("SELECT * FROM S WHERE A FILTER A[w > 0]", [{"type": "A", "w": 2 ** 70}], schema=SCHEMA)


def test_an_integer_beyond_64_bits_of_a_type_the_query_does_not_name_rejects_it_too():
    with pytest.raises(TypeError):
        evaluate("SELECT * FROM S WHERE A", [{"type": "A"}, {"type": "Z", "v": 2 ** 64}])


def test_a_time_stamp_beyond_64_bit_nanoseconds_rejects_the_event_when_read():
    # docs/language.md#s1-4: "A time stamp outside 64-bit nanoseconds ... rejects the event"; "Time stamps are
    # read only by duration windows".
    events = [{"type": "A", "t": 0}, {"type": "B", "t": 2 ** 62}]
    with pytest.raises(TypeError):
        evaluate("SELECT * FROM S WHERE A ; B WITHIN 5 SECONDS", events, time_field="t", time_unit="s")
    assert evaluate("SELECT * FROM S WHERE A ; B", events, time_field="t", time_unit="s").matches() == [
        (0, 1, (0, 1))]


# ---------------------------------------------------------------------------------------
# Finding 9 (documentation): spec note 12 now says what §3.8 says and the code does.

def test_partition_groups_without_a_schema_fall_through_a_null():
    events = [{"type": "A", "w": None, "k": 1}, {"type": "B", "k": 1}]
    assert evaluate("SELECT * FROM S WHERE A ; B PARTITION BY [w, k]", events).matches() == [(0, 1, (0, 1))]
    import oracle

    assert "takes the key of ``k``" in oracle.__doc__
    assert "E0300-E0305" in oracle.__doc__ and "E0200-E0210" in oracle.__doc__
