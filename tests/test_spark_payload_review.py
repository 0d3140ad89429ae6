"""A Spark review (2026-11-28): nested payload values pandas cannot carry are refused in
streaming with an error naming the column (a timestamp inside a struct came back shifted
by the session time zone, a bigint inside one rounded, a map failed every micro-batch);
the ``deadline`` column saturates as the engine's deadline does; ``explode_events`` gives
distinct column names."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

pytest.register_assert_rewrite("spark_support")
import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

UTC = dt.timezone.utc
QUERY = "SELECT * FROM S WHERE A ; B PARTITION BY [sensor] WITHIN 5 seconds"
BASE = [("type", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("offset", pa.int64()), ("sensor", pa.int64())]


@pytest.mark.parametrize("payload, named", [
    (pa.struct([("at", pa.timestamp("us", tz="UTC"))]), "timestamp"),
    (pa.list_(pa.int64()), "bigint"),
    (pa.struct([("v", pa.float64())]), "double"),
    (pa.map_(pa.string(), pa.string()), "map<string,string>"),
])
def test_streaming_refuses_a_nested_payload_pandas_cannot_carry(spark, tmp_path, payload, named):
    import ceql.spark as cs

    schema = pa.schema(BASE + [("p", payload)])
    ss.write_table(tmp_path / "in", "part-0000", schema.empty_table())
    events = spark.readStream.schema(spark.createDataFrame(schema.empty_table()).schema).parquet(str(tmp_path / "in"))
    with pytest.raises(ValueError, match=rf"the column 'p' \(.*\) holds {named} values inside a nested type"):
        cs.detect(events, QUERY, time_field="ts", order_field="offset", watermark="10 seconds")


def test_streaming_accepts_nested_strings_and_ints(spark, tmp_path):
    import ceql.spark as cs

    schema = pa.schema(BASE + [("p", pa.struct([("s", pa.string()), ("i", pa.int32()), ("l", pa.list_(pa.string()))]))])
    ss.write_table(tmp_path / "in", "part-0000", schema.empty_table())
    events = spark.readStream.schema(spark.createDataFrame(schema.empty_table()).schema).parquet(str(tmp_path / "in"))
    assert "events" in cs.detect(events, QUERY, time_field="ts", order_field="offset", watermark="10 seconds").columns


def test_the_deadline_column_saturates_as_the_engine_does(spark):
    """An integer time in ns 5 s before 2^63 - 1 and FOR 10 seconds: the engine's deadline is
    2^63 - 1 (docs/language.md#s3-3b); numpy's int64 addition wrapped the column to 1677."""
    import ceql
    import ceql.spark as cs

    schema = pa.schema([("type", pa.string()), ("t", pa.int64()), ("offset", pa.int64()), ("sensor", pa.int64())])
    rows = [dict(type="A", t=(1 << 63) - 1 - 5_000_000_000, offset=1, sensor=1)]
    query = "SELECT * FROM S WHERE A ; ABSENT(C) FOR 10 seconds PARTITION BY [sensor] WITHIN 1 minute"
    table = pa.Table.from_pylist(rows, schema=schema)
    assert [m.deadline for m in ceql.compile(query).run(table, time_field="t", close_deadlines=True)] == [(1 << 63) - 1]
    got = cs.detect(spark.createDataFrame(table), query, time_field="t", time_unit="ns", order_field="offset",
                    close_deadlines=True)
    assert [r["deadline"] for r in got.collect()] == [(1 << 63) - 1]


def test_explode_events_gives_distinct_column_names(spark):
    import ceql.spark as cs

    t0 = dt.datetime(2024, 3, 1, tzinfo=UTC)
    schema = pa.schema(BASE + [("match_id", pa.string()), ("event_match_id", pa.string())])
    rows = [dict(type="AB"[i % 2], ts=t0 + dt.timedelta(seconds=i), offset=i, sensor=0, match_id=f"m{i}",
                 event_match_id=f"e{i}") for i in range(4)]
    matches = cs.detect(spark.createDataFrame(pa.Table.from_pylist(rows, schema=schema)), QUERY,
                        time_field="ts", order_field="offset")
    exploded = cs.explode_events(matches)
    assert len(exploded.columns) == len(set(exploded.columns))
    row = exploded.orderBy("event_index").first()
    assert (row["_event_match_id"], row["event_match_id"]) == ("m0", "e0")  # the renamed field, the input column
