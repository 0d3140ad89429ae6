"""Differential tests aimed at the engine's in-place update of T (``runtime/in_place.rs``).

That path handles events where every live det-state stays put and a few of them also mark
into another det-state: the skip loops of long sequences. Its delicate cases are a new node
landing on a det-state whose list is older (the node becomes the head and the entry moves
up), landing on a det-state that is not in T (a new entry in the middle of T), and entries
expiring in the same event. The general random queries of ``test_differential.py`` reach
them only a few times; these cases use long sequences over a small alphabet (types repeat
inside the pattern, so runs overtake one another), long streams and small windows, and
compare the engine with the oracle on every one.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import ceql
import gen
from conftest import as_triples

EXAMPLES = 4 * int(os.environ.get("CEQL_DIFF_EXAMPLES", "300"))

SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TYPES = "ABCD"


@st.composite
def in_place_cases(draw) -> gen.Case:
    n = draw(st.integers(2, 5), label="pattern length")
    pattern = draw(st.lists(st.sampled_from(TYPES), min_size=n, max_size=n), label="pattern")
    # An occasional disjunction gives det-states that several runs reach in different orders.
    elements = [t if not draw(st.integers(0, 4), label="or") == 0 else "(%s OR %s)" % (t, draw(
        st.sampled_from(TYPES), label="alternative")) for t in pattern]
    seps = [draw(st.sampled_from([";", ";", ";", ":"]), label="separator") for _ in range(n - 1)]
    where = elements[0] + "".join(" %s %s" % (s, t) for s, t in zip(seps, elements[1:]))
    clauses = ["SELECT * FROM S WHERE " + where]
    if draw(st.booleans(), label="filter"):
        # A filter splits a type into classes, so one det-state can both stay and mark.
        clauses.append("FILTER %s[v > %d]" % (draw(st.sampled_from(pattern), label="filtered"),
                                              draw(st.integers(0, 3), label="bound")))
    partitioned = draw(st.booleans(), label="partition")
    if partitioned:
        clauses.append("PARTITION BY [k]")
    window = draw(st.integers(1, 12), label="window")
    clauses.append("WITHIN %d EVENTS" % window)
    length = draw(st.integers(10, 60), label="stream length")
    events = [{"type": draw(st.sampled_from(TYPES + "X"), label="type"), "v": draw(st.integers(0, 4), label="v"),
               "k": draw(st.integers(0, 1), label="k")} for _ in range(length)]
    return gen.Case(text=" ".join(clauses), events=events, schema=None, time_field=None, time_unit="ns",
                    window="events")


@SETTINGS
@given(case=in_place_cases(), det_states=st.sampled_from([None, None, None, 2, 4]))
def test_in_place_update_matches_oracle(case, det_states):
    """With a tiny det-state budget the cache clears between events, renumbering the
    det-states of T and dropping the mover masks."""
    note(repr(case))
    oracle_out = gen.run_oracle(case)
    assert oracle_out[0] == "ok", oracle_out
    try:
        matches = ceql.compile(case.text).run(case.events, max_det_states=det_states)
    except ceql.CeqlMemoryError as e:
        # The budget covers the det-states in use: a query whose runs need more of
        # them at once than a tiny budget holds is refused, never answered wrongly.
        assert det_states is not None and f"max_det_states = {det_states}" in str(e), e
        return
    gen.check_outcomes(case, oracle_out, ("ok", as_triples(matches)))
