"""ceql.spark with measures in the SELECT list (docs/language.md#s3-5a, docs/spark.md
"Measures"): typed top-level columns, batch and streaming, captures off and on,
PARTITION BY and a query routed by an equality (one task), ids that tell apart two
outputs with the same events and different measures, names that clash. Expected
values are worked by hand or come from the brute-force oracle (``tests/oracle``);
the larger streaming check compares with ``Query.run``, which the oracle checks
(tests/test_differential_measures.py)."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
from pathlib import Path
from typing import Any, Dict, List

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

T0 = ss.T0
MEASURES = ["n", "total", "av", "lo", "tag", "hi"]
# Projection keeps `a` only: outputs with the same events may differ in their measures.
QUERY = ("SELECT a, count(w) AS n, sum(w.level) AS total, avg(w.temp) AS av, min(w.temp) AS lo, "
         "last(w.tag) AS tag, max(c.temp) AS hi "
         "FROM S WHERE HOT AS a ; (WARM AS w)+ ; COLD AS c FILTER a[temp > 40] AND c[temp < 10] "
         "PARTITION BY [sensor] WITHIN 12 seconds")
# An equality between variables routes by key inside the engine; no PARTITION BY: one task.
QUERY_ROUTED = ("SELECT *, count(w) AS n, avg(w.temp) AS av FROM S WHERE HOT AS a ; (WARM AS w)+ ; COLD AS c "
                "FILTER a[temp > 40] AND c[sensor = a.sensor AND temp < 10] AND w[sensor = a.sensor] WITHIN 10 seconds")


# -- data -----------------------------------------------------------------------
def arrow_schema():
    import pyarrow as pa

    return pa.schema([("type", pa.string()), ("ts", pa.timestamp("us", tz="UTC")), ("offset", pa.int64()),
                      ("sensor", pa.int64()), ("temp", pa.float64()), ("level", pa.int32()), ("tag", pa.string())])


def spark_schema():
    from pyspark.sql import types as T

    return T.StructType([T.StructField("type", T.StringType()), T.StructField("ts", T.TimestampType()),
                         T.StructField("offset", T.LongType()), T.StructField("sensor", T.LongType()),
                         T.StructField("temp", T.DoubleType()), T.StructField("level", T.IntegerType()),
                         T.StructField("tag", T.StringType())])


def events(n: int, keys: int, seed: int, step_ms: int = 1500, start: int = 0) -> List[Dict[str, Any]]:
    rnd = random.Random(seed)
    out, t = [], start * step_ms
    for i in range(n):
        t += rnd.randint(0, step_ms)
        ty = rnd.choices(["HOT", "WARM", "COLD", "OTHER"], [3, 3, 3, 1])[0]
        temp = {"HOT": rnd.choice([45.0, 30.0]), "COLD": rnd.choice([5.0, 2.5, 15.0]),
                "WARM": rnd.choice([20.0, 25.5, -0.0, 31.25]), "OTHER": 0.0}[ty]
        out.append({"type": ty, "ts": T0 + dt.timedelta(milliseconds=t), "offset": start + i,
                    "sensor": rnd.randrange(keys), "temp": temp,
                    "level": rnd.choice([None, 1, 7, -3]) if ty == "WARM" else 0,
                    "tag": rnd.choice(["x", "yy", None, "é"])})
    return out


def to_df(spark, rows, partitions=2):
    import pyarrow as pa

    rows = list(rows)
    random.Random(len(rows)).shuffle(rows)  # the glue sorts
    table = pa.Table.from_pylist(rows, schema=arrow_schema())
    return spark.createDataFrame(table.to_pandas(), schema=spark_schema()).repartition(partitions)


def canon(v):
    """Measure values compare as numbers (1 == 1.0), NaN equal to NaN."""
    if v is None:
        return None
    if isinstance(v, float):
        return "nan" if math.isnan(v) else round(v, 9)
    return v


def oracle_truth(rows, query, key="sensor", captures=False, close_deadlines=False):
    """(key, start µs, end µs, offsets, measures[, variables]) of every output by the oracle."""
    from oracle import evaluate

    ordered = sorted(rows, key=lambda r: (r["ts"], r["offset"]))
    plain = [dict(r, ts=ss.micros(r["ts"])) for r in ordered]
    res = evaluate(query, plain, time_field="ts", time_unit="us", captures=captures, close_deadlines=close_deadlines)
    out = []
    for s, e, ps, meas in res.matches():
        k = (ordered[e][key],) if key else ()
        if captures:  # ps: ((position, (variables...)), ...)
            offs = tuple(ordered[p]["offset"] for p, _ in ps)
            extra = (tuple(tuple(sorted(vs)) for _, vs in ps),)
        else:
            offs, extra = tuple(ordered[p]["offset"] for p in ps), ()
        out.append((k, ss.micros(ordered[s]["ts"]), ss.micros(ordered[e]["ts"]), offs,
                    tuple(canon(v) for _, v in meas)) + extra)
    return out


def engine_truth(rows, query, key="sensor"):
    """The same from the single-process engine (``Query.run``)."""
    import pyarrow as pa

    import ceql

    ordered = sorted(rows, key=lambda r: (r["ts"], r["offset"]))
    table = pa.Table.from_pylist(ordered, schema=arrow_schema())
    out = []
    for m in ceql.compile(query).run(table, time_field="ts"):
        k = (ordered[m.end][key],) if key else ()
        out.append((k, ss.micros(ordered[m.start]["ts"]), ss.micros(ordered[m.end]["ts"]),
                    tuple(ordered[p]["offset"] for p in m.positions), tuple(canon(v) for v in m.measures.values())))
    return out


def collect(df, measures, key="sensor", captures=False):
    from pyspark.sql import functions as F

    cols = [F.unix_micros("start_time").alias("s"), F.unix_micros("end_time").alias("e"),
            F.transform("events", lambda x: x["offset"]).alias("o"), *measures]
    if captures:
        cols.append(F.transform("events", lambda x: x["variables"]).alias("v"))
    if key:
        cols.insert(0, F.col(key).alias("k"))
    out = []
    for r in df.select(*cols).collect():
        row = ((r["k"],) if key else (), r["s"], r["e"], tuple(r["o"]), tuple(canon(r[m]) for m in measures))
        if captures:
            row += (tuple(tuple(sorted(v)) for v in r["v"]),)
        out.append(row)
    return out


def assert_same(got, truth):
    assert sorted(got, key=repr) == sorted(truth, key=repr), (
        f"{len(got)} vs {len(truth)}; missing {sorted(set(truth) - set(got), key=repr)[:4]}, "
        f"extra {sorted(set(got) - set(truth), key=repr)[:4]}")


# -- hand-worked ----------------------------------------------------------------
HAND = [("A", 1, "p"), ("B", 2, "q"), ("B", 3, None), ("C", 4, "r")]


def hand_df(spark):
    from pyspark.sql import types as T

    rows = [(ty, T0 + dt.timedelta(seconds=i), i, v, float(v) / 2, tg) for i, (ty, v, tg) in enumerate(HAND)]
    schema = T.StructType([T.StructField("type", T.StringType()), T.StructField("ts", T.TimestampType()),
                           T.StructField("offset", T.LongType()), T.StructField("v", T.LongType()),
                           T.StructField("x", T.DoubleType()), T.StructField("name", T.StringType())])
    return spark.createDataFrame(rows, schema)


def test_the_specification_example_two_rows_with_the_same_events(spark):
    """docs/language.md#s3-5a: over A B B C, `SELECT a, count(b) AS n` has two outputs [0,3]{0},
    n = 1 (the valuations {1} and {2}) and n = 2; two rows, with two ids."""
    import ceql.spark as cs

    q = "SELECT a, count(b) AS n FROM S WHERE A AS a ; (B AS b)+ ; C"
    out = cs.detect(hand_df(spark), q, time_field="ts", order_field="offset")
    assert out.columns == ["match_id", "start_time", "end_time", "n", "events"]
    assert out.schema["n"].dataType.simpleString() == "bigint"
    rows = sorted(out.collect(), key=lambda r: r["n"])
    assert [(r["n"], [e["offset"] for e in r["events"]]) for r in rows] == [(1, [0]), (2, [0])]
    assert rows[0]["match_id"] != rows[1]["match_id"]
    assert [r["match_id"] for r in rows] == [match_id(spark, q, [0, 3, [0]], [[1]]), match_id(spark, q, [0, 3, [0]], [[2]])]
    # explode_events keeps the measures.
    ex = cs.explode_events(out)
    assert ex.columns[:5] == ["match_id", "start_time", "end_time", "n", "event_index"]
    assert sorted((r["n"], r["offset"]) for r in ex.collect()) == [(1, 0), (2, 0)]


def test_every_aggregate_typed_and_null(spark):
    """Values worked by hand over A B B C (v = 1..4, x = v / 2, name p q null r)."""
    import ceql.spark as cs

    q = ("SELECT count(b) AS n, sum(b.v) AS s, avg(b.x) AS av, min(b.v) AS lo, max(b.x) AS hi, first(b.name) AS f, "
         "last(b.name) AS l, first(b.ts) AS t, sum(b.zz) AS nothing FROM S WHERE A ; (B AS b)+ ; C")
    out = cs.detect(hand_df(spark), q, time_field="ts", order_field="offset")
    types = {f.name: f.dataType.simpleString() for f in out.schema.fields}
    assert types == {"match_id": "string", "start_time": "timestamp", "end_time": "timestamp", "n": "bigint",
                     "s": "bigint", "av": "double", "lo": "bigint", "hi": "double", "f": "string", "l": "string",
                     "t": "bigint", "nothing": "void", "events": types["events"]}
    got = sorted(tuple(r[c] for c in ["n", "s", "av", "lo", "hi", "f", "l", "t", "nothing"]) + (len(r["events"]),)
                 for r in out.collect())
    t1 = ss.micros(T0 + dt.timedelta(seconds=1)) * 1000
    t2 = t1 + 1_000_000_000
    assert got == sorted([
        (1, 2, 1.0, 2, 1.0, "q", "q", t1, None, 0),  # {B1}
        (1, 3, 1.5, 3, 1.5, None, None, t2, None, 0),  # {B2}: its name is null
        (2, 5, 1.25, 2, 1.5, "q", None, t1, None, 0),  # {B1, B2}
    ], key=repr)


def test_names_that_clash_are_refused(spark):
    import ceql.spark as cs

    df = hand_df(spark)
    for name in ["Start_Time", "end_time", "Deadline", "kind", "event_index"]:
        with pytest.raises(ValueError, match=f"measure '{name}'"):
            cs.detect(df, f"SELECT count(b) AS {name} FROM S WHERE A ; B AS b", time_field="ts", order_field="offset")
    with pytest.raises(ValueError, match="measure 'V'.*'v'"):
        cs.detect(df, "SELECT count(b) AS V FROM S WHERE A ; B AS b PARTITION BY [v]", time_field="ts", order_field="offset")
    # Named like an input column only: no clash (the event's fields are inside `events`).
    out = cs.detect(df, "SELECT *, max(b.x) AS x FROM S WHERE A ; B AS b", time_field="ts", order_field="offset")
    assert [(r["x"], r["events"][1]["x"]) for r in out.collect()] == [(1.0, 1.0), (1.5, 1.5)]
    assert "event_x" in cs.explode_events(out).columns


#: Measures of complex events that wait for a deadline (docs/language.md#s3-5a, #s3-3b).
QUERY_WAIT = ("SELECT *, count(w) AS n, avg(w.temp) AS av FROM S WHERE (HOT AS h FILTER h[temp > 40]) ; (WARM AS w)+ ; "
              "ABSENT(COLD FILTER COLD[temp < 10] OR OTHER) FOR 5 seconds PARTITION BY [sensor] WITHIN 20 seconds")


def test_a_trailing_absence_with_measures_against_the_oracle(spark):
    """Batch, with and without closing the deadlines: the measures a complex event had when
    it ended, and its deadline."""
    import ceql.spark as cs
    from pyspark.sql import functions as F

    rows = events(110, 3, seed=34)  # the oracle enumerates the iteration's subsets: keep it small
    for close in (False, True):
        truth = oracle_truth(rows, QUERY_WAIT, close_deadlines=close)
        assert len(truth) > 5
        out = cs.detect(to_df(spark, rows), QUERY_WAIT, time_field="ts", order_field="offset", close_deadlines=close)
        assert out.columns == ["sensor", "match_id", "start_time", "end_time", "deadline", "n", "av", "events"]
        assert_same(collect(out, ["n", "av"]), truth)
        late = out.where(F.col("deadline") != F.col("end_time") + F.expr("INTERVAL 5 SECONDS")).count()
        assert late == 0


# -- match_id by its definition (docs/spark.md, "match_id", step 6) ---------------
_MASK = (1 << 64) - 1
_fmix = ss._fmix


def match_id(spark, query, event, measures):
    """The id of output (start offset, end offset, data offsets) of the hand data, no key,
    with measure values (one list of one value per measure, ints only here)."""
    from pyspark.sql import functions as F

    digest = hashlib.sha256(query.encode() + b"\x00").digest()
    seeds = int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:16], "little")
    df = spark.createDataFrame([(ss.micros(T0 + dt.timedelta(seconds=i)), i) for i in range(len(HAND))], "us long, o long")
    ident = [F.col("us") * 1000, F.col("o")]
    r = {h["o"]: (h["r0"] & _MASK, h["r1"] & _MASK)
         for h in df.select("o", F.xxhash64(*ident).alias("r0"), F.xxhash64(F.lit(1).cast("long"), *ident).alias("r1")).collect()}
    s, e, offs = event
    lanes = []
    for lane in (0, 1):
        d = sum(_fmix(r[o][lane]) for o in offs) & _MASK
        h = _fmix(seeds[lane] ^ _fmix(r[s][lane] ^ _fmix(r[e][lane] ^ _fmix(d ^ len(offs)))))
        m = 0
        for (value,) in measures:
            m = _fmix(m ^ _fmix(value & _MASK))
        lanes.append(_fmix(h ^ _fmix(m ^ len(measures))))
    return f"{lanes[0]:016x}{lanes[1]:016x}"


# -- against the oracle -----------------------------------------------------------
def test_batch_partitioned_against_the_oracle(spark):
    import ceql.spark as cs

    rows = events(130, 3, seed=1)
    truth = oracle_truth(rows, QUERY)
    assert len(truth) > 10
    # Some outputs share their events and differ only in their measures.
    assert len({t[:4] for t in truth}) < len(truth)
    df = to_df(spark, rows, 3)
    out = cs.detect(df, QUERY, time_field="ts", order_field="offset")
    assert out.columns == ["sensor", "match_id", "start_time", "end_time", *MEASURES, "events"]
    assert [out.schema[m].dataType.simpleString() for m in MEASURES] == ["bigint", "bigint", "double", "double",
                                                                      "string", "double"]
    got = out.select("match_id", *out.columns).collect()
    assert len({r["match_id"] for r in got}) == len(got)
    assert_same(collect(out, MEASURES), truth)
    # The same ids from another partitioning of the input.
    again = cs.detect(to_df(spark, rows, 1), QUERY, time_field="ts", order_field="offset")
    assert sorted(r["match_id"] for r in again.collect()) == sorted(r["match_id"] for r in got)


def test_batch_captures_against_the_oracle(spark):
    import ceql.spark as cs

    rows = events(120, 2, seed=12)
    truth = oracle_truth(rows, QUERY, captures=True)
    assert truth
    out = cs.detect(to_df(spark, rows), QUERY, time_field="ts", order_field="offset", captures=True)
    got = collect(out, MEASURES, captures=True)
    assert_same(got, truth)
    assert out.select("match_id").distinct().count() == len(got)


def test_routed_query_against_the_oracle(spark):
    import ceql.spark as cs

    # Small: the oracle enumerates the iteration's subsets over the whole stream (no key).
    rows = events(40, 3, seed=22, step_ms=1000)
    truth = oracle_truth(rows, QUERY_ROUTED, key=None)
    assert len(truth) > 10
    out = cs.detect(to_df(spark, rows), QUERY_ROUTED, time_field="ts", order_field="offset")
    assert_same(collect(out, ["n", "av"], key=None), truth)


# -- streaming --------------------------------------------------------------------
def write_parquet(directory: Path, name: str, rows) -> None:
    ss.write_parquet(directory, name, rows, arrow_schema())


def run_stream(spark, tmp_path, rows, query, chunk, **options):
    import ceql.spark as cs

    src = tmp_path / "in"
    rows = list(rows)
    last = max(r["ts"] for r in rows)
    flush = {"type": "FLUSH", "ts": last + dt.timedelta(minutes=30), "offset": 10**6, "sensor": 0, "temp": 0.0,
             "level": 0, "tag": None}
    for i in range(0, len(rows), chunk):
        write_parquet(src, f"part-{i // chunk:04d}", rows[i : i + chunk])
    # A late event (before the watermark) with the flush: with late="emit", a row without measures.
    late = dict(flush, type="WARM", ts=rows[0]["ts"], offset=10**6 - 1)
    write_parquet(src, "part-9999", [late, flush])
    events_df = spark.readStream.schema(spark_schema()).option("maxFilesPerTrigger", 1).parquet(str(src))
    matches = cs.detect(events_df, query, time_field="ts", order_field="offset", watermark="20 seconds", **options)
    q = (matches.writeStream.format("parquet").option("path", str(tmp_path / "out"))
         .option("checkpointLocation", str(tmp_path / "ckpt")).outputMode("append").trigger(availableNow=True).start())
    try:
        assert q.awaitTermination(ss.STREAM_TIMEOUT), "the stream did not finish"
    finally:
        q.stop()
    return spark.read.parquet(str(tmp_path / "out"))


def test_streaming_against_the_oracle_with_captures(spark, tmp_path):
    rows = events(150, 3, seed=14)
    # Out of order within the watermark: the engine's reorder buffer sorts them.
    rows = sorted(rows, key=lambda r: (r["offset"] // 10, random.Random(r["offset"]).random()))
    out = run_stream(spark, tmp_path, rows, QUERY, 50, captures=True)
    assert_same(collect(out, MEASURES, captures=True), oracle_truth(rows, QUERY, captures=True))


def test_streaming_measures_of_matches_waiting_for_a_deadline(spark, tmp_path):
    """Each micro-batch restores the state, the waiting complex events with their measures."""
    rows = events(110, 3, seed=34)  # the oracle enumerates the iteration's subsets: keep it small
    out = run_stream(spark, tmp_path, rows, QUERY_WAIT, 40)
    truth = oracle_truth(rows, QUERY_WAIT, close_deadlines=True)  # the flush event passes every deadline
    assert len(truth) > 5
    assert_same(collect(out, ["n", "av"]), truth)


def test_streaming_equals_the_engine_and_the_batch_ids(spark, tmp_path):
    """Larger: against Query.run (oracle-checked), and the same ids as the batch path."""
    import ceql.spark as cs

    rows = events(600, 2, seed=15)
    out = run_stream(spark, tmp_path, rows, QUERY, 120, late="emit")
    late = out.where("kind = 'late'").collect()
    assert [(r["n"], r["av"], r["tag"], r["events"][0]["offset"]) for r in late] == [(None, None, None, 10**6 - 1)]
    got = out.where("kind = 'match'")
    truth = engine_truth(rows, QUERY)
    assert len(truth) > 100
    assert_same(collect(got, MEASURES), truth)
    batch = cs.detect(to_df(spark, rows), QUERY, time_field="ts", order_field="offset")
    assert sorted(r["match_id"] for r in got.collect()) == sorted(r["match_id"] for r in batch.collect())
