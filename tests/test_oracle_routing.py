"""The oracle's ``=`` between variables on the values where the equality of predicates and the
equality of partition keys part (docs/language.md#s3-4, #s3-4a, #s3-4b): integers and doubles,
NULL, NaN, -0.0, integers beyond 2^53, infinities, kinds. The oracle knows nothing of routing: it
tests the for-all on every valuation. Each expected output is worked out by hand from the text in
the comment above it, never taken from an engine."""

import pytest

from oracle import OracleEventError, evaluate

Q = "SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]"


def login(user):
    return {"type": "LOGIN"} if user is ... else {"type": "LOGIN", "user": user}


def pairs(values, query=Q):
    return evaluate(query, [login(u) for u in values]).matches()


def test_an_integer_and_a_double_of_the_same_value_are_equal():
    # docs/language.md#s3-4: the integer is converted to a double: 1 = 1.0 TRUE; 2 equals neither.
    assert pairs([1, 1.0, 2]) == [(0, 1, (0, 1))]


def test_minus_zero_is_zero():
    # -0.0 = 0 and -0.0 = 0.0 and 0 = 0.0: every pair.
    assert pairs([-0.0, 0, 0.0]) == [(0, 1, (0, 1)), (0, 2, (0, 2)), (1, 2, (1, 2))]


def test_nan_equals_nothing_not_even_nan():
    # A NaN operand makes the comparison UNKNOWN (docs/language.md#s3-4), which rejects: only 1.0 = 1.
    assert pairs([float("nan"), float("nan"), 1.0, 1]) == [(2, 3, (2, 3))]


def test_null_equals_nothing():
    # NULL (or an absent attribute) = anything is UNKNOWN: only the two 'u'.
    assert pairs([None, None, ..., "u", "u"]) == [(3, 4, (3, 4))]


def test_a_fraction_is_no_integer():
    # 1.5 = 1 FALSE, 1.5 = 2 FALSE, 1.5 = 1.5 TRUE.
    assert pairs([1.5, 1, 2, 1.5]) == [(0, 3, (0, 3))]


def test_infinities():
    # inf = inf TRUE; -inf equals neither; no integer is infinite.
    assert pairs([float("inf"), float("inf"), float("-inf"), 2 ** 62]) == [(0, 1, (0, 1))]


def test_integers_beyond_two_to_the_53():
    big = 2 ** 53
    # Two integers compare exactly: 2^53 + 1 = 2^53 + 1 TRUE (0, 2), 2^53 + 1 = 2^53 FALSE.
    # The double 2^53 (3): an integer is converted first, and 2^53 + 1 rounds (half to even)
    # to 2^53, so 2^53 + 1 = 2^53 (double) is TRUE: (0, 3), (2, 3); 2^53 = 2^53 (double): (1, 3).
    assert pairs([big + 1, big, big + 1, float(big)]) == [
        (0, 2, (0, 2)), (0, 3, (0, 3)), (1, 3, (1, 3)), (2, 3, (2, 3))]


def test_equality_is_not_transitive_beyond_two_to_the_53():
    big = 2 ** 53
    # a = b (2^53 + 1 rounds to the double 2^53) and b = c (2^53 = 2^53), although a != c as
    # integers: the filter only tests the two written equalities, so the match holds.
    q = "SELECT * FROM S WHERE A AS a ; B AS b ; C AS c FILTER b[k = a.k] AND c[k = b.k]"
    events = [{"type": "A", "k": big + 1}, {"type": "B", "k": float(big)}, {"type": "C", "k": big}]
    assert evaluate(q, events).matches() == [(0, 2, (0, 1, 2))]
    # With a third equality between a and c, it fails.
    q3 = q.replace("AND c[k = b.k]", "AND c[k = b.k] AND c[k = a.k]")
    assert evaluate(q3, events).matches() == []


def test_booleans_and_strings_compare_within_their_kind():
    assert pairs([True, False, True]) == [(0, 2, (0, 2))]
    assert pairs(["1", "01", "1"]) == [(0, 2, (0, 2))]


@pytest.mark.parametrize("values", [["1", 1], [True, 1], ["x", False]])
def test_two_kinds_are_a_type_error(values):
    # docs/language.md#s3-4: `=` takes two numbers, two strings or two booleans; anything else is an error on the
    # events, raised when a valuation puts them together.
    with pytest.raises(OracleEventError):
        pairs(values)


def test_the_for_all_covers_every_event_of_an_iteration():
    # a = 1 (0); the Bs 1 (1), 2 (2), 1.0 (3): the runs are the non-empty subsets of {1, 2, 3}
    # whose every event equals a: {1}, {3}, {1, 3}.
    q = "SELECT * FROM S WHERE A AS a ; (B AS b)+ FILTER b[k = a.k]"
    events = [{"type": "A", "k": 1}, {"type": "B", "k": 1}, {"type": "B", "k": 2}, {"type": "B", "k": 1.0}]
    assert evaluate(q, events).matches() == [(0, 1, (0, 1)), (0, 3, (0, 1, 3)), (0, 3, (0, 3))]


def test_next_chooses_among_the_valuations_that_pass():
    # Strategies select among the valuations that pass the filters (design, section 2): at 3 the
    # passing valuations are {0, 3} and {2, 3} (user 1); NEXT takes the earliest, {0, 3}, not
    # {1, 3} (user 2), which does not pass. At 4 (user 2): {1, 4}.
    q = "SELECT NEXT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]"
    assert evaluate(q, [login(u) for u in [1, 2, 1.0, 1, 2]]).matches() == [
        (0, 2, (0, 2)), (0, 3, (0, 3)), (1, 4, (1, 4))]
