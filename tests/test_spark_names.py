"""Column names with dots and backquotes through ceql.spark, batch and streaming.

PySpark's ``mapInArrow`` and ``applyInPandasWithState`` look each column up by its
name, which fails for such names; the glue renames them by position around those
calls (``_input.plain_names``). The answer is written out by hand: one match
``A ; B`` per key, with every column, under its own name, in ``events``."""

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
TIME = "my.ts"
PAYLOAD = ["a.b", "a`b", "x y"]
ROWS = [
    ("A", T0, 0, 1, 10, 20, 30),
    ("A", T0 + dt.timedelta(seconds=1), 1, 2, 11, 21, 31),
    ("B", T0 + dt.timedelta(seconds=2), 2, 1, 12, 22, 32),
    ("B", T0 + dt.timedelta(seconds=3), 3, 2, 13, 23, 33),
    ("Z", T0 + dt.timedelta(hours=2), 4, 1, 0, 0, 0),  # passes the watermark
]


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


SCHEMA = ", ".join(["type string", f"{quoted(TIME)} timestamp", "id long", "k long"] + [f"{quoted(p)} long" for p in PAYLOAD])


def check(result) -> None:
    assert [f.name for f in result.schema["events"].dataType.elementType.fields] == ["type", TIME, "id", "k", *PAYLOAD]
    got = sorted((r.k, [(e["id"], e["a.b"], e["a`b"], e["x y"]) for e in r.events]) for r in result.collect())
    assert got == [(1, [(0, 10, 20, 30), (2, 12, 22, 32)]), (2, [(1, 11, 21, 31), (3, 13, 23, 33)])]


def test_batch_with_dots_and_backquotes_in_names(spark):
    import ceql.spark as cs

    df = spark.createDataFrame(ROWS, SCHEMA)
    check(cs.detect(df, QUERY, time_field=TIME, order_field="id"))


def test_streaming_with_dots_and_backquotes_in_names(spark, tmp_path):
    import ceql.spark as cs

    src = tmp_path / "in"
    spark.createDataFrame(ROWS, SCHEMA).coalesce(1).write.parquet(str(src))
    stream = spark.readStream.schema(SCHEMA).parquet(str(src))
    q = (cs.detect(stream, QUERY, time_field=TIME, order_field="id", watermark="1 minute")
         .writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    assert q.awaitTermination(ss.STREAM_TIMEOUT), "the stream did not finish"
    check(spark.read.parquet(str(tmp_path / "out")))
