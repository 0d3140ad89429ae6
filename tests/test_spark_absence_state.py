"""The streaming state of a query ending with ``ψ ; ABSENT(β) FOR d``
(docs/spark.md, "Trailing absence", "State, streaming."): a bucket keeps the rows
of the window and, aside, those of the complex events waiting for their deadline,
not every row of the last ``d``; the answer does not move (batch, single process,
across micro-batches and a restart), and a state row written before rows were
kept aside still restores."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

#: A HOT of a sensor, then no COLD of it for an hour; the window is a minute.
QUERY_HOUR = (
    "SELECT * FROM S WHERE (HOT FILTER HOT[temp > 40]) ; ABSENT(COLD FILTER COLD[temp < 10]) FOR 1 hour "
    "PARTITION BY [sensor] WITHIN 1 minute"
)
#: A projection (the end, a WARM, is not in the data) and a leading NOT (the start is
#: no data row either), with a deadline four times the window (WITHIN 15 s, FOR 60 s).
QUERY_EDGES = (
    "SELECT h FROM S WHERE NOT(COLD) ; (HOT AS h FILTER h[temp > 40]) ; WARM AS w ; "
    "ABSENT(COLD FILTER COLD[temp < 3]) FOR 60 seconds PARTITION BY [sensor] WITHIN 15 seconds"
)


def chunks_of(rows, size):
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def write_all(directory: Path, chunks, first: int = 0) -> None:
    for i, c in enumerate(chunks):
        ss.write_parquet(directory, f"part-{first + i:04d}", c)


def state_rows(spark, checkpoint: Path, batch_id=None):
    """Per state row (bucket) of the checkpoint: ``(rows bytes, rows table)``, the
    table None when the row keeps no rows."""
    from ceql.spark._rows import ipc_to_table

    reader = spark.read.format("statestore")
    if batch_id is not None:
        reader = reader.option("batchId", batch_id)
    out = []
    for r in reader.load(str(checkpoint)).select("value").collect():
        b = r.value.groupState.rows
        out.append((0 if b is None else len(b), ipc_to_table(bytes(b)) if b is not None else None))
    return out


def aside(table) -> int:
    """Number of rows a persisted rows table keeps aside (below its window)."""
    from ceql.spark._rows import PINNED, _decode

    return 0 if table is None else len(_decode((table.schema.metadata or {}).get(PINNED)))


def batch_ids(checkpoint: Path):
    return sorted(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())


def test_retained_rows_keep_rows_aside_persist_them_and_read_old_rows():
    """``RetainedRows`` alone: marked window rows move aside when the window passes
    them, matches are resolved against both (renumbered, order kept), the rows
    aside survive the IPC round trip, and rows without metadata read as before."""
    import numpy as np
    import pyarrow as pa
    from ceql.spark._rows import FORMAT, RetainedRows, table_to_ipc

    t = pa.table({"v": pa.array(range(10), pa.int64())})
    r = RetainedRows()
    r.append(t.slice(0, 6), 100)
    r.append(t.slice(6), 106)
    r.pin(np.array([101, 103, 108, 99]))  # 99: before the rows, nothing to keep
    r.unpin(100)
    r.trim(105)
    assert (r.base, len(r), r.pinned.tolist(), r.marks.tolist()) == (105, 5, [101, 103], [108])
    found = pa.record_batch({"start": pa.array([101, 103], pa.uint64()), "end": pa.array([106, 108], pa.uint64()),
                             "positions": pa.array([[103, 101], [108]], pa.large_list(pa.uint64()))})
    rows, base, renumbered = r.resolve(found)
    assert base == 0 and rows.column("v").to_pylist() == [1, 3, 6, 8]
    assert renumbered.to_pydict() == {"start": [0, 1], "end": [2, 3], "positions": [[1, 0], [3]]}
    assert renumbered.schema == found.schema
    back = RetainedRows.from_ipc(r.base, r.to_ipc())
    assert not back.legacy and FORMAT not in (back.table().schema.metadata or {})
    assert (back.base, back.table().column("v").to_pylist(), back.pinned.tolist(), back.marks.tolist()) == (
        105, [5, 6, 7, 8, 9], [101, 103], [108])
    assert back.resolve(found)[0].equals(rows)
    old = RetainedRows.from_ipc(100, table_to_ipc(t))  # a state row written before
    assert old.legacy and (old.base, len(old), old.aside) == (100, 10, 0)
    assert old.resolve(found)[1] == 100  # no rows aside: the window as it is
    back.unpin(102)
    with pytest.raises(RuntimeError, match="no longer retained"):
        back.resolve(found)
    back.unpin(200)
    back.trim(200)
    assert back.to_ipc() is None


def test_a_waiting_match_keeps_its_rows_aside_not_the_last_hour(spark, tmp_path):
    """One HOT waits an hour for its deadline while 20 minutes of other traffic go
    through its bucket in 7 micro-batches: the bucket's rows stay about a minute's
    worth plus the waiting match's one row, and the match, fired by the watermark
    much later, has its event."""
    from ceql.spark._rows import FORMAT
    from pyspark.sql import functions as F

    hot = {"type": "HOT", "ts": ss.T0, "offset": 0, "sensor": 7, "temp": 45.0}
    traffic = []
    for i in range(1, 1401):  # a row a second, of the other sensors, none cancelling, none waiting
        ty = ("WARM", "HOT", "COLD", "OTHER")[i % 4]
        temp = {"WARM": 25.0, "HOT": 30.0, "COLD": 15.0, "OTHER": 0.0}[ty]
        traffic.append({"type": ty, "ts": ss.T0 + dt.timedelta(seconds=i), "offset": i, "sensor": i % 3, "temp": temp})
    flush = ss.flush_event(traffic, 100_000, minutes=120)
    files = chunks_of([hot] + traffic, 200) + [[flush]]
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files)
    ss.run_stream(spark, src, out, ckpt, query=QUERY_HOUR, watermark="10 seconds", buckets=1)
    result = spark.read.parquet(str(out))
    got = result.collect()
    assert [tuple(e.offset for e in r.events) for r in got] == [(0,)]
    (deadline,) = result.select(F.unix_micros("deadline")).first()
    assert got[0].sensor == 7 and deadline == ss.micros(ss.T0 + dt.timedelta(hours=1))
    truth = ss.ground_truth([hot] + traffic + [flush], QUERY_HOUR)
    ss.assert_same(ss.collect(result), truth)
    assert [r.match_id for r in got] == ss.expected_ids(spark, [hot] + traffic + [flush], truth, QUERY_HOUR)
    # The one bucket's rows, batch after batch, while the match waits: the window
    # (a minute: about 60 rows, plus the watermark's 10 s of rows held back, which
    # are not retained rows yet) and the one row aside.
    sizes = []
    for b in batch_ids(ckpt):
        (n_bytes, table), = state_rows(spark, ckpt, batch_id=b)
        if table is None:
            continue
        assert FORMAT in table.schema.metadata
        sizes.append((b, table.num_rows, aside(table), n_bytes))
    waiting = [s for s in sizes if s[2]]
    assert len(waiting) >= 5, sizes
    assert all(s[2] == 1 for s in waiting), sizes
    assert max(s[1] for s in sizes) <= 80, sizes  # without rows aside: up to 1,200 rows, every row since the HOT
    assert max(s[3] for s in sizes) < 3 * min(s[3] for s in waiting), sizes  # flat, not growing with the traffic
    # Once fired, nothing waits: the state row keeps no rows.
    assert state_rows(spark, ckpt)[0][1] is None


def test_edges_equal_the_batch_answer_across_micro_batches_and_a_restart(spark, tmp_path):
    """Matches whose interval starts and ends at rows that are not in their data,
    waiting four windows long, over many micro-batches and a restart from the
    checkpoint: the stream gives the batch answer (rows, ids, times, deadlines) and
    the single-process engine's, exactly once."""
    import ceql
    import pyarrow as pa

    rows = ss.events(900, 6, seed=223, step_ms=1500)
    flush = ss.flush_event(rows, 200_000)
    truth = ss.ground_truth(rows + [flush], QUERY_EDGES)
    assert truth == ss.ground_truth(rows, QUERY_EDGES, close_deadlines=True), "the flush passes every deadline"
    ordered = sorted(rows, key=lambda r: (r["ts"], r["offset"]))
    matches = list(ceql.compile(QUERY_EDGES).run(pa.Table.from_pylist(ordered, schema=ss.arrow_schema()),
                                                  time_field="ts", close_deadlines=True))
    assert len(matches) > 20
    assert any(m.start not in m.positions for m in matches) and any(m.end not in m.positions for m in matches)
    files = chunks_of(rows, 100)
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files[:4])
    ss.run_stream(spark, src, out, ckpt, query=QUERY_EDGES, watermark="5 seconds", buckets=2)
    before = ss.collect(spark.read.parquet(str(out)))
    assert 0 < len(before) < len(truth)
    assert any(aside(t) for _, t in state_rows(spark, ckpt)), "rows must be kept aside at the restart"
    # Every column, match_id included: the batch path reads the start and end rows
    # of each interval from all the rows, the stream from the rows it kept aside.
    result = resume_and_compare(spark, (src, out, ckpt), files, 4, flush, rows, truth, before)
    ids = [r.match_id for r in result.select("match_id").collect()]
    assert len(ids) == len(truth) == len(set(ids))


# -- a state row written before rows were kept aside ------------------------------

def resume_and_compare(spark, paths, files, k, flush, rows, truth, before):
    """Checks that some matches wait across the restart (they end in ``files[k:]``
    but start before), writes the rest of the files and the flush event, resumes the
    stream from its checkpoint, and compares its output with the ground truth and,
    every column, with batch ``detect``; returns the output."""
    import ceql.spark as cs

    src, out, ckpt = paths
    boundary = files[k][0]["offset"]
    assert [t for t in truth if min(t[3]) < boundary and t not in before], "some matches must wait across the restart"
    write_all(src, files[k:] + [[flush]], first=k)
    ss.run_stream(spark, src, out, ckpt, query=QUERY_EDGES, watermark="5 seconds", buckets=2)
    result = spark.read.parquet(str(out))
    ss.assert_same(ss.collect(result), truth)
    batch = cs.detect(ss.to_df(spark, rows, 2), QUERY_EDGES, time_field="ts", order_field="offset",
                      close_deadlines=True)
    assert sorted(map(tuple, result.collect())) == sorted(map(tuple, batch.collect()))
    return result

def legacy_keep_rows(engine, rows):
    """The trim of the state rows written before: every row from the horizon on."""
    rows.trim(engine.horizon)


def legacy_save(state, engine, rows, pending, w_ms, buckets, released):
    """``save`` as it was: the rows as a plain IPC table, without metadata."""
    from ceql.spark._rows import table_to_ipc
    from ceql.spark._streaming import save  # the worker's own module: the real save

    save(state, engine, rows, pending, w_ms, buckets, released)
    value = tuple(state.get)
    if value[1] is not None:  # an engine, so rows: those from the horizon on, as they were written
        state.update(value[:2] + (table_to_ipc(rows.table()) if len(rows) else None, rows.base) + value[4:])


def test_an_old_state_row_without_rows_aside_restores(spark, tmp_path, monkeypatch):
    """The first micro-batches run with the old state (every row from the horizon
    on, no metadata); the stream then resumes from the checkpoint with rows kept
    aside: the complex events already waiting get their rows aside, and the answer
    is the batch answer."""
    from ceql.spark import _streaming
    from ceql.spark._rows import FORMAT
    from pyspark import cloudpickle

    rows = ss.events(900, 6, seed=211, step_ms=1500)
    flush = ss.flush_event(rows, 200_000)
    truth = ss.ground_truth(rows + [flush], QUERY_EDGES)
    files = chunks_of(rows, 100)
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files[:3])
    # The workers cannot import this module: the old trim and save travel by value in
    # the state function (cloudpickle takes the globals it names as they are now).
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with monkeypatch.context() as m:
        m.setattr(_streaming, "keep_rows", legacy_keep_rows)
        m.setattr(_streaming, "save", legacy_save)
        ss.run_stream(spark, src, out, ckpt, query=QUERY_EDGES, watermark="5 seconds", buckets=2)
    old = [t for _, t in state_rows(spark, ckpt) if t is not None]
    assert old and all(FORMAT not in (t.schema.metadata or {}) for t in old), "the first run must write old rows"
    before = ss.collect(spark.read.parquet(str(out)))
    resume_and_compare(spark, (src, out, ckpt), files, 3, flush, rows, truth, before)
