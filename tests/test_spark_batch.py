"""ceql.spark on batch DataFrames: equal to the engine run single-threaded over the
events sorted by (time, order), whatever the partitioning."""

from __future__ import annotations

import datetime as dt
import logging
import random

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark


def scrambled(rows, seed=0):
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows


def test_scrambled_5k_events_50_keys_equal_ground_truth(spark):
    import ceql.spark as cs

    rows = ss.events(5000, 50, seed=11, step_ms=400)
    df = ss.to_df(spark, scrambled(rows), partitions=4)
    matches = cs.detect(df, ss.QUERY_SEQ, time_field="ts", order_field="offset")
    cached = matches.select("sensor", "match_id", "start_time", "end_time", "events").cache()
    truth = ss.ground_truth(rows, ss.QUERY_SEQ)
    assert len(truth) > 200, "the workload should produce a fair number of matches"
    assert any(len(t[3]) > 3 for t in truth), "and some with iterations"
    ss.assert_same(ss.collect(cached), truth)
    ids = [r.match_id for r in cached.select("match_id").collect()]
    assert sorted(ids) == sorted(ss.expected_ids(spark, rows, truth, ss.QUERY_SEQ))
    cached.unpersist()


def test_match_ids_identical_across_repartition_counts(spark):
    import ceql.spark as cs

    rows = ss.events(1500, 20, seed=5)
    results = []
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for input_parts, shuffle_parts in [(1, 1), (3, 2), (7, 5)]:
            spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_parts))
            df = ss.to_df(spark, scrambled(rows, seed=input_parts), partitions=input_parts)
            out = cs.detect(df, ss.QUERY, time_field="ts", order_field="offset")
            results.append(sorted((r.match_id, r.start_time, tuple(e.offset for e in r.events)) for r in out.collect()))
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
    assert results[0], "no matches: the check would be vacuous"
    assert results[0] == results[1] == results[2]


def test_no_partition_by_warns_and_uses_one_task(spark, caplog):
    import ceql.spark as cs

    query = "SELECT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] WITHIN 20 seconds"
    rows = ss.events(800, 4, seed=2)
    with caplog.at_level(logging.WARNING, logger="ceql.spark"):
        out = cs.detect(ss.to_df(spark, scrambled(rows), 3), query, time_field="ts", order_field="offset")
    assert any("one Spark task" in r.getMessage() for r in caplog.records)
    assert out.rdd.getNumPartitions() == 1
    assert "sensor" not in out.columns
    ss.assert_same(ss.collect(out, key=None), ss.ground_truth(rows, query, key=None))


def test_global_position_queries_run_in_one_group(spark, caplog):
    """WITHIN n EVENTS counts global positions (docs/language.md#s3-7): splitting by key would
    change the result, so the query runs in one group with PARTITION BY inside."""
    import ceql.spark as cs

    query = "SELECT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] PARTITION BY [sensor] WITHIN 6 EVENTS"
    rows = ss.events(800, 4, seed=3)
    with caplog.at_level(logging.WARNING, logger="ceql.spark"):
        out = cs.detect(ss.to_df(spark, scrambled(rows), 3), query, time_field="ts", order_field="offset")
    assert any("depends on every partition" in r.getMessage() for r in caplog.records)
    truth = ss.ground_truth(rows, query)
    assert truth
    ss.assert_same(ss.collect(out), truth)


def test_unmarked_start_and_projection_times_come_from_the_interval(spark):
    """start_time/end_time are those of the interval's first and last events, also
    when they are not in the data (projection)."""
    import ceql.spark as cs

    query = "SELECT COLD FROM S WHERE HOT ; WARM ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] PARTITION BY [sensor] WITHIN 1 minute"
    rows = ss.events(1200, 6, seed=8)
    out = cs.detect(ss.to_df(spark, scrambled(rows), 2), query, time_field="ts", order_field="offset")
    truth = ss.ground_truth(rows, query)
    assert truth and all(len(t[3]) == 1 and t[1] <= t[2] for t in truth)
    ss.assert_same(ss.collect(out), truth)


def test_numeric_time_field_needs_a_unit_and_agrees_with_timestamps(spark):
    import ceql.spark as cs
    from pyspark.sql import functions as F

    rows = ss.events(600, 5, seed=4)
    df = ss.to_df(spark, scrambled(rows), 2).withColumn("ts_ms", F.unix_millis("ts"))
    with pytest.raises(ValueError, match="time_unit"):
        cs.detect(df, ss.QUERY, time_field="ts_ms", order_field="offset")
    by_ms = cs.detect(df, ss.QUERY, time_field="ts_ms", order_field="offset", time_unit="ms")
    by_ts = cs.detect(df, ss.QUERY, time_field="ts", order_field="offset")
    a = sorted((r.sensor, tuple(e.offset for e in r.events)) for r in by_ms.collect())
    b = sorted((r.sensor, tuple(e.offset for e in r.events)) for r in by_ts.collect())
    assert a and a == b


def test_input_without_type_column_is_refused(spark):
    import ceql.spark as cs

    df = ss.to_df(spark, ss.events(10, 2, seed=1), 1).withColumnRenamed("type", "event_type")
    with pytest.raises(ValueError, match="type_field="):
        cs.detect(df, ss.QUERY, time_field="ts", order_field="offset")


def test_type_field_names_the_type_column_without_renaming(spark):
    import ceql.spark as cs

    rows = ss.events(600, 5, seed=12)
    df = ss.to_df(spark, scrambled(rows), 2).withColumnRenamed("type", "event_type")
    out = cs.detect(df, ss.QUERY, time_field="ts", order_field="offset", type_field="event_type")
    assert "event_type" in out.schema["events"].dataType.elementType.fieldNames()
    ss.assert_same(ss.collect(out), ss.ground_truth(rows, ss.QUERY))


def test_kafka_columns_are_time_and_order_by_default(spark):
    """A Kafka source's columns (timestamp, partition, offset, ...) need no
    time_field, order_field or time_unit: (partition, offset) is the order."""
    import ceql.spark as cs
    from pyspark.sql import functions as F

    rows = ss.events(800, 6, seed=13)
    df = (ss.to_df(spark, scrambled(rows), 3)
          .withColumnRenamed("ts", "timestamp")
          .withColumn("partition", (F.col("offset") % 3).cast("int"))
          .withColumn("topic", F.lit("sensors"))
          .withColumn("timestampType", F.lit(0)))
    out = cs.detect(df, ss.QUERY)
    got = sorted((r.sensor, tuple(e.offset for e in r.events)) for r in out.collect())
    truth = sorted((t[0][0], t[3]) for t in ss.ground_truth(rows, ss.QUERY))
    assert truth and got == truth
    assert {"partition", "topic", "timestampType"} <= set(out.schema["events"].dataType.elementType.fieldNames())


def test_explode_events_one_row_per_event_with_index(spark):
    import ceql.spark as cs

    rows = ss.events(500, 3, seed=9)
    matches = cs.detect(ss.to_df(spark, rows, 2), ss.QUERY_SEQ, time_field="ts", order_field="offset")
    exploded = cs.explode_events(matches)
    assert {"match_id", "start_time", "end_time", "event_index", "type", "ts", "offset", "sensor", "temp"} <= set(exploded.columns)
    per_match = {r.match_id: [e.offset for e in r.events] for r in matches.collect()}
    got = {}
    for r in exploded.collect():
        got.setdefault(r.match_id, {})[r.event_index] = r.offset
    assert per_match and sum(len(v) for v in per_match.values()) == exploded.count()
    assert {k: [v[i] for i in range(len(v))] for k, v in got.items()} == per_match


def test_late_and_buckets_options_are_checked(spark):
    import ceql.spark as cs

    df = ss.to_df(spark, ss.events(10, 2, seed=1), 1)
    with pytest.raises(ValueError, match="late"):
        cs.detect(df, ss.QUERY, time_field="ts", order_field="offset", late="keep")
    with pytest.raises(ValueError, match="buckets"):
        cs.detect(df, ss.QUERY, time_field="ts", order_field="offset", buckets=0)
    # T0 is timezone-aware: the session is UTC, so no shift
    assert ss.T0.tzinfo is dt.timezone.utc


def test_ties_between_keys_do_not_depend_on_the_shuffle(spark):
    """One group for the whole query (WITHIN n EVENTS): events of different keys at
    the same (time, order) are read in key order, so every partitioning gives the
    same matches and ids."""
    import ceql.spark as cs

    rng = random.Random(5)
    base = dt.datetime(2026, 1, 1)
    rows = [{"type": rng.choice("AB"), "ts": base + dt.timedelta(seconds=i), "offset": i, "k": k}
            for i in range(60) for k in (1, 2)]
    query = "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 2 EVENTS"
    schema = "type string, ts timestamp, offset long, k long"
    results = []
    for parts, seed in ((1, 0), (3, 1), (4, 2)):
        df = spark.createDataFrame(scrambled(rows, seed), schema).repartition(parts)
        out = cs.detect(df, query, time_field="ts", order_field="offset")
        results.append(sorted((r["match_id"], r["k"]) for r in out.collect()))
    assert results[0] and results[0] == results[1] == results[2]


def test_timestamp_ntz_is_utc_wall_time_whatever_the_session_zone(spark):
    import ceql.spark as cs

    rows = [("A", dt.datetime(2024, 3, 31, 1, 59), 0), ("B", dt.datetime(2024, 3, 31, 3, 1), 1)]
    old = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "Europe/Paris")
        df = spark.createDataFrame(rows, "type string, ts timestamp_ntz, off long")
        query = "SELECT * FROM S WHERE A ; B WITHIN {} minutes"
        assert cs.detect(df, query.format(5), time_field="ts", order_field="off").count() == 0
        assert cs.detect(df, query.format(62), time_field="ts", order_field="off").count() == 1
    finally:
        spark.conf.set("spark.sql.session.timeZone", old)


def test_a_key_column_named_like_an_output_column_is_refused(spark):
    import ceql.spark as cs

    df = spark.createDataFrame([("A", 1, 0, 7), ("B", 2, 1, 7)], "type string, ts long, off long, start_time long")
    with pytest.raises(ValueError, match="start_time"):
        cs.detect(df, "SELECT * FROM S WHERE A ; B PARTITION BY [start_time] WITHIN 10 seconds",
                  time_field="ts", order_field="off", time_unit="s")


def test_a_null_order_field_is_refused(spark):
    import ceql.spark as cs

    df = spark.createDataFrame([("A", 1, 0), ("B", 2, None)], "type string, ts long, off long")
    with pytest.raises(Exception, match="null order_field 'off'"):
        cs.detect(df, "SELECT * FROM S WHERE A ; B WITHIN 10 seconds", time_field="ts", order_field="off",
                  time_unit="s").collect()


def test_check_executors_imports_ceql_on_the_executors(spark):
    import ceql.spark as cs

    pythons = cs.check_executors(spark, tasks=2)
    assert pythons and all(p for p in pythons)


def test_check_executors_refuses_another_build_of_the_same_version(spark, monkeypatch):
    """Two builds of one version (a wheel rebuilt on the driver only, say) differ in
    their Python files: the executors' digest (computed there) is not the driver's."""
    from ceql.spark import _executors

    monkeypatch.setattr(_executors, "source_digest", lambda: "0" * 16)
    with pytest.raises(_executors.CeqlSparkSetupError, match=r"is another build than the driver's"):
        _executors.check_executors(spark, tasks=1)


def test_events_no_run_can_use_are_dropped_before_the_shuffle(spark):
    """docs/spark.md, "Dropped event types": under HOT ; COLD the WARM and OTHER rows
    never reach the shuffle, and the answer is the single-process one over every row;
    under HOT : COLD (an event between breaks the run) every row goes through."""
    import ceql.spark as cs

    rows = ss.events(2000, 20, seed=3, step_ms=2000)
    assert {"WARM", "OTHER"} <= {r["type"] for r in rows}
    df = ss.to_df(spark, scrambled(rows, seed=2), partitions=3)
    dropping = cs.detect(df, ss.QUERY, time_field="ts", order_field="offset")
    # The analyzed plan: the optimizer folds a filter into a local relation.
    plan = dropping._jdf.queryExecution().analyzed().toString().replace(" ", "")
    assert "IN(COLD,HOT)" in plan, plan
    truth = ss.ground_truth(rows, ss.QUERY)
    assert len(truth) > 50
    ss.assert_same(ss.collect(dropping), truth)
    contiguous = "SELECT * FROM S WHERE HOT : COLD PARTITION BY [sensor] WITHIN 2 minutes"
    keeping = cs.detect(df, contiguous, time_field="ts", order_field="offset")
    assert "IN(COLD,HOT)" not in keeping._jdf.queryExecution().analyzed().toString().replace(" ", "")
    truth = ss.ground_truth(rows, contiguous)
    assert truth, "some HOT directly followed by a COLD of its sensor"
    ss.assert_same(ss.collect(keeping), truth)
