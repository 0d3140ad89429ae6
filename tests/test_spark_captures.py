"""ceql.spark with ``captures=True`` (docs/language.md#s3-2a; docs/spark.md, "Captures"):
each struct of ``events`` carries its ``variables``, as ``Match.variables`` gives them,
and ``match_id`` hashes them, so two valuations of one complex event (V43) are two
rows with different ids. Batch and streaming, against ``Query.run(..., captures=True)``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

# Variables inside an iteration, and an event type next to AS names.
QUERY = ("SELECT * FROM S WHERE (HOT AS h) ; (WARM AS w)+ ; COLD FILTER h[temp > 40] AND COLD[temp < 10] "
         "PARTITION BY [sensor] WITHIN 90 seconds")
# V43's shape: two valuations of each complex event.
QUERY_TWO = ("SELECT * FROM S WHERE ((HOT AS x) OR (HOT AS y)) ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] "
             "PARTITION BY [sensor] WITHIN 30 seconds")


def scrambled(rows, seed=0):
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows


def collect(df, key="sensor"):
    """Output rows as ground_truth(..., captures=True) gives them."""
    from pyspark.sql import functions as F

    out = []
    for r in df.select(F.col(key).alias("k"), F.unix_micros("start_time").alias("s"), F.unix_micros("end_time").alias("e"),
                       F.transform("events", lambda x: x["offset"]).alias("o"),
                       F.transform("events", lambda x: x["variables"]).alias("v")).collect():
        out.append(((r["k"],), r["s"], r["e"], tuple(r["o"]), tuple(tuple(v) for v in r["v"])))
    return out


def test_batch_variables_and_ids_equal_the_python_api(spark):
    import ceql.spark as cs

    rows = ss.events(1000, 10, seed=201, step_ms=600)
    df = ss.to_df(spark, scrambled(rows), partitions=3)
    out = cs.detect(df, QUERY, time_field="ts", order_field="offset", captures=True).cache()
    truth = ss.ground_truth(rows, QUERY, captures=True)
    assert len(truth) > 50 and any(len(t[3]) > 3 for t in truth)
    assert {v for t in truth for vs in t[4] for v in vs} == {"HOT", "h", "WARM", "w", "COLD"}
    ss.assert_same(collect(out), truth)
    assert out.schema["events"].dataType.elementType["variables"].dataType.simpleString() == "array<string>"
    got_ids = [r.match_id for r in out.select("match_id").collect()]
    assert sorted(got_ids) == sorted(ss.expected_ids(spark, rows, truth, QUERY))
    # Without captures the ids are today's: those of the complex events.
    plain = cs.detect(df, QUERY, time_field="ts", order_field="offset")
    plain_truth = ss.ground_truth(rows, QUERY)
    assert sorted(r.match_id for r in plain.select("match_id").collect()) == sorted(ss.expected_ids(spark, rows, plain_truth, QUERY))
    assert not set(got_ids) & {r.match_id for r in plain.select("match_id").collect()}
    out.unpersist()


def test_two_valuations_of_one_complex_event_are_two_rows(spark):
    """V43: (HOT AS x) OR (HOT AS y) gives one complex event per HOT ; COLD without
    captures, two valuations with them, with different ids."""
    import ceql.spark as cs

    rows = ss.events(600, 4, seed=203, step_ms=1000)
    df = ss.to_df(spark, rows, 2)
    plain = cs.detect(df, QUERY_TWO, time_field="ts", order_field="offset").collect()
    both = cs.detect(df, QUERY_TWO, time_field="ts", order_field="offset", captures=True)
    truth = ss.ground_truth(rows, QUERY_TWO, captures=True)
    assert plain and len(truth) == 2 * len(plain)
    ss.assert_same(collect(both), truth)
    got = both.collect()
    assert len({r.match_id for r in got}) == len(got) == 2 * len(plain)
    first = sorted({tuple(e.variables) for r in got for e in r.events if e.type == "HOT"})
    assert first == [("HOT", "x"), ("HOT", "y")]


def test_projection_restricts_the_variables(spark):
    """SELECT x restricts each valuation to x: the two valuations of V43 that keep
    only HOT are one output (docs/language.md#s3-2a)."""
    import ceql.spark as cs

    rows = ss.events(600, 4, seed=205, step_ms=1000)
    df = ss.to_df(spark, rows, 2)
    for query in (QUERY_TWO.replace("SELECT *", "SELECT HOT"), QUERY_TWO.replace("SELECT *", "SELECT x, COLD")):
        out = cs.detect(df, query, time_field="ts", order_field="offset", captures=True)
        ss.assert_same(collect(out), ss.ground_truth(rows, query, captures=True))


def test_explode_events_keeps_the_variables(spark):
    import ceql.spark as cs

    rows = ss.events(400, 3, seed=207)
    matches = cs.detect(ss.to_df(spark, rows, 2), QUERY, time_field="ts", order_field="offset", captures=True)
    exploded = cs.explode_events(matches)
    assert "variables" in exploded.columns
    per_event = {(r.match_id, r.event_index): tuple(r.variables) for r in exploded.collect()}
    want = {(r.match_id, i): tuple(e.variables) for r in matches.collect() for i, e in enumerate(r.events)}
    assert per_event and per_event == want


def test_a_variables_column_is_refused(spark):
    import ceql.spark as cs

    df = ss.to_df(spark, ss.events(10, 2, seed=1), 1)
    from pyspark.sql import functions as F

    with pytest.raises(ValueError, match="variables"):
        cs.detect(df.withColumn("variables", F.lit("x")), QUERY, time_field="ts", order_field="offset", captures=True)


def test_streaming_with_captures_and_a_deadline(spark, tmp_path: Path):
    """Streaming, captures on, with a trailing absence: variables, ids and deadlines
    as in the batch path, and the Python API's valuations."""
    import ceql.spark as cs

    query = ("SELECT * FROM S WHERE ((HOT AS x) OR (HOT AS y)) FILTER HOT[temp > 40] ; "
             "ABSENT(COLD FILTER COLD[temp < 10]) FOR 8 seconds PARTITION BY [sensor] WITHIN 1 minute")
    rows = ss.events(450, 3, seed=209, step_ms=1500)
    flush = ss.flush_event(rows, 200_000)
    src = tmp_path / "in"
    for i in range(0, len(rows), 150):
        ss.write_parquet(src, f"part-{i // 150:04d}", rows[i : i + 150])
    ss.write_parquet(src, "part-9999", [flush])
    events_df = spark.readStream.schema(ss.spark_schema()).option("maxFilesPerTrigger", 1).parquet(str(src))
    matches = cs.detect(events_df, query, time_field="ts", order_field="offset", watermark="20 seconds", captures=True)
    q = (matches.writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "ckpt")).outputMode("append").trigger(availableNow=True).start())
    assert q.awaitTermination(ss.STREAM_TIMEOUT)
    streamed = spark.read.parquet(str(tmp_path / "out"))
    truth = ss.ground_truth(rows + [flush], query, captures=True)
    assert truth and any(t[4] == (("HOT", "y"),) for t in truth)
    ss.assert_same(collect(streamed), truth)
    batch = cs.detect(ss.to_df(spark, rows, 2), query, time_field="ts", order_field="offset", captures=True,
                      close_deadlines=True)
    assert sorted(map(tuple, streamed.collect())) == sorted(map(tuple, batch.collect()))
