"""ceql.spark on Structured Streaming: applyInPandasWithState with an event-time
timeout, checked against the engine run single-threaded over every event sorted by
(time, order). Every stream runs with trigger(availableNow=True), a fresh
checkpoint, and a bounded awaitTermination (a hang fails the test)."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

CHUNK = 150


def chunks_of(rows, size=CHUNK):
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def write_all(directory: Path, chunks, first: int = 0) -> None:
    for i, c in enumerate(chunks):
        ss.write_parquet(directory, f"part-{first + i:04d}", c)


def spans(truth, boundary_offset: int) -> list:
    """Matches with events on both sides of a file boundary (offsets < b and >= b)."""
    return [t for t in truth if min(t[3]) < boundary_offset <= max(t[3])]


def state_keys(spark, checkpoint: Path, batch_id=None):
    reader = spark.read.format("statestore")
    if batch_id is not None:
        reader = reader.option("batchId", batch_id)
    return sorted(tuple(r.key) for r in reader.load(str(checkpoint)).select("key").collect())


# -- one run shared by the micro-batch, expiry and bucket checks ----------------------
@pytest.fixture(scope="module")
def base_run(spark, tmp_path_factory):
    """600 events of 4 sensors in 4 files, then a flush event an hour later. Sensor
    3 only appears in the first file, and ends it with a HOT: a live partial match
    whose key then goes idle."""
    d = tmp_path_factory.mktemp("base")
    rows = [r for r in ss.events(600, 3, seed=21)]
    idle = {"type": "HOT", "ts": rows[CHUNK - 2]["ts"], "offset": 100_000, "sensor": 3, "temp": 45.0}
    files = chunks_of(rows)
    files[0] = files[0] + [idle]
    flush = ss.flush_event(rows, 200_000)
    files.append([flush])
    write_all(d / "in", files)
    q = ss.run_stream(spark, d / "in", d / "out", d / "ckpt")
    progress = [p for p in q.recentProgress]
    all_rows = rows + [idle, flush]
    return {"dir": d, "rows": all_rows, "files": files, "progress": progress, "truth": ss.ground_truth(all_rows, ss.QUERY)}


def test_several_micro_batches_with_matches_spanning_them(spark, base_run):
    got = ss.collect(spark.read.parquet(str(base_run["dir"] / "out")))
    truth = base_run["truth"]
    data_batches = [p for p in base_run["progress"] if p["numInputRows"] > 0]
    assert len(data_batches) == len(base_run["files"]) >= 4
    assert spans(truth, CHUNK) or spans(truth, 2 * CHUNK), "no match spans a micro-batch boundary"
    ss.assert_same(got, truth)
    out = spark.read.parquet(str(base_run["dir"] / "out"))
    got_ids = {tuple(e.offset for e in r.events): r.match_id for r in out.collect()}
    want = dict(zip((t[3] for t in truth), ss.expected_ids(spark, base_run["rows"], truth, ss.QUERY)))
    assert got_ids == want


def bucket_of(spark, sensor: int, buckets: int) -> int:
    """The state group of a sensor: pmod(xxhash64(key), buckets), computed by Spark."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(sensor,)], "k long")
    return df.select(F.pmod(F.xxhash64("k"), F.lit(buckets)).alias("b")).first()["b"]


def live_groups(spark, checkpoint: Path, batch_id=None):
    """State groups that hold engine state or buffered rows."""
    reader = spark.read.format("statestore")
    if batch_id is not None:
        reader = reader.option("batchId", batch_id)
    rows = reader.load(str(checkpoint)).select("key", "value").collect()
    return sorted(tuple(r.key) for r in rows if r.value.groupState.engine is not None or r.value.groupState.pending is not None)


def test_expiry_releases_an_idle_keys_state(spark, base_run):
    """Sensor 3 goes quiet with a live partial match: once its window has passed,
    its bucket's state row keeps no engine state, rows or buffer."""
    import ceql.spark as cs

    ckpt = base_run["dir"] / "ckpt"
    groups = {s: bucket_of(spark, s, cs.DEFAULT_BUCKETS) for s in range(4)}
    assert len(set(groups.values())) == 4, "the check needs sensor 3 alone in its bucket"
    first = live_groups(spark, ckpt, batch_id=0)
    assert (groups[3],) in first, "sensor 3's partial match should hold state after the first batch"
    last = live_groups(spark, ckpt)
    assert (groups[3],) not in last, "sensor 3 is idle and its window has passed: its state must be released"
    # Only the flush event (sensor 0, beyond the final watermark) may still be pending.
    assert last in ([], [(groups[0],)])
    totals = [p["stateOperators"][0]["numRowsTotal"] for p in base_run["progress"]]
    assert max(totals) <= cs.DEFAULT_BUCKETS, "one state row per bucket at most, whatever the keys"


def test_buckets_give_identical_results(spark, base_run, tmp_path):
    q = ss.run_stream(spark, base_run["dir"] / "in", tmp_path / "out", tmp_path / "ckpt", buckets=2)
    bucketed = spark.read.parquet(str(tmp_path / "out"))
    plain = spark.read.parquet(str(base_run["dir"] / "out"))
    assert sorted(map(tuple, bucketed.collect())) == sorted(map(tuple, plain.collect()))
    ss.assert_same(ss.collect(bucketed), base_run["truth"])
    keys = state_keys(spark, tmp_path / "ckpt", batch_id=0)
    assert len(keys) <= 2 and all(len(k) == 1 and k[0] in (0, 1) for k in keys), keys
    assert q.recentProgress


def test_restart_in_a_new_process_is_exactly_once(spark, tmp_path):
    rows = ss.events(600, 3, seed=31)
    files = chunks_of(rows)
    flush = ss.flush_event(rows, 200_000)
    truth = ss.ground_truth(rows + [flush], ss.QUERY)
    boundary = 2 * CHUNK
    assert spans(truth, boundary), "the data should have a match across the restart"
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files[:2])
    first = ss.run_stream(spark, src, out, ckpt)
    first_batches = [p["batchId"] for p in first.recentProgress]
    assert len(ss.collect(spark.read.parquet(str(out)))) < len(truth)
    write_all(src, files[2:] + [[flush]], first=2)
    report = tmp_path / "report.json"
    cmd = [sys.executable, str(Path(ss.__file__)), "stream", "--source", str(src), "--sink", str(out), "--checkpoint", str(ckpt), "--report", str(report)]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=ss.STREAM_TIMEOUT + 120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(report.read_text())
    assert rep["pid"] != os.getpid()
    assert min(rep["batches"]) > max(first_batches), "the new process must resume, not start over"
    got = ss.collect(spark.read.parquet(str(out)))
    ss.assert_same(got, truth)
    assert spans(got, boundary)


class CrashOnce:
    """Raises inside the state function once (a marker file survives the worker)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __call__(self, key, state, outputs) -> None:
        if state.getCurrentWatermarkMs() > 0 and any(o.num_rows for o in outputs) and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            raise RuntimeError("injected failure in the middle of a micro-batch")


def test_crash_mid_stream_still_exactly_once(spark, tmp_path):
    from pyspark.errors import StreamingQueryException

    rows = ss.events(600, 3, seed=41)
    flush = ss.flush_event(rows, 200_000)
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, chunks_of(rows) + [[flush]])
    from pyspark import cloudpickle

    # The workers cannot import this test module: ship CrashOnce by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    crash = CrashOnce(tmp_path / "crashed")
    with pytest.raises(StreamingQueryException, match="injected failure"):
        ss.run_stream(spark, src, out, ckpt, fault=crash)
    assert os.path.exists(crash.marker)
    ss.run_stream(spark, src, out, ckpt, fault=crash)  # restart from the checkpoint
    ss.assert_same(ss.collect(spark.read.parquet(str(out))), ss.ground_truth(rows + [flush], ss.QUERY))


def disordered(rows, delay_s: float, seed: int):
    """Files whose rows arrive out of time order, but never older than the watermark
    (max time seen in earlier files minus the delay)."""
    rnd = random.Random(seed)
    files = [list(c) for c in chunks_of(rows)]
    for k in range(len(files) - 1):
        top = max(r["ts"] for r in files[k])
        late_ok = [r for r in files[k] if r["ts"] >= top - dt.timedelta(seconds=delay_s / 3)]
        moved = rnd.sample(late_ok, len(late_ok) // 2)
        files[k] = [r for r in files[k] if r not in moved]
        files[k + 1] = moved + files[k + 1]
    for f in files:
        rnd.shuffle(f)
    seen = None
    for f in files:  # nothing is late: every row is after the previous watermark
        if seen is not None:
            assert min(r["ts"] for r in f) > seen - dt.timedelta(seconds=delay_s)
        seen = max([r["ts"] for r in f] + ([seen] if seen else []))
    assert any(f != sorted(f, key=lambda r: (r["ts"], r["offset"])) for f in files)
    return files


@pytest.mark.parametrize("late", ["drop", "emit"])
def test_event_time_disorder_within_watermark_and_late_policy(spark, tmp_path, late):
    from pyspark.sql import functions as F

    rows = ss.events(600, 3, seed=51)
    files = disordered(rows, 60, seed=52)
    # A HOT/COLD pair for sensor 1 far behind the watermark: it would match.
    old = rows[10]["ts"]
    late_rows = [
        {"type": "HOT", "ts": old, "offset": 300_000, "sensor": 1, "temp": 45.0},
        {"type": "COLD", "ts": old + dt.timedelta(seconds=1), "offset": 300_001, "sensor": 1, "temp": 2.0},
    ]
    files[-1] = files[-1] + late_rows
    flush = ss.flush_event(rows, 200_000)
    files.append([flush])
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files)
    q = ss.run_stream(spark, src, out, ckpt, late=late)
    result = spark.read.parquet(str(out))
    truth = ss.ground_truth(rows + [flush], ss.QUERY)
    with_late = ss.ground_truth(rows + late_rows + [flush], ss.QUERY)
    assert sorted(with_late) != sorted(truth), "the late events would have changed the result"
    dropped = sum(p["stateOperators"][0]["numRowsDroppedByWatermark"] for p in q.recentProgress)
    if late == "drop":
        assert "kind" not in result.columns
        ss.assert_same(ss.collect(result), truth)
        assert dropped == len(late_rows), "Spark counts the dropped late rows"
    else:
        ss.assert_same(ss.collect(result.where(F.col("kind") == "match")), truth)
        late_out = result.where(F.col("kind") == "late").collect()
        assert sorted(e.offset for r in late_out for e in r.events) == [300_000, 300_001]
        assert all(r.start_time == r.end_time == r.events[0].ts for r in late_out)
        assert dropped == 0


def test_session_time_zone_other_than_utc(spark, tmp_path):
    """Spark gives pandas naive wall-clock times of the session time zone: times in
    the output must still be the input's instants."""
    rows = ss.events(300, 2, seed=61)
    flush = ss.flush_event(rows, 200_000)
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, chunks_of(rows) + [[flush]])
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        ss.run_stream(spark, src, out, ckpt)
        result = spark.read.parquet(str(out))
        got = ss.collect(result)
        micros = sorted(ss.micros(e["ts"]) for e in rows)
        from pyspark.sql import functions as F

        ev = result.select(F.explode("events").alias("e")).select(F.unix_micros("e.ts").alias("t")).collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    ss.assert_same(got, ss.ground_truth(rows + [flush], ss.QUERY))
    assert ev and set(r.t for r in ev) <= set(micros)


def test_ties_of_time_follow_the_order_field_across_micro_batches(spark, tmp_path):
    """Rows of equal time are evaluated in (time, order) order, as the batch path
    sorts them, even when the lower order arrives in a later micro-batch: the
    engine's reorder buffer breaks ties by the order fields and key, not by arrival."""
    rows = ss.events(300, 3, seed=61)
    t = rows[-1]["ts"] + dt.timedelta(seconds=5)  # the newest time: held until the flush
    cold = {"type": "COLD", "ts": t, "offset": 500_001, "sensor": 1, "temp": 2.0}
    hot = {"type": "HOT", "ts": t, "offset": 500_000, "sensor": 1, "temp": 45.0}
    files = chunks_of(rows)
    files[-1] = files[-1] + [cold]  # the higher offset first
    files.append([hot])
    flush = ss.flush_event(rows + [cold, hot], 600_000)
    files.append([flush])
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files)
    ss.run_stream(spark, src, out, ckpt)
    truth = ss.ground_truth(rows + [cold, hot, flush], ss.QUERY)
    assert any(m[3] == (500_000, 500_001) for m in truth), "HOT then COLD by offset is a match"
    ss.assert_same(ss.collect(spark.read.parquet(str(out))), truth)


@pytest.mark.parametrize("buckets", [16, 1])
def test_late_emit_does_not_depend_on_the_bucket(spark, tmp_path, buckets):
    """late="emit": a key whose bucket was never called before is late like any
    other. Sensor 2's HOT and COLD come 45 s behind a watermark of about 96 s; they
    were matched when sensor 2 hashed to a bucket of its own (16 buckets) and
    reported late when it shared sensor 1's (1 bucket)."""
    from pyspark.sql import functions as F

    def ev(ty, s, offset, sensor, temp=20.0):
        return {"type": ty, "ts": ss.T0 + dt.timedelta(seconds=s), "offset": offset, "sensor": sensor, "temp": temp}

    def bucket(k):
        return spark.range(1).select(F.pmod(F.xxhash64(F.lit(k).cast("long")), F.lit(16))).first()[0]

    assert bucket(1) != bucket(2), "the two sensors are in different buckets of 16"
    files = [[ev("HOT", 100, 0, 1, 45.0)], [ev("OTHER", 101, 1, 1)],
             [ev("HOT", 50, 2, 2, 45.0), ev("COLD", 51, 3, 2, 5.0), ev("OTHER", 102, 4, 1)]]
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files)
    ss.run_stream(spark, src, out, ckpt, late="emit", watermark="5 seconds", buckets=buckets)
    result = spark.read.parquet(str(out))
    assert result.where(F.col("kind") == "match").count() == 0
    late_out = result.where(F.col("kind") == "late").collect()
    assert sorted(e.offset for r in late_out for e in r.events) == [2, 3]


def test_a_bucket_drops_the_rows_no_run_can_use_after_the_checks():
    """docs/spark.md, "Dropped event types": the state function keeps the rows of the
    types a run can use and of no type (the engine raises on those), with their
    tie-breakers, whatever string type pandas gave the type column."""
    import pyarrow as pa

    from ceql.spark._streaming import used_rows

    rows = pa.table({"type": pa.array(["HOT", "WARM", None, "COLD"], pa.large_string()), "x": [1, 2, 3, 4]})
    kept, ties = used_rows(rows, [b"a", b"b", b"c", b"d"], "type", pa.array(["COLD", "HOT"]))
    assert kept.column("x").to_pylist() == [1, 3, 4] and ties == [b"a", b"c", b"d"]
    assert used_rows(rows.slice(1, 1), [b"b"], "type", pa.array(["COLD", "HOT"])) == (None, [])
    every, same = used_rows(rows.slice(0, 1), [b"a"], "type", pa.array(["COLD", "HOT"]))
    assert every.num_rows == 1 and same == [b"a"]
