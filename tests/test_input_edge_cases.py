"""Edge cases of the data users hand over: every input kind must give the same
matches or the same typed error (position and field) as a list of dicts, and no
value may be silently changed on the way in."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import ceql


def triples(matches):
    return sorted((m.start, m.end, tuple(m.positions)) for m in matches)


def outcome(fn):
    try:
        return ("ok", triples(fn()))
    except ceql.CeqlEventError as e:
        return ("error", e.position, e.field)


def test_a_failed_push_batch_keeps_the_rows_processed_before_the_error():
    q = ceql.compile("SELECT * FROM S WHERE A ; B ; C FILTER A[v = 5] WITHIN 10 EVENTS")
    s = q.stream()
    s.push_batch(pa.table({"type": ["A"], "v": [5]}))
    with pytest.raises(ceql.CeqlEventError) as err:
        s.push_batch(pa.table({"type": ["B", "A"], "v": ["7", "zz"]}))
    assert (err.value.position, err.value.field) == (2, "v")
    assert s.position == 2
    (m,) = s.push({"type": "C"})
    assert m.positions == (0, 1, 2)
    assert [e["type"] for e in m.events] == ["A", "B", "C"]
    restored = ceql.Stream.restore(q, s.snapshot())
    assert restored.position == 3


def test_numpy_booleans_are_booleans():
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[f = TRUE] WITHIN 10 EVENTS")
    assert triples(q.run([{"type": "A", "f": np.True_}, {"type": "B"}])) == [(0, 1, (0, 1))]
    assert q.run([{"type": "A", "f": np.False_}, {"type": "B"}]) == []
    numeric = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[f = 1] WITHIN 10 EVENTS")
    with pytest.raises(ceql.CeqlEventError):
        numeric.run([{"type": "A", "f": np.True_}, {"type": "B"}])


def test_run_arrow_on_mappings_keeps_keys_missing_from_the_first_event():
    q = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C FILTER A[v > 1] AND C[s = 'x'] WITHIN 10 EVENTS")
    rows = [{"type": "A", "v": 3}, {"type": "B"}, {"type": "C", "s": "x"}]
    want = [(0, 2, (0, 1, 2))]
    assert triples(q.run(rows)) == want
    table = q.run_arrow(rows)
    assert [(r["start"], r["end"], tuple(r["positions"])) for r in table.to_pylist()] == want
    streamed = [r for b in q.run_arrow_batches(iter(rows)) for r in b.to_pylist()]
    assert streamed == table.to_pylist()


def test_run_arrow_on_mappings_arrow_cannot_type_runs_them_row_by_row():
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[v > 1] WITHIN 10 EVENTS")
    rows = [{"type": "A", "v": 3, "note": 1}, {"type": "B", "note": "x"}]
    table = q.run_arrow(rows)
    assert table.schema == q.run_arrow(pa.table({"type": ["A"], "v": [1]})).schema
    assert table.to_pylist() == [{"match_id": 0, "start": 0, "end": 1, "positions": [0, 1]}]
    assert [b.num_rows for b in q.run_arrow_batches(rows)] == [1]
    bad = rows + [{"type": "A", "v": "zz"}]
    with pytest.raises(ceql.CeqlEventError) as err:
        q.run_arrow(bad)
    assert (err.value.position, err.value.field) == (2, "v")


def test_a_pandas_frame_read_row_by_row_treats_missing_markers_as_null():
    """A column Arrow cannot type sends the frame down the row-by-row path; NaN,
    NaT and pd.NA must still be NULL there, as they are through Arrow."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 10 EVENTS")
    df = pd.DataFrame({"type": ["A", "B", "A", "B"], "k": [np.nan, np.nan, 1.0, 1.0]})
    mixed = df.assign(note=[1, "x", None, 2.5])
    assert triples(q.run(mixed)) == triples(q.run(df)) == [(2, 3, (2, 3))]
    assert triples(q.stream().push_batch(mixed)) == [(2, 3, (2, 3))]
    timed = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 5 seconds")
    frame = pd.DataFrame({"type": ["A", "B", "B"], "ts": pd.to_datetime([0, None, 3_000_000_000]),
                          "note": [1, "x", None]})
    for data in (frame, frame.drop(columns="note")):
        assert triples(timed.run(data, time_field="ts", late="drop")) == [(0, 2, (0, 2))]
        with pytest.raises(ceql.CeqlEventError) as err:
            timed.run(data, time_field="ts")
        assert (err.value.position, err.value.field) == (1, "ts")


def test_pandas_and_numpy_missing_and_duration_values_in_mappings():
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[NOT v > 1] WITHIN 10 EVENTS")
    for missing in (pd.NA, pd.NaT, np.datetime64("NaT"), np.timedelta64("NaT"), None):
        assert q.run([{"type": "A", "v": missing}, {"type": "B"}]) == [], missing
    window = ceql.compile("SELECT * FROM S WHERE A ; B FILTER B[d > 4] WITHIN 10 EVENTS")
    for five_ns in (pd.Timedelta(5), np.timedelta64(5, "ns")):
        assert triples(window.run([{"type": "A"}, {"type": "B", "d": five_ns}])) == [(0, 1, (0, 1))]
    assert triples(window.run([{"type": "A"}, {"type": "B", "d": np.timedelta64(1, "s")}])) == [(0, 1, (0, 1))]


def test_unsigned_integers_beyond_int64_are_an_error_not_a_double():
    q = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 10 EVENTS")
    big = [2**63 + 1, 2**63 + 2]
    events = [{"type": "A", "k": 1}, {"type": "A", "k": big[0]}, {"type": "B", "k": big[1]}]
    table = pa.table({"type": ["A", "A", "B"], "k": pa.array([1] + big, pa.uint64())})
    assert outcome(lambda: q.run(events)) == ("error", 1, "k")
    assert outcome(lambda: q.run(table)) == ("error", 1, "k")
    s = q.stream()
    with pytest.raises(ceql.CeqlEventError):
        s.push_batch(table)
    assert s.position == 1, "the row before the bad value was processed"
    fine = pa.table({"type": ["A", "B"], "k": pa.array([2**63 - 1] * 2, pa.uint64())})
    assert triples(q.run(fine)) == [(0, 1, (0, 1))]


def test_time_stamps_beyond_the_nanosecond_range_are_an_error():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 5 seconds")
    late = [dt.datetime(2300, 1, 1), dt.datetime(2301, 1, 1)]
    table = pa.table({"type": ["A", "B"], "ts": pa.array(late, pa.timestamp("s"))})
    assert outcome(lambda: q.run(table, time_field="ts")) == ("error", 0, "ts")
    assert outcome(lambda: q.run([{"type": "A", "ts": late[0]}], time_field="ts"))[0] == "error"
    numbers = [{"type": "A", "ts": 10**10}, {"type": "B", "ts": 10**10 + 1}]
    assert outcome(lambda: q.run(numbers, time_field="ts", time_unit="s")) == ("error", 0, "ts")
    floats = [{"type": "A", "ts": 1e10}, {"type": "B", "ts": 1e10 + 1}]
    assert outcome(lambda: q.run(floats, time_field="ts", time_unit="s")) == ("error", 0, "ts")
    fine = pa.table({"type": ["A", "B"], "ts": pa.array(late, pa.timestamp("s"))}).slice(0, 0)
    assert q.run(fine, time_field="ts") == []


def test_a_type_that_is_not_valid_text_is_an_event_error():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 10 EVENTS")
    with pytest.raises(ceql.CeqlEventError) as err:
        q.run([{"type": "A"}, {"type": "\ud800"}])
    assert (err.value.position, err.value.field) == (1, "type")
    with pytest.raises(ceql.CeqlEventError) as err:
        q.run([{"type": "A", "stream": "\ud800"}])
    assert err.value.field == "stream"


def test_join_events_never_overwrites_an_event_column():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 10 EVENTS")
    t = pa.table({"type": ["A", "B"], "start": [1, 2], "event_start": [100, 200]})
    rows = ceql.join_events(q.run_arrow(t), t).to_pylist()
    assert [(r["start"], r["event_start"], r["event_event_start"]) for r in rows] == [(0, 100, 1), (0, 200, 2)]


def test_an_event_without_time_source_among_timed_types_is_missing_its_time_stamp():
    """Reference §1.4 falls back to wall-clock time for an event with no time
    source. When other types carry event time, that would put the event decades
    ahead and make every later event late; it is a missing time stamp instead."""
    schema = ("CREATE STREAM S { EVENT A { v: int, ts: primary_time }, EVENT B { v: int, ts: primary_time }, "
              "EVENT Y { ts: primary_time } }\n")
    q = ceql.compile(schema + "SELECT * FROM S WHERE A ; B FILTER A[v > 1] WITHIN 5 seconds")
    second = 1_000_000_000
    declared = [{"type": "A", "v": 2, "ts": 0}, {"type": "Y", "ts": second}, {"type": "B", "v": 0, "ts": 2 * second}]
    assert triples(q.run(declared)) == [(0, 2, (0, 2))]
    undeclared = [{"type": "A", "v": 2, "ts": 0}, {"type": "X", "ts": 10}, {"type": "B", "v": 0, "ts": 20}]
    assert outcome(lambda: q.run(undeclared)) == ("error", 1, "type")
    assert triples(q.run(undeclared, late="drop")) == [(0, 2, (0, 2))]
    untimed = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 5 seconds")
    assert triples(untimed.run([{"type": "A"}, {"type": "X"}, {"type": "B"}])) == [(0, 2, (0, 2))]


def test_date_and_duration_columns_read_like_python_dates_and_timedeltas():
    """date32/date64 columns are midnight UTC time stamps and duration columns
    nanosecond lengths, as `date` and `timedelta` values are in dicts."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER B[d > 4] WITHIN 48 hours")
    days = [dt.date(2020, 1, 1), dt.date(2020, 1, 2), dt.date(2020, 1, 5)]
    lengths = [dt.timedelta(0), dt.timedelta(seconds=5), dt.timedelta(0)]
    events = [{"type": t, "day": day, "d": d} for t, day, d in zip("ABB", days, lengths)]
    want = triples(q.run(events, time_field="day"))
    assert want == [(0, 1, (0, 1))]
    for day_type in (pa.date32(), pa.date64()):
        for unit in ("s", "ms", "us", "ns"):
            table = pa.table({"type": ["A", "B", "B"], "day": pa.array(days, day_type),
                              "d": pa.array(lengths, pa.duration(unit))})
            assert triples(q.run(table, time_field="day")) == want, (day_type, unit)
    frame = pd.DataFrame({"type": ["A", "B", "B"], "day": days, "d": pd.to_timedelta([0, 5, 0], unit="s")})
    assert triples(q.run(frame, time_field="day")) == want
    far = pa.table({"type": ["A"], "day": pa.array([200_000], pa.date32())})
    assert outcome(lambda: q.run(far, time_field="day")) == ("error", 0, "day")


def test_the_matches_before_a_bad_event_are_on_the_error():
    q = ceql.compile("SELECT * FROM S WHERE A ; B")
    good = [{"type": "A", "v": 1}, {"type": "B", "v": 2}]
    bad = good + [{"v": 3}]
    want = [(0, 1, (0, 1))]
    with pytest.raises(ceql.CeqlEventError) as err:
        q.run(bad)
    assert triples(err.value.matches) == want and err.value.matches[0].events == good
    with pytest.raises(ceql.CeqlEventError) as err:
        q.run(pa.table({"type": ["A", "B", None], "v": [1, 2, 3]}))
    assert triples(err.value.matches) == want
    s = q.stream()
    with pytest.raises(ceql.CeqlEventError) as err:
        s.push_many(bad)
    assert triples(err.value.matches) == want and s.stats()["matches"] == 1
    s = q.stream()
    with pytest.raises(ceql.CeqlEventError) as err:
        # A new dict per event: an iterator may not yield one dict twice in a row.
        s.push_many(iter([{"type": "A"}] + [{"type": "B"} for _ in range(5000)] + [{"v": 1}]))
    assert len(err.value.matches) == 5000, "matches of earlier chunks of a generator too"
    s = q.stream()
    with pytest.raises(ceql.CeqlEventError) as err:
        s.push_batch(pa.table({"type": ["A", "B", None]}))
    assert triples(err.value.matches) == want
    assert triples(s.push({"type": "B"})) == [(0, 2, (0, 2))]


def _duplicated_inputs():
    """The same two events with two columns named `x`, in every tabular form."""
    frame = pd.DataFrame([["A", 5, 0], ["B", 6, 0]], columns=["type", "x", "x"])
    table = pa.table([pa.array(["A", "B"]), pa.array([5, 6]), pa.array([0, 0])], names=["type", "x", "x"])

    class CStreamOnly:
        def __arrow_c_stream__(self, requested_schema=None):
            return table.__arrow_c_stream__(requested_schema)

    return {
        "pandas": lambda: frame,
        "table": lambda: table,
        "batch": lambda: table.to_batches()[0],
        "reader": lambda: pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
        "c-stream": CStreamOnly,
    }


@pytest.mark.parametrize("kind", list(_duplicated_inputs()))
def test_duplicate_column_names_are_refused_before_anything_is_evaluated(kind):
    """Which of two columns named `x` an attribute is read from is not defined (the
    engine read the first, Match.events showed the last): every path refuses them,
    naming the column, before the first row."""
    make = _duplicated_inputs()[kind]
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[x > 1] WITHIN 5 EVENTS")
    calls = {
        "run": lambda: q.run(make()),
        "run_arrow": lambda: q.run_arrow(make()),
        "run_arrow_batches": lambda: q.run_arrow_batches(make()).read_all(),
    }
    if kind != "pandas":  # join_events takes Arrow data
        calls["join_events"] = lambda: ceql.join_events(q.run_arrow(pa.table({"type": ["A", "B"], "x": [5, 6]})), make())
    for name, call in calls.items():
        with pytest.raises(ceql.CeqlEventError, match="columns named `x`") as err:
            call()
        assert (err.value.position, err.value.field) == (0, "x"), name
    s = q.stream()
    s.push({"type": "A", "x": 5})
    for push in (s.push_batch, s.push_many, s.process):
        with pytest.raises(ceql.CeqlEventError, match="columns named `x`") as err:
            push(make())
        assert (err.value.position, err.value.field) == (1, "x")
        assert s.position == 1 and s.stats()["events"] == 1, "nothing was evaluated"
    assert [m.positions for m in s.push({"type": "B"})] == [(0, 1)]
