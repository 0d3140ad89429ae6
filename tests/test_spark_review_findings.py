"""Findings of a review of the Spark glue against its documentation (2026-11-28),
one test each, against the single-process engine (the reference docs/spark.md
promises): a compiled query's compat flag reaches the executors; with declarations
each event type is split by the key attribute it declares; streaming keeps 64-bit
integers exact through pandas; equal (time, order) rows of different routing keys
are not duplicates; output names are refused whatever their case."""

from __future__ import annotations

import datetime as dt

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402
from test_spark_routing import frame as routed_frame, orders_and_payments, truth as routed_truth  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark


def _positions_truth(rows, query, **compile_options):
    import pyarrow as pa

    import ceql

    ordered = sorted(rows, key=lambda r: (r["ts"], r["offset"]))
    table = pa.Table.from_pylist(ordered, schema=ss.arrow_schema())
    return [((), ss.micros(ordered[m.start]["ts"]), ss.micros(ordered[m.end]["ts"]),
             tuple(ordered[p]["offset"] for p in m.positions))
            for m in ceql.compile(query, **compile_options).run(table, time_field="ts")]


def test_a_compiled_query_keeps_compat_ignore_strategy_on_the_executors(spark):
    import ceql
    import ceql.spark as cs

    query = ("SELECT NEXT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] "
             "PARTITION BY [sensor] WITHIN 2 minutes")
    rows = ss.events(400, 3, seed=5)
    with_compat = _positions_truth(rows, query, compat_ignore_strategy=True)
    assert len(with_compat) > len(_positions_truth(rows, query))  # ALL keeps more than NEXT
    out = cs.detect(ss.to_df(spark, rows), ceql.compile(query, compat_ignore_strategy=True),
                    time_field="ts", order_field="offset")
    ss.assert_same(ss.collect(out, key=None), with_compat)
    with pytest.raises(ValueError, match="schema= is for a query given as text"):
        cs.detect(ss.to_df(spark, rows), ceql.compile(query), schema="CREATE STREAM S { EVENT HOT { temp: double } }",
                  time_field="ts", order_field="offset")


def test_with_declarations_each_type_is_split_by_the_key_it_declares(spark):
    """HOT declares `sensor`, COLD only `device`: the engine keys a COLD on its
    device even when its `sensor` column has a value (docs/language.md#s3-8), so the
    glue must send it where the HOTs of that device go."""
    import pyarrow as pa
    from pyspark.sql import types as T

    import ceql
    import ceql.spark as cs

    schema = ("CREATE STREAM S { EVENT HOT { sensor: int, temp: double }, "
              "EVENT COLD { device: int, temp: double } }")
    query = ("SELECT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] "
             "PARTITION BY [sensor, device] WITHIN 2 minutes")
    base = ss.events(400, 4, seed=9)
    rows = []
    for r in base:
        if r["type"] not in ("HOT", "COLD"):
            continue
        row = dict(r, device=None)
        if r["type"] == "COLD":
            row["device"] = r["sensor"]
            row["sensor"] = (r["sensor"] + 1 + r["offset"]) % 4  # a value the engine does not read
        rows.append(row)
    arrow = pa.schema([("type", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("offset", pa.int64()),
                       ("sensor", pa.int64()), ("device", pa.int64()), ("temp", pa.float64())])
    ordered = sorted(rows, key=lambda r: (r["ts"], r["offset"]))
    found = ceql.compile(query, schema).run(pa.Table.from_pylist(ordered, schema=arrow), time_field="ts")
    truth = [((), ss.micros(ordered[m.start]["ts"]), ss.micros(ordered[m.end]["ts"]),
              tuple(ordered[p]["offset"] for p in m.positions)) for m in found]
    assert truth
    spark_schema = T.StructType([T.StructField(f.name, {"string": T.StringType(), "int64": T.LongType(),
                                                        "double": T.DoubleType()}.get(str(f.type), T.TimestampType()))
                                 for f in arrow])
    df = spark.createDataFrame([tuple(r[f.name] for f in arrow) for r in rows], spark_schema).repartition(3)
    out = cs.detect(df, query, schema=schema, time_field="ts", order_field="offset")
    ss.assert_same(ss.collect(out, key=None), truth)


def test_streaming_keeps_64_bit_keys_exact_when_a_chunk_has_nulls(spark, tmp_path):
    """Spark hands pandas a bigint column with a NULL as float64, exact only up to
    2^53: keys 2^60 + k must stay apart, and come back as they were."""
    big = 1 << 60
    rows = ss.events(300, 3, seed=13)
    for i, r in enumerate(rows):
        r["sensor"] = None if r["type"] == "WARM" else big + r["sensor"]
    flush = ss.flush_event(rows, 100_000)
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    for i in range(0, len(rows), 100):
        ss.write_parquet(src, f"part-{i:05d}", rows[i:i + 100])
    ss.write_parquet(src, "part-flush", [flush])
    # One bucket: the keyless rows' NULLs share every chunk with the keys.
    ss.run_stream(spark, src, out, ckpt, buckets=1)
    truth = ss.ground_truth(rows + [flush], ss.QUERY)
    assert {k for (k,), *_ in truth} == {big, big + 1, big + 2}
    ss.assert_same(ss.collect(spark.read.parquet(str(out))), truth)


def test_equal_time_and_order_of_two_routing_keys_are_not_duplicates(spark):
    import ceql.spark as cs

    rows = orders_and_payments(120, seed=3)
    # Two payments of two orders at one (time, offset): in two substreams.
    at = rows[-1]["ts"] + dt.timedelta(seconds=1)
    rows += [{"type": "ORDER", "ts": at - dt.timedelta(milliseconds=500), "offset": 10_000, "id": 1,
              "order_id": None, "amount": 1.0},
             {"type": "ORDER", "ts": at - dt.timedelta(milliseconds=400), "offset": 10_001, "id": 2,
              "order_id": None, "amount": 1.0},
             {"type": "PAYMENT", "ts": at, "offset": 10_002, "id": None, "order_id": 1.0, "amount": 2.0},
             {"type": "PAYMENT", "ts": at, "offset": 10_002, "id": None, "order_id": 2.0, "amount": 2.0}]
    from test_spark_routing import QUERY

    out = cs.detect(routed_frame(spark, rows), QUERY, time_field="ts", order_field="offset")
    got = ss.collect(out, key=None)
    expected = routed_truth(rows)
    assert sum(1 for m in expected if m[3][-1] == 10_002) >= 2
    ss.assert_same(got, expected)


@pytest.mark.parametrize("name", ["Match_ID", "kind", "Deadline"])
def test_partition_by_columns_named_like_an_output_column_are_refused_in_any_case(spark, name):
    import ceql.spark as cs

    rows = ss.events(10, 2, seed=1)
    df = ss.to_df(spark, rows).withColumnRenamed("sensor", name)
    query = f"SELECT * FROM S WHERE HOT ; COLD PARTITION BY [{name}] WITHIN 2 minutes"
    with pytest.raises(ValueError, match="has the name of an output column"):
        cs.detect(df, query, time_field="ts", order_field="offset")


def test_streaming_reads_time_stamps_as_instants_whatever_their_year_and_time_zone(spark, tmp_path):
    """A stream sends its timestamp columns as microseconds, not through pandas'
    wall-clock nanoseconds: a 9999-12-31 sentinel in the payload does not fail it,
    and a timestamp key in New York's repeated hour keeps its two instants apart."""
    import pyarrow as pa
    from pyspark.sql import types as T

    import ceql.spark as cs

    # 2024-11-03 05:30 and 06:30 UTC are both 01:30 in New York.
    fall_back = [dt.datetime(2024, 11, 3, 5, 30, tzinfo=dt.timezone.utc),
                 dt.datetime(2024, 11, 3, 6, 30, tzinfo=dt.timezone.utc)]
    sentinel = dt.datetime(9999, 12, 31, tzinfo=dt.timezone.utc)
    rows = ss.events(200, 2, seed=21)
    for r in rows:
        r["shift"] = fall_back[r["sensor"]]
        r["valid_to"] = sentinel
    flush = dict(ss.flush_event(rows, 100_000), shift=fall_back[0], valid_to=sentinel)
    arrow = pa.schema(list(ss.arrow_schema()) + [("shift", pa.timestamp("us", tz="UTC")),
                                                 ("valid_to", pa.timestamp("us", tz="UTC"))])
    spark_schema = T.StructType(ss.spark_schema().fields + [T.StructField("shift", T.TimestampType()),
                                                            T.StructField("valid_to", T.TimestampType())])
    src, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    for i in range(0, len(rows), 100):
        ss.write_table(src, f"part-{i:05d}", pa.Table.from_pylist(rows[i:i + 100], schema=arrow))
    ss.write_table(src, "part-flush", pa.Table.from_pylist([flush], schema=arrow))
    query = ss.QUERY.replace("PARTITION BY [sensor]", "PARTITION BY [shift]")
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        events = spark.readStream.schema(spark_schema).option("maxFilesPerTrigger", 1).parquet(str(src))
        q = (cs.detect(events, query, time_field="ts", order_field="offset", watermark="1 minute")
             .writeStream.format("parquet").option("path", str(out)).option("checkpointLocation", str(ckpt))
             .trigger(availableNow=True).start())
        assert q.awaitTermination(ss.STREAM_TIMEOUT)
        result = spark.read.parquet(str(out))
        from pyspark.sql import functions as F

        got = ss.collect(result, key=None)
        stamps = {r.v for r in result.select(F.explode("events").alias("e"))
                  .select(F.unix_micros("e.valid_to").alias("v")).collect()}
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    # The keys are the two sensors' instants: the answer of PARTITION BY [sensor].
    ss.assert_same(got, [((),) + m[1:] for m in ss.ground_truth(rows + [flush], ss.QUERY)])
    assert stamps == {ss.micros(sentinel)}
