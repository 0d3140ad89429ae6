"""match_id's row hashes are computed in the task (ceql-engine's row_hash) as Spark's
own ``xxhash64``: checked against Spark itself, value by value, for every column type
the task hashes, and end to end for the ids of ``detect``; a column type the task
does not hash is left to Spark."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

D = decimal.Decimal

#: (Spark type, values): edge values of every type the task hashes, NULL included.
COLUMNS = {
    "b": ("boolean", [True, False, None]),
    "i8": ("tinyint", [0, -128, 127, None]),
    "i16": ("smallint", [-32768, 32767, 7, None]),
    "i32": ("int", [0, -1, 2**31 - 1, -(2**31), None]),
    "i64": ("bigint", [0, -1, 2**63 - 1, -(2**63), None]),
    "f32": ("float", [0.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), None]),
    "f64": ("double", [0.0, -0.0, -2.25, float("nan"), float("inf"), 1e300, None]),
    "d": ("date", [dt.date(1970, 1, 1), dt.date(1900, 2, 28), dt.date(2262, 4, 11), None]),
    "ts": ("timestamp", [dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc),
                         dt.datetime(2026, 11, 27, 2, 3, 4, 5, tzinfo=dt.timezone.utc), None]),
    "ntz": ("timestamp_ntz", [dt.datetime(2001, 2, 3, 4, 5, 6, 7), dt.datetime(1950, 1, 1), None]),
    "dec": ("decimal(10,2)", [D("0.00"), D("-12345678.90"), D("99999999.99"), None]),
    "wide": ("decimal(30,5)", [D("0"), D("-1"), D("128"), D("-129"), D("1234567890123456789012345.12345"),
                               D("-9999999999999999999999999.99999"), D("0.00001"), None]),
    "s": ("string", ["", "a", "héllo wörld", "x" * 31, "y" * 32, "z" * 33, "0123456789" * 13, None]),
    "bin": ("binary", [b"", b"\x00", b"\xff" * 40, bytes(range(37)), None]),
}


def column_frame(spark, name: str):
    spark_type, values = COLUMNS[name]
    return spark.createDataFrame([(v,) for v in values], f"v {spark_type}")


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_each_type_hashes_as_spark(spark, name):
    from pyspark.sql import functions as F

    from ceql.spark._match_id import with_row_hashes

    df = column_frame(spark, name)
    expected = df.select(F.xxhash64("v").alias("r0"), F.xxhash64(F.lit(1).cast("long"), "v").alias("r1")).collect()
    table = df.toArrow()
    hashed = with_row_hashes(table, ["v"])
    got = list(zip(hashed.column("__ceql_h0").to_pylist(), hashed.column("__ceql_h1").to_pylist()))
    assert got == [(r.r0, r.r1) for r in expected], f"{name}: {COLUMNS[name][1]}"


def test_many_columns_chain_as_spark(spark):
    """Several columns chain the seed (a NULL leaves it as it is), in order."""
    from pyspark.sql import functions as F

    from ceql.spark._match_id import with_row_hashes

    names = sorted(COLUMNS)
    width = max(len(v) for _, v in COLUMNS.values())
    rows = [tuple(COLUMNS[n][1][(i * (j + 1)) % len(COLUMNS[n][1])] for j, n in enumerate(names)) for i in range(3 * width)]
    df = spark.createDataFrame(rows, ", ".join(f"{n} {COLUMNS[n][0]}" for n in names))
    for order in (names, names[::-1]):
        expected = df.select(F.xxhash64(*order).alias("r0"), F.xxhash64(F.lit(1).cast("long"), *order).alias("r1")).collect()
        hashed = with_row_hashes(df.toArrow(), order)
        got = list(zip(hashed.column("__ceql_h0").to_pylist(), hashed.column("__ceql_h1").to_pylist()))
        assert got == [(r.r0, r.r1) for r in expected]


def spark_row_hashes(df, by: str) -> dict:
    """(sensor, ``by``) -> (r0, r1) of every row, computed by Spark's own xxhash64 over
    (sensor, time in ns, offset) as docs/spark.md defines them."""
    from pyspark.sql import functions as F

    ident = ["sensor", F.unix_micros("ts") * 1000, "offset"]
    rows = df.select("sensor", by, F.xxhash64(*ident).alias("r0"), F.xxhash64(F.lit(1).cast("long"), *ident).alias("r1"))
    return {(r[0], r[1]): (r.r0, r.r1) for r in rows.collect()}


def test_string_keys_ids_as_documented(spark):
    """detect with a string key and int orders: the ids are those of docs/spark.md,
    with the row hashes from Spark's xxhash64 (the task computes them)."""
    import ceql.spark as cs
    from pyspark.sql import functions as F

    rows = ss.events(400, 7, seed=5, step_ms=900)
    df = ss.to_df(spark, rows, partitions=3).withColumn("sensor", F.concat(F.lit("s-"), F.col("sensor").cast("string")))
    df = df.withColumn("offset", F.col("offset").cast("int"))
    got = sorted(r.match_id for r in cs.detect(df, ss.QUERY_SEQ, time_field="ts", order_field="offset").collect())
    truth = ss.ground_truth(rows, ss.QUERY_SEQ)
    assert len(truth) > 20
    hashed = spark_row_hashes(df, "offset")
    assert got == sorted(ss.ids_from_row_hashes(ss.QUERY_SEQ, truth, lambda k, o: hashed[(f"s-{k[0]}", o)]))


def test_unhashed_type_left_to_spark(spark):
    """An order field of a type the task does not hash (an interval): Spark computes
    the row hashes before the shuffle, and the ids are the same definition."""
    import ceql.spark as cs
    from ceql.spark import _input, _plan
    from pyspark.sql import functions as F

    rows = ss.events(300, 5, seed=3, step_ms=900)
    df = ss.to_df(spark, rows, partitions=2).withColumn("o", F.col("offset"))
    df = df.withColumn("offset", F.make_dt_interval(F.lit(0), F.lit(0), F.lit(0), F.col("o")))
    prep = _input.prepare(df, _plan.plan_of(ss.QUERY_SEQ, None), type_field=None, time_field="ts", order_field="offset",
                          time_unit=None, with_kind=False)
    assert prep.identity_columns is None and "__ceql_h0" in prep.df.columns
    got = sorted(r.match_id for r in cs.detect(df, ss.QUERY_SEQ, time_field="ts", order_field="offset").collect())
    truth = ss.ground_truth(rows, ss.QUERY_SEQ)
    assert len(truth) > 20
    hashed = spark_row_hashes(df, "o")
    assert got == sorted(ss.ids_from_row_hashes(ss.QUERY_SEQ, truth, lambda k, o: hashed[(k[0], o)]))


def test_collated_string_key_left_to_spark(spark):
    """A key with a collation other than UTF8_BINARY: Spark's xxhash64 hashes its
    collation key, so Spark computes the row hashes."""
    from ceql.spark import _input, _plan
    from pyspark.sql import functions as F

    df = ss.to_df(spark, ss.events(20, 3, seed=1), partitions=1)
    df = df.withColumn("sensor", F.collate(F.col("sensor").cast("string"), "UTF8_LCASE"))
    prep = _input.prepare(df, _plan.plan_of(ss.QUERY_SEQ, None), type_field=None, time_field="ts", order_field="offset",
                          time_unit=None, with_kind=False)
    assert prep.identity_columns is None and "__ceql_h0" in prep.df.columns
