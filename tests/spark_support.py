"""Helpers of the Spark tests: a session-scoped SparkSession fixture (loaded with
``pytest_plugins = ["spark_support"]``), event generators, the single-threaded
ground truth, and the streaming query used in-process and by the restart test's
subprocess (``python tests/spark_support.py stream ...``)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

QUERY = (
    "SELECT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] "
    "PARTITION BY [sensor] WITHIN 2 minutes"
)
# Several events per match and an iteration: a sturdier check of positions -> rows.
QUERY_SEQ = (
    "SELECT * FROM S WHERE HOT ; WARM+ ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] "
    "PARTITION BY [sensor] WITHIN 90 seconds"
)
# A trailing absence (docs/language.md#s3-3b): a HOT not followed by a COLD of its sensor
# within 8 seconds; its matches are reported when time passes their deadline.
QUERY_ABSENT = (
    "SELECT * FROM S WHERE (HOT FILTER HOT[temp > 40]) ; ABSENT(COLD FILTER COLD[temp < 10]) FOR 8 seconds "
    "PARTITION BY [sensor] WITHIN 1 minute"
)
T0 = dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)
STREAM_TIMEOUT = 240  # seconds: a hung stream fails the test instead of CI


def session(app: str = "ceql-spark-tests") -> Any:
    """A lean local session: 2 cores, 2 shuffle partitions (not coalesced), no UI, UTC."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        # Small inputs still run in 2 tasks: AQE would coalesce them into one and
        # hide any key the glue splits across tasks.
        .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "2000")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@pytest.fixture(scope="session")
def spark():
    s = session()
    yield s
    s.stop()


# -- data -----------------------------------------------------------------------
def events(n: int, keys: int, seed: int, *, start: int = 0, step_ms: int = 3000, jitter: bool = True) -> List[Dict[str, Any]]:
    """``n`` events of ``keys`` sensors, times increasing (ties possible), offsets
    ``start..start+n-1`` (the order field)."""
    rnd = random.Random(seed)
    out = []
    t = start * step_ms
    for i in range(n):
        t += rnd.randint(0, step_ms) if jitter else step_ms
        ty = rnd.choices(["HOT", "WARM", "COLD", "OTHER"], [3, 2, 3, 1])[0]
        temp = {"HOT": rnd.choice([45.0, 50.0, 30.0]), "COLD": rnd.choice([5.0, 2.0, 15.0]), "WARM": 25.0, "OTHER": 0.0}[ty]
        out.append(
            {
                "type": ty,
                "ts": T0 + dt.timedelta(milliseconds=t),
                "offset": start + i,
                "sensor": rnd.randrange(keys),
                "temp": temp,
            }
        )
    return out


def flush_event(after: Sequence[Dict[str, Any]], offset: int, minutes: int = 60) -> Dict[str, Any]:
    """An event far after the others (a type no query names): its watermark
    releases every buffered event and expires every window."""
    last = max(e["ts"] for e in after)
    return {"type": "FLUSH", "ts": last + dt.timedelta(minutes=minutes), "offset": offset, "sensor": 0, "temp": 0.0}


def arrow_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("type", pa.string()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("offset", pa.int64()),
            ("sensor", pa.int64()),
            ("temp", pa.float64()),
        ]
    )


def spark_schema():
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("type", T.StringType()),
            T.StructField("ts", T.TimestampType()),
            T.StructField("offset", T.LongType()),
            T.StructField("sensor", T.LongType()),
            T.StructField("temp", T.DoubleType()),
        ]
    )


def pa_table(rows: List[Dict[str, Any]]) -> Any:
    """The events as a pyarrow Table of :func:`arrow_schema`."""
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=arrow_schema())


def to_df(spark: Any, rows: List[Dict[str, Any]], partitions: int = 2) -> Any:
    return spark.createDataFrame(pa_table(rows).to_pandas(), schema=spark_schema()).repartition(partitions)


def write_table(directory: Path, name: str, table: Any) -> None:
    """One file of the streaming input: written aside then renamed, as a file
    source requires. Spark's file source reads new files in modification-time
    order (to the millisecond), and files of the same millisecond in listing order:
    each file gets a time a whole second after the directory's newest, so that
    micro-batches follow the order of writing."""
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory.parent / f".{directory.name}-{name}.tmp"
    pq.write_table(table, tmp)
    newest = max((f.stat().st_mtime for f in directory.iterdir()), default=0.0)
    t = max(float(int(time.time())), newest + 1.0)
    os.utime(tmp, (t, t))
    os.replace(tmp, directory / f"{name}.parquet")


def write_parquet(directory: Path, name: str, rows: List[Dict[str, Any]], schema: Any = None) -> None:
    """``rows`` as one file of the streaming input (:func:`write_table`)."""
    import pyarrow as pa

    write_table(directory, name, pa.Table.from_pylist(rows, schema=schema or arrow_schema()))


# -- ground truth ---------------------------------------------------------------
Row = Tuple[Tuple[Any, ...], int, int, Tuple[int, ...]]


def micros(t: dt.datetime) -> int:
    d = t - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def ground_truth(rows: List[Dict[str, Any]], query: str, key: Optional[str] = "sensor", *,
                 close_deadlines: bool = False, captures: bool = False) -> List[Any]:
    """The engine run single-threaded over every event sorted by (time, order):
    (key, start µs, end µs, offsets of the matched events) per complex event, and
    with ``captures`` the variables of each event (``Match.variables``)."""
    import pyarrow as pa

    import ceql

    ordered = sorted(rows, key=lambda r: (r["ts"], r["offset"]))
    table = pa.Table.from_pylist(ordered, schema=arrow_schema())
    out: List[Any] = []
    for m in ceql.compile(query).run(table, time_field="ts", close_deadlines=close_deadlines, captures=captures):
        k = (ordered[m.end][key],) if key else ()
        row = (k, micros(ordered[m.start]["ts"]), micros(ordered[m.end]["ts"]), tuple(ordered[p]["offset"] for p in m.positions))
        out.append(row + (tuple(tuple(v) for v in m.variables),) if captures else row)
    return out


_MASK = (1 << 64) - 1


def _fmix(k: int) -> int:
    """MurmurHash3's 64-bit finalizer (docs/spark.md, "match_id")."""
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _MASK
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _MASK
    return k ^ (k >> 33)


def expected_ids(spark: Any, rows: List[Dict[str, Any]], truth: List[Row], query: str, key: Optional[str] = "sensor") -> List[str]:
    """The match_id of each complex event of ``truth``, computed as docs/spark.md
    defines it: Spark's xxhash64 of (key, time in ns, order) per row, combined in
    plain Python integers."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(r[key] if key else 0, micros(r["ts"]), r["offset"]) for r in rows], "k long, us long, o long")
    ident = ([F.col("k")] if key else []) + [F.col("us") * 1000, F.col("o")]
    hashed = df.select("k", "o", F.xxhash64(*ident).alias("r0"), F.xxhash64(F.lit(1).cast("long"), *ident).alias("r1")).collect()
    r = {(h["k"] if key else 0, h["o"]): (h["r0"], h["r1"]) for h in hashed}
    return ids_from_row_hashes(query, truth, lambda k, o: r[(k[0] if key else 0, o)])


def ids_from_row_hashes(query: str, truth: List[Row], row_hash: Any) -> List[str]:
    """The match_id of each complex event of ``truth`` (docs/spark.md), from the row
    hashes ``row_hash(key, offset) -> (r0, r1)`` (Spark's signed bigints)."""
    import hashlib

    digest = hashlib.sha256(query.encode() + b"\x00").digest()
    seeds = int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:16], "little")

    def var_seed(name: str, lane: int) -> int:
        v = hashlib.sha256(b"ceql-variable\x00" + name.encode()).digest()
        return int.from_bytes(v[8 * lane : 8 * lane + 8], "little")

    ids = []
    for k, _, _, offs, *rest in truth:
        r = {o: tuple(h & _MASK for h in row_hash(k, o)) for o in offs}
        # With captures (a 5th element: the variables of each event), each data row
        # enters as fmix(r ^ c), c the sum of fmix(v(x)) over its variables x.
        labels = rest[0] if rest else None
        # SELECT *, no NOT: the interval's first and last events are the data's
        lanes = []
        for lane in (0, 1):
            if labels is None:
                d = sum(_fmix(r[o][lane]) for o in offs) & _MASK
            else:
                c = [sum(_fmix(var_seed(x, lane)) for x in xs) & _MASK for xs in labels]
                d = sum(_fmix(r[o][lane] ^ ci) for o, ci in zip(offs, c)) & _MASK
            inner = _fmix(r[offs[-1]][lane] ^ _fmix(d ^ len(offs)))
            lanes.append(_fmix(seeds[lane] ^ _fmix(r[offs[0]][lane] ^ inner)))
        ids.append(f"{lanes[0]:016x}{lanes[1]:016x}")
    return ids


def collect(df: Any, key: Optional[str] = "sensor") -> List[Row]:
    """Spark output rows in the form of :func:`ground_truth`."""
    from pyspark.sql import functions as F

    cols = [F.unix_micros("start_time").alias("s"), F.unix_micros("end_time").alias("e"), F.transform("events", lambda x: x["offset"]).alias("o")]
    if key:
        cols.insert(0, F.col(key).alias("k"))
    out = []
    for r in df.select(*cols).collect():
        out.append(((r["k"],) if key else (), r["s"], r["e"], tuple(r["o"])))
    return out


def assert_same(got: List[Row], truth: List[Row]) -> None:
    dupes = [r for r, c in Counter(got).items() if c > 1]
    assert not dupes, f"duplicated complex events: {dupes[:5]}"
    assert sorted(got) == sorted(truth), (
        f"{len(got)} vs {len(truth)} complex events; missing {sorted(set(truth) - set(got))[:5]}, extra {sorted(set(got) - set(truth))[:5]}"
    )


# -- streaming ------------------------------------------------------------------
def start_stream(spark: Any, source: Path, sink: Path, checkpoint: Path, *, query: str = QUERY, watermark: str = "1 minute", late: str = "drop", buckets: Optional[int] = None, fault: Any = None, **options: Any) -> Any:
    """File source (one file per micro-batch) -> detect -> parquet sink, availableNow."""
    import ceql.spark as cs

    events_df = spark.readStream.schema(spark_schema()).option("maxFilesPerTrigger", 1).parquet(str(source))
    matches = cs.detect(events_df, query, time_field="ts", order_field="offset", watermark=watermark, late=late, buckets=buckets, _fault=fault, **options)
    return (
        matches.writeStream.format("parquet")
        .option("path", str(sink))
        .option("checkpointLocation", str(checkpoint))
        .outputMode("append")
        .trigger(availableNow=True)
        .start()
    )


def run_stream(spark: Any, *args: Any, timeout: float = STREAM_TIMEOUT, **kw: Any) -> Any:
    """Runs the stream to the end of the available input; a hang fails."""
    q = start_stream(spark, *args, **kw)
    try:
        finished = q.awaitTermination(timeout)
    except Exception:
        q.stop()
        raise
    if not finished:
        q.stop()
        raise AssertionError(f"the stream did not finish within {timeout} s")
    return q


def main(argv: Optional[List[str]] = None) -> int:
    """Subprocess entry of the restart test: runs the same stream in a new process."""
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["stream"])
    p.add_argument("--source", required=True)
    p.add_argument("--sink", required=True)
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--query", default=QUERY)
    p.add_argument("--watermark", default="1 minute")
    p.add_argument("--report", required=True)
    a = p.parse_args(argv)
    t0 = time.time()
    spark = session("ceql-spark-restart")
    q = run_stream(spark, Path(a.source), Path(a.sink), Path(a.checkpoint), query=a.query, watermark=a.watermark)
    batches = [pr["batchId"] for pr in q.recentProgress]
    Path(a.report).write_text(json.dumps({"batches": batches, "seconds": time.time() - t0, "pid": os.getpid()}))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
