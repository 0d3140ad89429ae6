"""Input ceql.spark refuses with a clear error instead of a wrong answer or a task
traceback about its hidden columns: duplicate (time, order) within a key, a null
time, a type column that is not a string, a column named like a hidden one, and
an order field a stream cannot break ties by."""

from __future__ import annotations

import datetime as dt

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

T0 = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
QUERY = "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 10 seconds"
SCHEMA = "type string, ts timestamp, offset long, k long"


def at(s: int) -> dt.datetime:
    return T0 + dt.timedelta(seconds=s)


def detect(spark, rows, schema=SCHEMA, **kw):
    import ceql.spark as cs

    kw.setdefault("time_field", "ts")
    kw.setdefault("order_field", "offset")
    return cs.detect(spark.createDataFrame(rows, schema), QUERY, **kw)


def test_duplicate_time_and_order_within_a_key_is_refused(spark):
    rows = [("A", at(0), 0, 1), ("A", at(1), 1, 1), ("B", at(1), 1, 1)]
    with pytest.raises(Exception, match=r"must be unique within a partition key"):
        detect(spark, rows).collect()


def test_duplicate_time_and_order_in_different_keys_or_without_key_is_accepted(spark):
    """The same (time, order) under two keys, or twice without a key (such events
    are in no partition), is fine: A ; B once per key 1 and 2."""
    rows = [("A", at(0), 0, 1), ("A", at(0), 0, 2), ("B", at(1), 1, 1), ("B", at(1), 1, 2),
            ("B", at(2), 2, None), ("B", at(2), 2, None)]
    got = sorted((r.k, [e.offset for e in r.events]) for r in detect(spark, rows).collect())
    assert got == [(1, [0, 1]), (2, [0, 1])]


def test_null_time_names_the_users_time_field(spark):
    rows = [("A", at(0), 0, 1), ("B", None, 1, 1)]
    with pytest.raises(Exception, match=r"null time field 'ts'"):
        detect(spark, rows).collect()


def test_type_column_that_is_not_a_string_is_refused_on_the_driver(spark):
    with pytest.raises(TypeError, match=r"event type column \(type_field\) 'kind' must be a string column, not bigint"):
        detect(spark, [(1, at(0), 0, 1)], "kind long, ts timestamp, offset long, k long", type_field="kind")


def test_a_column_named_like_a_hidden_one_is_refused(spark):
    with pytest.raises(ValueError, match=r"reserved for ceql.spark's hidden columns: rename '__ceql_t'"):
        detect(spark, [("A", at(0), 0, 1, 5)], SCHEMA + ", __ceql_t long")


def test_a_stream_refuses_an_order_field_it_cannot_break_ties_by(spark, tmp_path):
    import ceql.spark as cs

    schema = "type string, ts timestamp, o struct<a: long, b: long>, k long"
    stream = spark.readStream.schema(schema).parquet(str(tmp_path))
    with pytest.raises(TypeError, match=r"order_field 'o' of type struct"):
        cs.detect(stream, QUERY, time_field="ts", order_field="o", watermark="1 minute")


def test_a_stream_refuses_duplicate_time_and_order_within_a_micro_batch(spark, tmp_path):
    import ceql.spark as cs

    src = tmp_path / "in"
    spark.createDataFrame([("A", at(0), 0, 1), ("B", at(1), 1, 1), ("B", at(1), 1, 1)], SCHEMA) \
        .coalesce(1).write.parquet(str(src))
    stream = spark.readStream.schema(SCHEMA).parquet(str(src))
    q = (cs.detect(stream, QUERY, time_field="ts", order_field="offset", watermark="1 minute")
         .writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    with pytest.raises(Exception, match=r"must be unique within a partition key"):
        q.awaitTermination(ss.STREAM_TIMEOUT)
    q.stop()


def test_columns_that_differ_only_in_case_are_refused(spark):
    with pytest.raises(ValueError, match=r"columns 'k' and 'K' differ only in case"):
        detect(spark, [("A", at(0), 0, 1, 2)], SCHEMA + ", K long")


def test_an_engine_error_in_a_task_names_the_event_time(spark):
    """An engine error raised in a task names the event by its position in the
    task, which means nothing to the user: the glue adds the event's time."""
    import ceql.spark as cs

    df = spark.createDataFrame([("B", at(0), 0, 1, "x"), ("A", at(3), 1, 1, "hot")],
                               "type string, ts timestamp, offset long, k long, temp string")
    out = cs.detect(df, "SELECT * FROM S WHERE A ; B FILTER A[temp > 40] PARTITION BY [k]",
                    time_field="ts", order_field="offset")
    with pytest.raises(Exception, match=r"cannot compare string with int.*the event at position 1 has the time 2024-03-01T00:00:03\+00:00"):
        out.collect()


def test_an_engine_error_in_a_stream_names_the_event_time(spark, tmp_path):
    """The same in a stream, where the position counts from the bucket's first
    event. The bad event arrives in the first micro-batch and is held there; the
    second one's watermark releases it into the engine, which fails on it."""
    import ceql.spark as cs

    schema = "type string, ts timestamp, offset long, k long, temp string"
    src = tmp_path / "in"
    for i, rows in enumerate([[("B", at(0), 0, 1, "x"), ("A", at(3), 1, 1, "hot")],
                              [("B", at(100), 2, 2, "x")]]):
        spark.createDataFrame(rows, schema).coalesce(1).write.parquet(str(src / f"part{i}"))
    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1) \
        .option("recursiveFileLookup", "true").parquet(str(src))
    q = (cs.detect(stream, "SELECT * FROM S WHERE A ; B FILTER A[temp > 40] PARTITION BY [k]",
                   time_field="ts", order_field="offset", watermark="1 second")
         .writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    with pytest.raises(Exception, match=r"cannot compare string with int.*the event at position 1 has the time 2024-03-01T00:00:03\+00:00"):
        q.awaitTermination(ss.STREAM_TIMEOUT)
    q.stop()
