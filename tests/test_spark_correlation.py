"""ceql.spark with predicates between events (docs/language.md#s3-4a): the engine tests
them on each valuation during enumeration, so the glue needs nothing more than the
attributes they read. Batch and streaming against the single-process engine."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

# A comparison with an earlier event and an aggregate over an iteration.
QUERY = ("SELECT * FROM S WHERE HOT AS a ; (WARM AS w)+ ; COLD AS c "
         "FILTER a[temp > 40] AND c[temp < a.temp - 40] AND c[count(w) >= 2] "
         "PARTITION BY [sensor] WITHIN 20 seconds")
# An equality join between events without PARTITION BY (one task).
QUERY_JOIN = "SELECT * FROM S WHERE HOT AS a ; COLD AS b FILTER a[temp > 40] AND b[sensor = a.sensor AND temp < 10] WITHIN 20 seconds"


def scrambled(rows, seed=0):
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows


def test_batch_equals_the_single_process_engine(spark):
    import ceql.spark as cs

    rows = ss.events(1200, 8, seed=301, step_ms=600)
    df = ss.to_df(spark, scrambled(rows), 3)
    truth = ss.ground_truth(rows, QUERY)
    assert len(truth) > 20
    # The filter between events decides: without it there are more matches.
    assert len(ss.ground_truth(rows, QUERY.replace(" AND c[temp < a.temp - 40]", ""))) > len(truth)
    ss.assert_same(ss.collect(cs.detect(df, QUERY, time_field="ts", order_field="offset")), truth)
    out = cs.detect(df, QUERY, time_field="ts", order_field="offset", captures=True)
    truth_v = ss.ground_truth(rows, QUERY, captures=True)
    from pyspark.sql import functions as F

    got = [((r.sensor,), r.s, r.e, tuple(r.o), tuple(map(tuple, r.v))) for r in out.select(
        "sensor", F.unix_micros("start_time").alias("s"), F.unix_micros("end_time").alias("e"),
        F.transform("events", lambda x: x["offset"]).alias("o"),
        F.transform("events", lambda x: x["variables"]).alias("v")).collect()]
    ss.assert_same(got, truth_v)


def test_equality_join_without_partition_by(spark):
    import ceql.spark as cs

    rows = ss.events(600, 5, seed=303, step_ms=1500)
    out = cs.detect(ss.to_df(spark, scrambled(rows), 2), QUERY_JOIN, time_field="ts", order_field="offset")
    truth = ss.ground_truth(rows, QUERY_JOIN, key=None)
    assert truth
    ss.assert_same(ss.collect(out, key=None), truth)


def test_streaming_equals_the_single_process_engine(spark, tmp_path):
    rows = ss.events(450, 4, seed=305, step_ms=600)
    flush = ss.flush_event(rows, 200_000)
    src = tmp_path / "in"
    for i in range(0, len(rows), 150):
        ss.write_parquet(src, f"part-{i // 150:04d}", rows[i : i + 150])
    ss.write_parquet(src, "part-9999", [flush])
    ss.run_stream(spark, src, tmp_path / "out", tmp_path / "ckpt", query=QUERY, watermark="30 seconds")
    truth = ss.ground_truth(rows + [flush], QUERY)
    assert truth
    ss.assert_same(ss.collect(spark.read.parquet(str(tmp_path / "out"))), truth)
