"""ceql.spark with a trailing absence, ``ψ ; ABSENT(β) FOR d`` (docs/language.md#s3-3b;
docs/spark.md, "Trailing absence"): batch against the single-process engine
(``Query.run`` with and without ``close_deadlines``), the ``deadline`` column, a
bucket whose matches fire on its timeout alone, and a stream restarted in another
process: exactly once, and equal to the batch answer once the watermark has passed
every deadline."""

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

D_SECONDS = 8
QUERY = ss.QUERY_ABSENT  # HOT (temp > 40), then no COLD (temp < 10) of its sensor within 8 s
CHUNK = 150


def scrambled(rows, seed=0):
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows


def deadline_rows(df):
    """(key, start µs, end µs, offsets, deadline µs) per output row."""
    from pyspark.sql import functions as F

    out = []
    for r in df.select(F.col("sensor"), F.unix_micros("start_time").alias("s"), F.unix_micros("end_time").alias("e"),
                       F.transform("events", lambda x: x["offset"]).alias("o"),
                       F.unix_micros("deadline").alias("d")).collect():
        out.append(((r["sensor"],), r["s"], r["e"], tuple(r["o"]), r["d"]))
    return out


def test_batch_equals_run_with_and_without_closing_the_deadlines(spark):
    import ceql.spark as cs

    rows = ss.events(1200, 12, seed=101, step_ms=600)
    df = ss.to_df(spark, scrambled(rows), partitions=3)
    kept = ss.ground_truth(rows, QUERY)
    closed = ss.ground_truth(rows, QUERY, close_deadlines=True)
    assert len(kept) > 30 and len(closed) > len(kept), "some deadlines must lie after the input"
    # Every match at the end of the input is unpaid, some are not: the cancelling works.
    assert len(closed) < len([r for r in rows if r["type"] == "HOT" and r["temp"] > 40])
    out = cs.detect(df, QUERY, time_field="ts", order_field="offset")
    assert out.rdd.getNumPartitions() >= 1 and "deadline" in out.columns
    got = deadline_rows(out)
    ss.assert_same([g[:4] for g in got], kept)
    assert all(d == e + D_SECONDS * 1_000_000 for _, _, e, _, d in got)
    got_closed = cs.detect(df, QUERY, time_field="ts", order_field="offset", close_deadlines=True)
    ss.assert_same(ss.collect(got_closed), closed)
    ids = {tuple(e.offset for e in r.events): r.match_id for r in got_closed.collect()}
    assert ids == dict(zip((t[3] for t in closed), ss.expected_ids(spark, rows, closed, QUERY)))


def test_batch_splits_by_key_and_ignores_the_shuffle(spark, caplog):
    """The engine calls a trailing absence key-dependent (an event of any key passes a
    deadline); the glue splits it by key anyway, and the answer does not move."""
    import logging

    import ceql.spark as cs

    rows = ss.events(900, 8, seed=103, step_ms=800)
    results = []
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for parts, shuffle in ((1, 1), (4, 3)):
            spark.conf.set("spark.sql.shuffle.partitions", str(shuffle))
            with caplog.at_level(logging.WARNING, logger="ceql.spark"):
                out = cs.detect(ss.to_df(spark, scrambled(rows, parts), parts), QUERY, time_field="ts", order_field="offset")
            results.append(sorted((r.match_id, r.deadline) for r in out.collect()))
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    assert not any("one Spark task" in r.getMessage() for r in caplog.records)
    assert results[0] and results[0] == results[1]


def test_numeric_time_field_deadline_in_its_unit(spark):
    import ceql.spark as cs
    from pyspark.sql import functions as F

    rows = ss.events(400, 4, seed=105, step_ms=900)
    df = ss.to_df(spark, rows, 2).withColumn("ts_ms", F.unix_millis("ts")).withColumn("ts_s", F.unix_seconds("ts"))
    by_ms = cs.detect(df, QUERY, time_field="ts_ms", order_field="offset", time_unit="ms", close_deadlines=True)
    assert by_ms.schema["deadline"].dataType.simpleString() == "bigint"
    got = by_ms.select("end_time", "deadline").collect()
    assert got and all(r.deadline == r.end_time + D_SECONDS * 1000 for r in got)
    assert {"deadline", "event_index", "offset"} <= set(cs.explode_events(by_ms).columns)
    q = QUERY.replace(f"FOR {D_SECONDS} seconds", "FOR 2500 ms")
    by_s = cs.detect(df, q, time_field="ts_s", order_field="offset", time_unit="s", close_deadlines=True)
    assert by_s.schema["deadline"].dataType.simpleString() == "double"
    got = by_s.select("end_time", "deadline").collect()
    assert got and all(r.deadline == r.end_time + 2.5 for r in got)


def test_events_of_streams_outside_from_do_not_pass_deadlines(spark):
    """An event of a stream the query does not read does not advance time (docs/language.md#s3-3b): a
    late event of another stream leaves the last deadline open."""
    import ceql
    import ceql.spark as cs

    query = "SELECT * FROM S WHERE A ; ABSENT(B) FOR 5 seconds PARTITION BY [k] WITHIN 1 minute"
    rows = [("S", "A", 0, 0, 1), ("S", "A", 1, 1, 2), ("S", "B", 3, 2, 1), ("T", "X", 100, 3, 1)]
    df = spark.createDataFrame(rows, "stream string, type string, t long, off long, k long")
    events = [{"stream": s, "type": ty, "t": t, "k": k} for s, ty, t, _, k in rows]
    q = ceql.compile(query)
    assert q.run(events, time_field="t", time_unit="s") == []
    assert len(q.run(events, time_field="t", time_unit="s", close_deadlines=True)) == 1
    assert cs.detect(df, query, time_field="t", order_field="off", time_unit="s").count() == 0
    assert [r.k for r in cs.detect(df, query, time_field="t", order_field="off", time_unit="s",
                                  close_deadlines=True).collect()] == [2]
    ss_rows = [("S", "A", 0, 0, 1), ("S", "A", 1, 1, 2), ("S", "B", 3, 2, 1), ("S", "X", 100, 3, 1)]
    df2 = spark.createDataFrame(ss_rows, "stream string, type string, t long, off long, k long")
    assert [r.k for r in cs.detect(df2, query, time_field="t", order_field="off", time_unit="s").collect()] == [2]


def test_close_deadlines_is_batch_only(spark, tmp_path):
    import ceql.spark as cs

    src = tmp_path / "in"
    ss.write_parquet(src, "part-0000", ss.events(10, 2, seed=1))
    events_df = spark.readStream.schema(ss.spark_schema()).parquet(str(src))
    with pytest.raises(ValueError, match="close_deadlines"):
        cs.detect(events_df, QUERY, time_field="ts", order_field="offset", watermark="1 minute", close_deadlines=True)


# -- streaming ------------------------------------------------------------------
def chunks_of(rows, size=CHUNK):
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def write_all(directory: Path, chunks, first: int = 0) -> None:
    for i, c in enumerate(chunks):
        ss.write_parquet(directory, f"part-{first + i:04d}", c)


def test_a_quiet_bucket_fires_its_deadlines_on_its_timeout(spark, tmp_path):
    """A sensor whose last event is an unanswered HOT gets no more rows: its bucket's
    event-time timeout fires the match once the watermark (moved by other sensors)
    passes the deadline, before the end of the input."""
    import ceql.spark as cs
    from pyspark.sql import functions as F

    buckets = spark.createDataFrame([(k,) for k in (0, 1, 2, 7)], "k long").select(
        "k", F.pmod(F.xxhash64("k"), F.lit(cs.DEFAULT_BUCKETS)).alias("b")).collect()
    others = {r.b for r in buckets if r.k != 7}
    assert [r.b for r in buckets if r.k == 7][0] not in others, "sensor 7 must be alone in its bucket"
    rows = ss.events(450, 3, seed=109, step_ms=1500)
    t_hot = rows[CHUNK // 2]["ts"]
    quiet = {"type": "HOT", "ts": t_hot, "offset": 100_000, "sensor": 7, "temp": 45.0}
    files = chunks_of(rows)
    files[0] = files[0] + [quiet]
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files)
    ss.run_stream(spark, src, out, ckpt, query=QUERY, watermark="10 seconds")
    got = deadline_rows(spark.read.parquet(str(out)))
    mine = [g for g in got if g[0] == (7,)]
    assert [g[3] for g in mine] == [(100_000,)], "sensor 7's match fired although no row of it came again"
    truth = ss.ground_truth(rows + [quiet], QUERY)  # deadlines the input itself passes
    watermark_end = ss.micros(max(r["ts"] for r in rows)) - 10_000_000
    passed = [t for t in truth if t[2] + D_SECONDS * 1_000_000 < watermark_end - 1_000_000]
    assert set(passed) <= set(g[:4] for g in got) <= set(truth)


def test_restart_with_an_absence_query_is_exactly_once(spark, tmp_path):
    """The stream stops, then resumes in another process from its checkpoint: the
    matches waiting for a deadline at the stop are reported once, after it."""
    rows = ss.events(600, 3, seed=111, step_ms=1500)
    flush = ss.flush_event(rows, 200_000)
    truth = ss.ground_truth(rows + [flush], QUERY)
    files = chunks_of(rows)
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, files[:2])
    first = ss.run_stream(spark, src, out, ckpt, query=QUERY, watermark="20 seconds")
    first_batches = [p["batchId"] for p in first.recentProgress]
    before = ss.collect(spark.read.parquet(str(out)))
    assert 0 < len(before) < len(truth)
    boundary = files[2][0]["offset"]
    waiting = [t for t in truth if max(t[3]) < boundary and t not in before]
    assert waiting, "some matches must wait for their deadline across the restart"
    write_all(src, files[2:] + [[flush]], first=2)
    report = tmp_path / "report.json"
    cmd = [sys.executable, str(Path(ss.__file__)), "stream", "--source", str(src), "--sink", str(out),
           "--checkpoint", str(ckpt), "--report", str(report), "--query", QUERY, "--watermark", "20 seconds"]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=ss.STREAM_TIMEOUT + 120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(report.read_text())
    assert rep["pid"] != os.getpid()
    assert min(rep["batches"]) > max(first_batches), "the new process must resume, not start over"
    result = spark.read.parquet(str(out))
    ss.assert_same(ss.collect(result), truth)
    ids = [r.match_id for r in result.select("match_id").collect()]
    assert len(ids) == len(set(ids))
    # Once the watermark has passed every deadline (the flush), the stream's answer is
    # the batch answer with the deadlines closed: same rows, ids and deadlines.
    import ceql.spark as cs
    from pyspark.sql import functions as F

    assert truth == ss.ground_truth(rows, QUERY, close_deadlines=True), "the flush passes every deadline"
    batch = cs.detect(ss.to_df(spark, rows, 2), QUERY, time_field="ts", order_field="offset", close_deadlines=True)
    assert sorted(map(tuple, result.collect())) == sorted(map(tuple, batch.collect()))
    assert all(d == e + D_SECONDS * 1_000_000 for _, _, e, _, d in deadline_rows(result))
    # Matches come out in many micro-batches, as the watermark moves.
    assert result.select(F.input_file_name()).distinct().count() >= 4


def test_late_rows_have_no_deadline_and_no_variables(spark, tmp_path):
    from pyspark.sql import functions as F

    rows = ss.events(300, 2, seed=113, step_ms=1500)
    old = rows[5]["ts"]
    late = {"type": "HOT", "ts": old, "offset": 300_000, "sensor": 1, "temp": 45.0}
    flush = ss.flush_event(rows, 200_000)
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    write_all(src, chunks_of(rows) + [[late], [flush]])
    ss.run_stream(spark, src, out, ckpt, query=QUERY, watermark="20 seconds", late="emit", captures=True)
    result = spark.read.parquet(str(out))
    late_out = result.where(F.col("kind") == "late").collect()
    assert [r.events[0].offset for r in late_out] == [300_000] and late_out[0].deadline is None
    assert late_out[0].events[0].variables is None, "no variable captured a late event"
    assert {tuple(e.variables) for r in result.where(F.col("kind") == "match").collect() for e in r.events} == {("HOT",)}
    ss.assert_same(ss.collect(result.where(F.col("kind") == "match")), ss.ground_truth(rows + [flush], QUERY))
    assert dt.timedelta(seconds=D_SECONDS) == dt.timedelta(seconds=8)


def test_alternatives_of_the_trailing_absence(spark):
    """``ABSENT(COLD ... OR OTHER)`` (docs/language.md#s3-3a, "Alternatives"): an OTHER
    cancels too, so its rows are not dropped before the shuffle as a type no run reads."""
    import ceql.spark as cs

    query = QUERY.replace("ABSENT(COLD FILTER COLD[temp < 10])", "ABSENT(COLD FILTER COLD[temp < 10] OR OTHER)")
    assert query != QUERY
    rows = ss.events(1200, 12, seed=103, step_ms=600)
    df = ss.to_df(spark, scrambled(rows), partitions=3)
    closed = ss.ground_truth(rows, query, close_deadlines=True)
    assert 0 < len(closed) < len(ss.ground_truth(rows, QUERY, close_deadlines=True)), "OTHER must cancel some"
    ss.assert_same(ss.collect(cs.detect(df, query, time_field="ts", order_field="offset", close_deadlines=True)),
                   closed)
