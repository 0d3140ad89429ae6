"""A double time stamp is rounded to the nearest nanosecond, halves away from zero
(docs/language.md#s1-4): truncation made two-decimal seconds miss window bounds and deadlines
that they meet exactly (2.01 s is 2009999999.9999998 ns as a double), about 2.7% of them.
Every path reads a double the same way: run, a stream, Arrow data, the reorder buffer, the
oracle (written from the spec)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import ceql
from oracle import evaluate

WINDOW = "SELECT * FROM S WHERE A ; B WITHIN 1 second"
EVENTS = [{"type": "A", "t": 2.01}, {"type": "B", "t": 3.01}]  # exactly 1 s apart


def positions(ms):
    return [tuple(m.positions) for m in ms]


def test_two_decimal_seconds_one_second_apart_meet_an_inclusive_window():
    q = ceql.compile(WINDOW)
    assert positions(q.run(EVENTS, time_field="t", time_unit="s")) == [(0, 1)]
    s = q.stream(time_field="t", time_unit="s")
    assert positions(s.push_many(EVENTS)) == [(0, 1)]
    table = pa.table({"type": ["A", "B"], "t": [2.01, 3.01]})
    assert positions(q.run(table, time_field="t", time_unit="s")) == [(0, 1)]
    assert positions(q.run(EVENTS, time_field="t", time_unit="s", max_delay=1)) == [(0, 1)]
    assert [m[:2] for m in evaluate(WINDOW, EVENTS, time_field="t", time_unit="s").matches()] == [(0, 1)]


def test_a_payment_exactly_at_the_deadline_cancels_the_order():
    q = ceql.compile("SELECT * FROM S WHERE ORDER ; ABSENT(PAYMENT) FOR 30 minutes PARTITION BY [id] WITHIN 1 hour")
    evs = [{"type": "ORDER", "id": 1, "t": 2.01}, {"type": "PAYMENT", "id": 1, "t": 1802.01},
           {"type": "X", "t": 5000.0}]
    assert q.run(evs, time_field="t", time_unit="s") == []


@pytest.mark.parametrize("a, b, late", [
    (2.5, 2, True),     # 2.5 ns is 3 ns: B at 2 ns comes before it
    (2.4, 2, False),
    (-2.5, -3, False),  # -2.5 ns is -3 ns (away from zero): B at -3 ns is on time
    (-2.4, -3, True),
])
def test_halves_go_away_from_zero(a, b, late):
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 1 seconds")
    evs = [{"type": "A", "t": a}, {"type": "B", "t": b}]
    if late:
        with pytest.raises(ceql.CeqlEventError, match="time went backwards \\(to -?[23] after -?[23],"):
            q.run(evs, time_field="t")
        # the oracle drops a late event (late="drop", its note 11)
        assert evaluate("SELECT * FROM S WHERE A ; B WITHIN 1 seconds", evs, time_field="t").matches() == []
    else:
        assert positions(q.run(evs, time_field="t")) == [(0, 1)]
        assert [m[:2] for m in evaluate("SELECT * FROM S WHERE A ; B WITHIN 1 seconds", evs,
                                        time_field="t").matches()] == [(0, 1)]
