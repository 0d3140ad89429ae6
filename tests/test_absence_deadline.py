"""Trailing absence with a deadline, ``ψ ; ABSENT(β) FOR d`` (docs/language.md#s3-3b): the
section's example (expected values written from the text), when matches are reported
(``run``, ``close_deadlines``, ``Stream.advance_watermark``), snapshots, the static errors
E0303/E0304 with their carets, ``FOR`` as an identifier, and the bound on the state.
The randomized comparison with the oracle is tests/test_differential_deadline.py."""

from __future__ import annotations

import pytest

import ceql

QUERY = """SELECT * FROM S WHERE ORDER AS o ; ABSENT(PAYMENT) FOR 30 minutes
PARTITION BY [id] WITHIN 1 hour"""

MIN = 60  # seconds


def orders():
    # t in seconds
    return [
        {"type": "ORDER", "id": 1, "t": 0},  # 0: paid at 20 min: no alert
        {"type": "ORDER", "id": 2, "t": 10 * MIN},  # 1: paid at 40 min, exactly its deadline: no alert
        {"type": "PAYMENT", "id": 1, "t": 20 * MIN},  # 2
        {"type": "ORDER", "id": 3, "t": 35 * MIN},  # 3: never paid; deadline 65 min
        {"type": "PAYMENT", "id": 2, "t": 40 * MIN},  # 4
        {"type": "ORDER", "id": 4, "t": 60 * MIN},  # 5: never paid; deadline 90 min
        {"type": "PING", "id": 9, "t": 70 * MIN},  # 6: time passes 65 min: order 3 is reported
    ]


def spans(matches):
    return [(m.start, m.end, tuple(m.positions)) for m in matches]


def test_run_reports_the_deadlines_the_input_reaches():
    q = ceql.compile(QUERY)
    assert spans(q.run(orders(), time_field="t", time_unit="s")) == [(3, 3, (3,))]


def test_close_deadlines_reports_the_rest():
    q = ceql.compile(QUERY)
    got = q.run(orders(), time_field="t", time_unit="s", close_deadlines=True)
    assert spans(got) == [(3, 3, (3,)), (5, 5, (5,))]
    assert [m.events[0]["id"] for m in got] == [3, 4]


def test_stream_watermark_fires_deadlines_before_it():
    q = ceql.compile(QUERY)
    s = q.stream(time_field="t", time_unit="s")
    assert s.push_many(orders()[:6]) == []  # the last time stamp (60 min) is before 65 min
    assert s.waiting == 2  # orders 3 and 4 (orders 1 and 2 were cancelled by their payments)
    assert spans(s.advance_watermark(65 * MIN)) == []  # a deadline fires strictly after it
    fired = s.advance_watermark(65 * MIN + 1)
    assert spans(fired) == [(3, 3, (3,))] and fired[0].events == [orders()[3]]
    assert fired[0].deadline == 65 * MIN * 10 ** 9  # the time stamp of its last event + 30 minutes, in ns
    assert s.next_deadline() == 90 * MIN + 1
    assert not s.is_idle()
    assert spans(s.close_deadlines()) == [(5, 5, (5,))]
    assert s.waiting == 0 and s.close_deadlines() == []


def test_every_match_shows_its_deadline():
    q = ceql.compile(QUERY)
    got = q.run(orders(), time_field="t", time_unit="s", close_deadlines=True)
    assert [m.deadline for m in got] == [65 * MIN * 10 ** 9, 90 * MIN * 10 ** 9]
    plain = ceql.compile("SELECT * FROM S WHERE ORDER WITHIN 1 hour")
    assert [m.deadline for m in plain.run(orders()[:1], time_field="t", time_unit="s")] == [None]


def test_a_payment_of_another_partition_does_not_cancel():
    q = ceql.compile(QUERY)
    events = [{"type": "ORDER", "id": 1, "t": 0}, {"type": "PAYMENT", "id": 2, "t": MIN},
              {"type": "PING", "id": 9, "t": 31 * MIN}]
    assert spans(q.run(events, time_field="t", time_unit="s")) == [(0, 0, (0,))]


def test_snapshot_keeps_the_waiting_matches():
    q = ceql.compile(QUERY)
    s = q.stream(time_field="t", time_unit="s")
    s.push_many(orders()[:4])
    restored = ceql.Stream.restore(q, s.snapshot())
    assert restored.waiting == s.waiting
    rest = orders()[4:]
    assert spans(restored.push_many(rest)) == spans(s.push_many(rest)) == [(3, 3, (3,))]


def test_projection_and_window_apply_to_the_positive_part():
    q = ceql.compile("SELECT o FROM S WHERE ORDER AS o ; ORDER+ ; ABSENT(PAYMENT) FOR 1 second "
                     "WITHIN 1 second")
    events = [{"type": "ORDER", "t": 0}, {"type": "ORDER", "t": 1}, {"type": "ORDER", "t": 2},
              {"type": "PING", "t": 9}]
    # [0,2] is outside the window; each of [0,1] and [1,2] waits 1 s and is reported at t = 9
    assert sorted(spans(q.run(events, time_field="t", time_unit="s"))) == [(0, 1, (0,)), (1, 2, (1,))]


@pytest.mark.parametrize("query,code,caret", [
    ("SELECT * FROM S WHERE A ; ABSENT(B) FOR 5 seconds ; C WITHIN 1 minute", "E0303", "FOR 5 seconds"),
    ("SELECT * FROM S WHERE (A ; ABSENT(B) FOR 5 seconds) OR C WITHIN 1 minute", "E0303", "FOR 5 seconds"),
    ("SELECT * FROM S WHERE ABSENT(B) FOR 5 seconds WITHIN 1 minute", "E0302", "ABSENT(B) FOR 5 seconds"),
    ("SELECT * FROM S WHERE A ; ABSENT(C) ; ABSENT(B) FOR 5 seconds WITHIN 1 minute", "E0302", "ABSENT(C)"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) FOR 5 seconds WITHIN 3 EVENTS", "E0304", "3 EVENTS"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) FOR 5 seconds", "E0304", "FOR 5 seconds"),
    ("SELECT * FROM S WHERE A ; ABSENT(B) FOR 5 seconds WITHIN 1 minute CONSUME BY ANY", "E0304",
     "FOR 5 seconds"),
])
def test_static_errors(query, code, caret):
    with pytest.raises(ceql.CeqlError) as info:
        ceql.compile(query)
    e = info.value
    assert e.code == code, str(e)
    assert query[e.column - 1: e.end_column - 1] == caret, str(e)


def test_for_stays_an_identifier():
    q = ceql.compile("SELECT * FROM S WHERE FOR ; A FILTER FOR[for > 1] ; ABSENT(FOR) FOR 1 second "
                     "WITHIN 5 seconds")
    events = [{"type": "FOR", "for": 2, "t": 0}, {"type": "A", "t": 1}, {"type": "A", "t": 3}]
    assert spans(q.run(events, time_field="t", time_unit="s")) == [(0, 1, (0, 1))]


def test_the_state_is_bounded_by_the_deadline():
    q = ceql.compile("SELECT * FROM S WHERE ORDER ; ABSENT(PAYMENT) FOR 10 seconds PARTITION BY [id] "
                     "WITHIN 1 minute")
    s = q.stream(time_field="t", time_unit="s")
    most = 0
    reported = 0
    for i in range(5000):
        reported += len(s.push({"type": "ORDER", "id": i, "t": i}))
        if i % 2:
            s.push({"type": "PAYMENT", "id": i, "t": i})
        most = max(most, s.waiting)
    # one order per second waits 10 seconds; cancelled ones are dropped when due
    assert most <= 11
    assert reported == (5000 - 11) // 2 + 1


def arrow_rows(table):
    return [(r["match_id"], r["start"], r["end"], tuple(r["positions"])) for r in table.to_pylist()]


def test_run_arrow_takes_close_deadlines_as_run_does():
    """Orders 3 and 4 are never paid: 3's deadline (65 min) is passed by the PING at
    70 min, 4's (90 min) only by closing. The match ids continue across the two."""
    pa = pytest.importorskip("pyarrow")
    q = ceql.compile(QUERY)
    table = pa.Table.from_pylist(orders())
    assert arrow_rows(q.run_arrow(table, time_field="t", time_unit="s")) == [(0, 3, 3, (3,))]
    closed = q.run_arrow(table, time_field="t", time_unit="s", close_deadlines=True)
    assert arrow_rows(closed) == [(0, 3, 3, (3,)), (1, 5, 5, (5,))]
    narrow = q.run_arrow(table, time_field="t", time_unit="s", close_deadlines=True, position_type="uint32")
    assert narrow.schema.field("start").type == pa.uint32() and arrow_rows(narrow) == arrow_rows(closed)
    # Events Arrow cannot type (an id that is an int and a string) go row by row.
    mixed = orders() + [{"type": "PING", "id": "x", "t": 71 * MIN}]
    assert arrow_rows(q.run_arrow(mixed, time_field="t", time_unit="s", close_deadlines=True)) == arrow_rows(closed)
    captured = q.run_arrow(table, time_field="t", time_unit="s", close_deadlines=True, captures=True)
    assert captured.column("variables").to_pylist() == [[["ORDER", "o"]], [["ORDER", "o"]]]


def test_run_arrow_batches_ends_with_the_closed_deadlines():
    pa = pytest.importorskip("pyarrow")
    q = ceql.compile(QUERY)
    reader = q.run_arrow_batches(pa.Table.from_pylist(orders()), time_field="t", time_unit="s",
                                 close_deadlines=True, slice_rows=2)
    assert [arrow_rows(pa.Table.from_batches([b])) for b in reader] == [[(0, 3, 3, (3,))], [(1, 5, 5, (5,))]]


@pytest.mark.parametrize("runner", ["run_arrow", "run_arrow_batches"])
def test_the_arrow_runners_refuse_max_delay(runner):
    pa = pytest.importorskip("pyarrow")
    q = ceql.compile(QUERY)
    with pytest.raises(ValueError, match=rf"{runner} does not take max_delay.*sort_by"):
        getattr(q, runner)(pa.Table.from_pylist(orders()), time_field="t", time_unit="s", max_delay=5)
