"""The reorder buffer through the Python API (``max_delay``, docs/language.md#s3-7a):
options, late events, flush, caller watermarks, Arrow input, snapshots, the state
budget. Expected outputs are those of the input sorted by hand (the contract) or
follow from the section's rules step by step."""

from __future__ import annotations

import datetime as dt
import struct
import zlib

import pytest

import ceql
from conftest import as_triples

Q = "SELECT * FROM S WHERE A ; B WITHIN 5 seconds"


def ev(ty, ts, **attrs):
    return dict(type=ty, ts=ts, **attrs)


SORTED = [ev("A", 1), ev("B", 2), ev("B", 3), ev("A", 4), ev("C", 5), ev("B", 6), ev("B", 9)]
# The same events, each at most 2 s behind the largest time stamp before it.
SHUFFLED = [ev("B", 2), ev("A", 1), ev("A", 4), ev("B", 3), ev("B", 6), ev("C", 5), ev("B", 9)]


def _sorted_run(q, events):
    return as_triples(q.run(events, time_field="ts", time_unit="s"))


def test_run_with_max_delay_gives_the_sorted_streams_output_and_events():
    q = ceql.compile(Q)
    matches = q.run(SHUFFLED, time_field="ts", time_unit="s", max_delay=2)
    assert as_triples(matches) == _sorted_run(q, SORTED)
    for m in matches:
        assert m.events == [SORTED[p] for p in m.positions]


@pytest.mark.parametrize("delay", [2, 2.0, "2 seconds", "2000 ms", "0.5 minutes", dt.timedelta(seconds=2)])
def test_every_spelling_of_the_delay(delay):
    q = ceql.compile(Q)
    assert as_triples(q.run(SHUFFLED, time_field="ts", time_unit="s", max_delay=delay)) == _sorted_run(q, SORTED)


@pytest.mark.parametrize("delay, why", [(-1, "negative"), (float("nan"), "not finite"), (float("inf"), "not finite"),
                                        ("ten seconds", "cannot read"), ("10 fortnights", "unknown unit"),
                                        (True, "not bool"), ([1], "not list"), (1e300, "2^63")])
def test_a_bad_delay_is_a_value_error_naming_max_delay(delay, why):
    with pytest.raises(ValueError, match="max_delay") as e:
        ceql.compile(Q).stream(time_field="ts", max_delay=delay)
    assert why in str(e.value)


def test_max_delay_needs_a_time_field():
    with pytest.raises(ValueError, match="time_field"):
        ceql.compile("SELECT * FROM S WHERE A ; B").stream(max_delay=1)


def test_a_late_event_raises_naming_the_time_field_and_the_stream_goes_on():
    s = ceql.compile(Q).stream(time_field="ts", time_unit="s", max_delay=1)
    s.push(ev("A", 10))  # watermark 9
    with pytest.raises(ceql.CeqlEventError) as e:
        s.push(ev("B", 8))
    assert e.value.field == "ts" and "late" in str(e.value)
    assert s.push(ev("B", 9)) == []  # at the watermark: on time, and released at once (before A@10)
    assert s.position == 1
    s.push(ev("B", 11))
    assert as_triples(s.flush()) == [(1, 2, (1, 2))]


def test_late_events_are_dropped_and_counted():
    q = ceql.compile(Q)
    s = q.stream(time_field="ts", time_unit="s", max_delay=1, late="drop")
    out = []
    for e in [ev("A", 10), ev("B", 8), ev("B", 12), ev("B", 11.5)]:
        out += s.push(e)
    out += s.flush()
    assert as_triples(out) == [(0, 1, (0, 1)), (0, 2, (0, 2))]  # A@10 B@11.5 B@12; B@8 is late
    stats = s.stats()
    assert stats["late_dropped"] == stats["reorder_late"] == 1
    assert stats["reorder_released"] == 3 and stats["reorder_held"] == 0 and stats["reorder_reordered"] == 1


def test_a_push_returns_the_matches_of_what_it_released():
    s = ceql.compile(Q).stream(time_field="ts", time_unit="s", max_delay=2)
    assert s.push(ev("A", 1)) == [] and s.push(ev("B", 2)) == []
    assert s.position == 0  # both held: the watermark is 0
    assert as_triples(s.push(ev("X", 4))) == [(0, 1, (0, 1))]  # watermark 2 releases A@1, B@2
    assert s.position == 2


def test_the_callers_watermark_releases_and_then_earlier_events_are_late():
    s = ceql.compile(Q).stream(time_field="ts", time_unit="s", max_delay=100, late="drop")
    s.push(ev("A", 1))
    s.push(ev("B", 2))
    assert as_triples(s.advance_watermark(2)) == [(0, 1, (0, 1))]
    assert s.push(ev("B", 1.5)) == [] and s.stats()["reorder_late"] == 1
    assert as_triples(s.advance_watermark(dt.datetime(1970, 1, 1, 0, 0, 3, tzinfo=dt.timezone.utc))) == []


def test_flush_makes_earlier_events_late():
    s = ceql.compile(Q).stream(time_field="ts", time_unit="s", max_delay=100)
    s.push(ev("A", 5))
    s.flush()
    with pytest.raises(ceql.CeqlEventError):
        s.push(ev("B", 4))
    # Ties with the largest time stamp are on time, and released at once (5 ≤ watermark).
    assert as_triples(s.push(ev("B", 5))) == [(0, 1, (0, 1))]
    assert s.flush() == []


def test_arrow_input_goes_through_the_buffer():
    pa = pytest.importorskip("pyarrow")
    q = ceql.compile(Q)
    s = q.stream(time_field="ts", time_unit="s", max_delay=2)
    table = pa.Table.from_pylist(SHUFFLED)
    out = s.push_batch(table.slice(0, 4)) + s.push_batch(table.slice(4)) + s.flush()
    assert as_triples(out) == _sorted_run(q, SORTED)
    assert [m.events for m in out] == [[SORTED[p] for p in m.positions] for m in out]


@pytest.mark.parametrize("cut", range(len(SHUFFLED) + 1))
def test_a_snapshot_keeps_the_held_events(cut):
    q = ceql.compile(Q)
    s = q.stream(time_field="ts", time_unit="s", max_delay=2)
    out = s.push_many(SHUFFLED[:cut])
    held = s.stats()["reorder_held"]
    s2 = ceql.Stream.restore(q, s.snapshot())
    assert s2.stats()["reorder_held"] == held
    out += s2.push_many(SHUFFLED[cut:]) + s2.flush()
    assert as_triples(out) == _sorted_run(q, SORTED)
    assert [m.events for m in out] == [[SORTED[p] for p in m.positions] for m in out]


def test_a_delay_too_large_for_the_budget_is_a_memory_error_naming_the_buffer():
    s = ceql.compile(Q).stream(time_field="ts", max_delay="1 day", max_state_bytes=1 << 20)
    with pytest.raises(ceql.CeqlMemoryError, match="reorder buffer"):
        for i in range(100_000):
            s.push(ev("A", i, note="x" * 100))


def test_a_bad_value_refused_at_release_is_dropped_and_the_rest_stays_held():
    schema = "CREATE STREAM S { EVENT A { v:int, ts:int }, EVENT B { v:int, ts:int } }"
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER B[v > 0]", schema)
    s = q.stream(time_field="ts", time_unit="s", max_delay=2)
    s.push(ev("A", 1, v=1))
    s.push(ev("B", 2, v="bad"))
    s.push(ev("B", 3, v=2))  # watermark 1 releases A@1
    with pytest.raises(ceql.CeqlEventError) as e:
        s.push(ev("X", 5))  # watermark 3: B@2 is refused, B@3 stays held
    assert e.value.field == "v"
    assert s.position == 1 and s.stats()["reorder_held"] == 2  # B@3 and X@5
    assert as_triples(s.flush()) == [(0, 1, (0, 1))]
    assert s.flush() == []


def test_without_max_delay_flush_and_advance_watermark_return_nothing():
    s = ceql.compile(Q).stream(time_field="ts", time_unit="s")
    s.push(ev("A", 1))
    assert s.flush() == [] and s.advance_watermark(3) == []
    assert "reorder_held" not in s.stats()


def test_a_version_5_engine_snapshot_is_refused_with_its_version():
    """Version 6 changed the options (captures) and appended the deadline queue and the
    reorder buffer, version 7 the stored attribute values, version 8 the routing kind
    check's state, version 9 the type field, version 10 the waiting measures: a
    version-5 engine snapshot is refused, naming its version."""
    q = ceql.compile(Q)
    s = q.stream(time_field="ts", time_unit="s")
    s.push_many(SORTED[:3])
    data = s.snapshot()
    header = len(b"CEQLPY") + 10
    version, n = struct.unpack("<HQ", data[len(b"CEQLPY"):header])
    native, rest = data[header:header + n], data[header + n:-4]
    assert native[8:12] == (10).to_bytes(4, "little")
    old = native[:8] + (5).to_bytes(4, "little") + native[12:]
    body = b"CEQLPY" + struct.pack("<HQ", version, len(old)) + old + rest
    with pytest.raises(ceql.CeqlSnapshotError, match="format version 5 is not supported"):
        ceql.Stream.restore(q, body + struct.pack("<I", zlib.crc32(body)))
