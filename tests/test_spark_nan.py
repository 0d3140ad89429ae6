"""NaN and NULL in floating-point columns through ceql.spark, batch and streaming.

The engine tells them apart (docs/language.md): a NaN key is one key, a NULL key is
none; ``max`` over a NaN is NaN, over only NULLs NULL. Spark hands streaming rows
to pandas with both as NaN, so the glue carries the NULLs beside each such column
(``_streaming.float_null_masks``). The expected matches are written out by hand
from those rules."""

from __future__ import annotations

import datetime as dt
import math

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

T0 = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
NAN = float("nan")
QUERY = "SELECT *, max(a.w) AS mw FROM S WHERE A AS a ; B PARTITION BY [k] WITHIN 10 seconds"
SCHEMA = "type string, ts timestamp, offset long, k double, w double"
KEYS = [NAN, NAN, 1.0, 1.0, None, None, -0.0, 0.0]
WS = [NAN, 1.0, NAN, 2.0, 5.0, 6.0, None, 3.0]
ROWS = [
    {"type": "AB"[i % 2], "ts": T0 + dt.timedelta(seconds=i), "offset": i, "k": KEYS[i], "w": WS[i]}
    for i in range(len(KEYS))
] + [{"type": "Z", "ts": T0 + dt.timedelta(hours=2), "offset": 8, "k": 0.0, "w": 0.0}]  # passes the watermark


def same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and (a == b or (math.isnan(a) and math.isnan(b))))


def check(rows) -> None:
    """NaN key: (0, 1), max NaN. Key 1.0: (2, 3), max NaN. NULL key: no partition,
    no match. -0.0 and 0.0: one key, (6, 7), max of a NULL is NULL."""
    got = sorted(((tuple(e.offset for e in r.events), r.k, r.mw, [e.w for e in r.events]) for r in rows),
                 key=lambda m: m[0])
    assert [m[0] for m in got] == [(0, 1), (2, 3), (6, 7)]
    assert math.isnan(got[0][1]) and math.isnan(got[0][2])
    assert got[1][1] == 1.0 and math.isnan(got[1][2])
    assert got[2][1] == 0.0 and got[2][2] is None
    return got


def test_batch_keeps_nan_apart_from_null(spark):
    df = spark.createDataFrame([tuple(r.values()) for r in ROWS], SCHEMA)
    import ceql.spark as cs

    got = check(cs.detect(df, QUERY, time_field="ts", order_field="offset").collect())
    assert all(same(a, b) for a, b in zip(got[0][3] + got[2][3], [NAN, 1.0, None, 3.0]))


def test_streaming_keeps_nan_apart_from_null(spark, tmp_path):
    """A NaN key keeps its matches and a NaN measure stays NaN. A NaN inside
    ``events`` comes back NULL: Spark reads nested values from pandas with NaN as
    NULL (docs/spark.md, "NaN in streaming")."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import ceql.spark as cs

    src = tmp_path / "in"
    src.mkdir()
    arrow = pa.schema([("type", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("offset", pa.int64()),
                       ("k", pa.float64()), ("w", pa.float64())])
    pq.write_table(pa.Table.from_pylist(ROWS, schema=arrow), src / "f0.parquet")
    stream = spark.readStream.schema(SCHEMA).parquet(str(src))
    q = (cs.detect(stream, QUERY, time_field="ts", order_field="offset", watermark="1 minute")
         .writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True).start())
    assert q.awaitTermination(ss.STREAM_TIMEOUT), "the stream did not finish"
    got = check(spark.read.parquet(str(tmp_path / "out")).collect())
    assert all(same(a, b) for a, b in zip(got[2][3], [None, 3.0]))
    assert [w is None or math.isnan(w) for w in got[0][3]] == [True, False]
