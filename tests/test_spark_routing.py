"""ceql.spark with equalities routed by key (docs/language.md#s3-4b, docs/spark.md
"Routed queries"): the input is split by the routing key, each event type by its own
key attribute, normalised as the engine normalises it, so a routed query without
``PARTITION BY`` runs in parallel tasks. Batch and streaming against the
single-process engine, on scrambled input with keys of two column types."""

from __future__ import annotations

import datetime as dt
import logging
import math
import random

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

# ORDER events are keyed by `id` (a bigint column), PAYMENT events by `order_id` (a
# double column): 3 and 3.0, 0 and -0.0 are one routing key; 2.5, NaN and NULL are not
# the key of any ORDER.
QUERY = ("SELECT * FROM S WHERE ORDER AS o ; PAYMENT AS p "
         "FILTER p[order_id = o.id AND amount >= o.amount] WITHIN 1 minute")
T0 = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)


def orders_and_payments(n: int, seed: int):
    """n events, one second apart: ORDERs with integer ids, PAYMENTs whose order_id
    is an integral double (sometimes -0.0 for order 0), a fraction, NaN or NULL."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        if rnd.random() < 0.45:
            rows.append({"type": "ORDER", "ts": T0 + dt.timedelta(seconds=i), "offset": i,
                         "id": rnd.randrange(6), "order_id": None, "amount": float(rnd.randrange(1, 5))})
        else:
            k = rnd.randrange(6)
            oid = rnd.choice([float(k), float(k), -0.0 if k == 0 else float(k), k + 0.5, math.nan, None])
            rows.append({"type": "PAYMENT", "ts": T0 + dt.timedelta(seconds=i), "offset": i,
                         "id": None, "order_id": oid, "amount": float(rnd.randrange(1, 5))})
    return rows


def schema():
    import pyarrow as pa

    return pa.schema([("type", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("offset", pa.int64()),
                      ("id", pa.int64()), ("order_id", pa.float64()), ("amount", pa.float64())])


def truth(rows, query=QUERY):
    """The single-process engine over the rows in (time, order) order: (start µs,
    end µs, offsets) per complex event."""
    import pyarrow as pa

    import ceql

    ordered = sorted(rows, key=lambda r: (r["ts"], r["offset"]))
    table = pa.Table.from_pylist(ordered, schema=schema())
    return [((), ss.micros(ordered[m.start]["ts"]), ss.micros(ordered[m.end]["ts"]),
             tuple(ordered[p]["offset"] for p in m.positions)) for m in ceql.compile(query).run(table, time_field="ts")]


def frame(spark, rows, partitions=3):
    """The rows, scrambled, as a DataFrame (from Python values, so that NaN and NULL
    stay apart)."""
    from pyspark.sql import types as T

    shuffled = list(rows)
    random.Random(7).shuffle(shuffled)
    spark_schema = T.StructType([
        T.StructField("type", T.StringType()), T.StructField("ts", T.TimestampType()),
        T.StructField("offset", T.LongType()), T.StructField("id", T.LongType()),
        T.StructField("order_id", T.DoubleType()), T.StructField("amount", T.DoubleType()),
    ])
    names = [f.name for f in spark_schema.fields]
    return spark.createDataFrame([tuple(r[c] for c in names) for r in shuffled], spark_schema).repartition(partitions)


def ss_table(rows):
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=schema())


def test_the_query_is_routed_and_split_by_its_routing_key(spark, caplog):
    import ceql
    import ceql.spark as cs

    d = ceql.compile(QUERY).describe()
    assert d["partition_by"] == [] and d["key_independent"] is True
    assert sorted(d["routed_by"]) == [("S>ORDER", "id"), ("S>PAYMENT", "order_id")] or \
        sorted(d["routed_by"]) == [("ORDER", "id"), ("PAYMENT", "order_id")]
    rows = orders_and_payments(40, seed=1)
    with caplog.at_level(logging.WARNING, logger="ceql.spark"):
        out = cs.detect(frame(spark, rows), QUERY, time_field="ts", order_field="offset")
    assert not [r for r in caplog.records if "one Spark task" in r.getMessage()]
    plan = out._jdf.queryExecution().executedPlan().toString()
    assert "hashpartitioning(__ceql_route" in plan, plan


def test_batch_equals_the_single_process_engine(spark):
    import ceql.spark as cs

    rows = orders_and_payments(700, seed=11)
    expected = truth(rows)
    assert len(expected) > 30
    # A hand-checked pair: order 0 then a payment of -0.0 for it, 1 s later.
    pair = [{"type": "ORDER", "ts": T0, "offset": 0, "id": 0, "order_id": None, "amount": 1.0},
            {"type": "PAYMENT", "ts": T0 + dt.timedelta(seconds=1), "offset": 1, "id": None, "order_id": -0.0, "amount": 2.0},
            {"type": "PAYMENT", "ts": T0 + dt.timedelta(seconds=2), "offset": 2, "id": None, "order_id": math.nan, "amount": 2.0}]
    got_pair = ss.collect(cs.detect(frame(spark, pair, 2), QUERY, time_field="ts", order_field="offset"), key=None)
    assert got_pair == [((), ss.micros(T0), ss.micros(T0) + 1_000_000, (0, 1))]
    got = ss.collect(cs.detect(frame(spark, rows), QUERY, time_field="ts", order_field="offset"), key=None)
    ss.assert_same(got, expected)


def test_streaming_equals_the_single_process_engine(spark, tmp_path):
    import ceql.spark as cs

    rows = orders_and_payments(360, seed=12)
    flush = {"type": "OTHER", "ts": T0 + dt.timedelta(hours=2), "offset": 10**6, "id": None, "order_id": None, "amount": 0.0}
    src = tmp_path / "in"
    for i in range(0, len(rows), 120):
        ss.write_table(src, f"part-{i // 120:04d}", ss_table(rows[i:i + 120]))
    ss.write_table(src, "part-9999", ss_table([flush]))
    df = spark.readStream.schema(spark.read.parquet(str(src)).schema).option("maxFilesPerTrigger", 1).parquet(str(src))
    out = cs.detect(df, QUERY, time_field="ts", order_field="offset", watermark="30 seconds", buckets=4)
    q = (out.writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    assert q.awaitTermination(ss.STREAM_TIMEOUT), "the stream did not finish"
    expected = truth(rows + [flush])
    assert expected
    ss.assert_same(ss.collect(spark.read.parquet(str(tmp_path / "out")), key=None), expected)


def test_routed_next_is_split_and_chooses_per_key(spark):
    """Under NEXT a routed query chooses among one key's valuations inside the window
    (docs/language.md#s3-4b), so splitting by the routing key keeps the answer."""
    import ceql
    import ceql.spark as cs

    query = QUERY.replace("SELECT *", "SELECT NEXT *")
    assert ceql.compile(query).describe()["key_independent"] is True
    rows = orders_and_payments(500, seed=13)
    expected = truth(rows, query)
    assert len(expected) > 20
    out = cs.detect(frame(spark, rows), query, time_field="ts", order_field="offset")
    assert "hashpartitioning(__ceql_route" in out._jdf.queryExecution().executedPlan().toString()
    ss.assert_same(ss.collect(out, key=None), expected)


def test_key_attributes_of_two_kinds_keep_one_task_and_the_single_process_error(spark, caplog):
    """ORDER keyed by a bigint, PAYMENT by a string: in one process the payment meets
    the held substream of order 1 and raises (docs/language.md#s3-4b). Split by key,
    "i1" and "sx" went to different tasks with 200 shuffle partitions and the answer
    was silently empty; the glue now keeps such a query in one task."""
    import ceql
    import ceql.spark as cs

    q = "SELECT * FROM S WHERE ORDER AS o ; PAYMENT AS p FILTER p[order_id = o.id2] WITHIN 1 hour"
    rows = [(0, "ORDER", 1, None, 100, 0), (1, "PAYMENT", None, "x", 101, 0),
            (2, "ORDER", 2, None, 102, 0), (3, "PAYMENT", None, "2", 103, 0)]
    schema = "id long, type string, id2 long, order_id string, ts long, off long"
    with pytest.raises(ceql.CeqlEventError, match="string"):
        ceql.compile(q).run([dict(zip(["id", "type", "id2", "order_id", "ts", "off"], r)) for r in rows],
                            time_field="ts", time_unit="s")
    saved = {k: spark.conf.get(k) for k in ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")}
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    spark.conf.set("spark.sql.shuffle.partitions", "200")
    try:
        with caplog.at_level(logging.WARNING, logger="ceql.spark"):
            out = cs.detect(spark.createDataFrame(rows, schema), q, time_field="ts", order_field="off", time_unit="s")
        assert [r for r in caplog.records if "two kinds" in r.getMessage()]
        with pytest.raises(Exception, match="cannot compare a string with a number"):
            out.collect()
    finally:
        for k, v in saved.items():
            spark.conf.set(k, v)
