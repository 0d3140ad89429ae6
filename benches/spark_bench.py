"""Benchmark of ceql.spark.

Batch: ``detect`` over N events (default 1M) of 1,000 and of 100,000 keys, and an
output-heavy query, against a no-op ``mapInArrow`` over the same repartitioned
and sorted DataFrame: the ratio is the cost of the engine and the glue. Beside them,
the *output floor*: a ``mapInArrow`` over the same DataFrame that reads its rows and
returns ``detect``'s own output rows, computed beforehand (memory-mapped Arrow files,
local masters only), which is what any operator returning those rows pays.

Streaming: the time of a micro-batch (``durationMs.triggerExecution``) for tiny
micro-batches (the fixed overhead, beside a stateless query's), and for
micro-batches of 10,000 events over 10 and over 10,000 keys (default settings), and
the floor of any stateful query of that shape (a no-op ``applyInPandasWithState``).

    python benches/spark_bench.py [--events 1000000] [--batch-keys 1000 100000] [--rounds 5] [--keys 10000] [--master local[2]] [--extras] [--breakdown]

``--breakdown`` splits the batch gap between ``detect`` and the no-op into the
engine and glue in the task (row hashes included) and the output's way back to the
JVM, in CPU seconds of the Spark process tree (the JVM and its Python workers, each
user + sys), which a shared machine's load changes far less than wall time.

``--extras`` adds batch rows with ``captures=True`` and with a trailing absence (with and
without ``close_deadlines``: the latter adds a pass over the input for its cutoff).

Prints one line per measurement and the machine's load (``uptime``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = (
    "SELECT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] "
    "PARTITION BY [sensor] WITHIN 5 seconds"
)


def session(master: str):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(master)
        .appName("ceql-spark-bench")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def events(spark, n: int, keys: int):
    """n events, one every ms on average, keys spread by a hash (so a key's events
    are interleaved with the others'), types and temperatures from hashes."""
    from pyspark.sql import functions as F

    h = F.abs(F.xxhash64("id"))
    kind = (h % 10).cast("int")
    type_ = (
        F.when(kind < 3, F.lit("HOT")).when(kind < 5, F.lit("WARM")).when(kind < 8, F.lit("COLD")).otherwise(F.lit("OTHER"))
    )
    temp = F.when(type_ == "HOT", F.lit(45.0)).when(type_ == "COLD", F.lit(5.0)).otherwise(F.lit(20.0))
    return spark.range(n).select(
        type_.alias("type"),
        F.timestamp_micros(F.lit(1_709_251_200_000_000) + F.col("id") * 1000).alias("ts"),
        F.col("id").alias("offset"),
        (F.abs(F.xxhash64(F.col("id"), F.lit(7))) % keys).alias("sensor"),
        temp.alias("temp"),
    )


#: Interleaved rounds run first and not counted: the JVM compiles each plan's code and
#: the Python workers import their modules during the first runs (they were up to
#: 1.5x slower than the later ones).
WARMUP = 2


def once(action) -> float:
    t0 = time.perf_counter()
    action()
    return time.perf_counter() - t0


def report(label: str, times) -> None:
    print(f"{label}: best {min(times):.2f} s, median {statistics.median(times):.2f} s of {', '.join(f'{t:.2f}' for t in times)}", flush=True)


def timed(label: str, action, repeat: int = 2) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        action()
        times.append(time.perf_counter() - t0)
    best = min(times)
    print(f"{label}: best {best:.2f} s of {', '.join(f'{t:.2f}' for t in times)}", flush=True)
    return best


# Output-heavy: every HOT, run of WARMs and COLD of a key within 10 s.
QUERY_HEAVY = "SELECT * FROM S WHERE HOT ; WARM+ ; COLD PARTITION BY [sensor] WITHIN 10 seconds"


# A trailing absence (docs/spark.md, "Trailing absence"): a HOT with no COLD of its key within 2 s.
QUERY_ABSENT = ("SELECT * FROM S WHERE (HOT FILTER HOT[temp > 40]) ; ABSENT(COLD FILTER COLD[temp < 10]) FOR 2 seconds "
                "PARTITION BY [sensor] WITHIN 5 seconds")


def batch(spark, n: int, keys: int, query: str = QUERY, engine_alone: bool = True, rounds: int = 5, **options) -> None:
    """detect against a no-op mapInArrow over the same plan; ``options`` go to
    ``detect`` (``captures``, ``close_deadlines``)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    import ceql
    import ceql.spark as cs
    from ceql.spark._input import qcol

    df = events(spark, n, keys).cache()
    df.count()
    matches = cs.detect(df, query, time_field="ts", order_field="offset", **options)
    n_matches = matches.count()

    # The plan detect runs, up to mapInArrow, without the match_id row hashes:
    # repartition by key, sort each task by (time, order, key).
    prepared = (
        df.withColumn("__ceql_t", F.unix_micros("ts") * 1000)
        .withColumn("__ceql_k0", F.col("sensor"))
        .repartition(qcol("__ceql_k0"))
        .sortWithinPartitions("__ceql_t", "offset", "__ceql_k0")
    )

    def noop(batches):
        for b in batches:
            pass
        return iter(())

    empty = prepared.mapInArrow(noop, matches.schema)
    # detect drops the rows no run can use before its shuffle (docs/spark.md,
    # "Dropped event types"); the same no-op over the rows it keeps shows what the
    # engine and the glue cost apart from that saving.
    relevant = ceql.compile(query).describe()["relevant_types"]
    kept = None
    if relevant is not None:
        kept_rows = df.where(F.col("type").isin(relevant))
        kept = (
            kept_rows.withColumn("__ceql_t", F.unix_micros("ts") * 1000)
            .withColumn("__ceql_k0", F.col("sensor"))
            .repartition(qcol("__ceql_k0"))
            .sortWithinPartitions("__ceql_t", "offset", "__ceql_k0")
            .mapInArrow(noop, matches.schema)
        )
    floor, floor_dir = output_floor(spark, prepared, matches, n_matches)
    # Interleaved rounds, so that all see the same load of a shared machine.
    plans = {"detect": matches, "no-op": empty, "floor": floor, "no-op kept": kept}
    times = {k: [] for k in plans if plans[k] is not None}
    for r in range(WARMUP + rounds):
        for label in times:
            t = once(lambda: plans[label].write.format("noop").mode("overwrite").save())
            if r >= WARMUP:
                times[label].append(t)
    t_detect, t_noop = times["detect"], times["no-op"]
    shown = "".join(f", {k}={v}" for k, v in options.items())
    report(f"batch detect   {n:,} events, {keys:,} keys{shown} ({n_matches:,} matches)", t_detect)
    report("batch no-op mapInArrow over the same repartition + sort", t_noop)
    print(
        f"  => detect / no-op: {min(t_detect) / min(t_noop):.2f}x (best), "
        f"{statistics.median(t_detect) / statistics.median(t_noop):.2f}x (median); "
        f"detect {n / min(t_detect):,.0f} events/s",
        flush=True,
    )
    if "no-op kept" in times:
        t_kept = times["no-op kept"]
        report(f"batch no-op over the rows detect keeps (types {', '.join(relevant)})", t_kept)
        print(f"  => detect / no-op over the kept rows: {statistics.median(t_detect) / statistics.median(t_kept):.2f}x "
              "(median)", flush=True)
    if "floor" in times:
        t_floor = times["floor"]
        report("batch output floor: the same, returning detect's rows computed beforehand", t_floor)
        print(
            f"  => output floor / no-op: {statistics.median(t_floor) / statistics.median(t_noop):.2f}x (median); "
            f"detect / output floor: {statistics.median(t_detect) / statistics.median(t_floor):.2f}x (median)",
            flush=True,
        )
        shutil.rmtree(floor_dir, ignore_errors=True)
    if engine_alone:
        # The engine alone, single-threaded, on the same events sorted by (time, order).
        table = pa.Table.from_batches(df.orderBy("ts", "offset")._collect_as_arrow())
        q = ceql.compile(query)
        t_engine = timed("engine alone (run_arrow, one core)", lambda: q.run_arrow(table, time_field="ts"), repeat=1)
        print(f"  => engine alone {n / t_engine:,.0f} events/s", flush=True)
    df.unpersist()


def output_floor(spark, prepared, matches, n_matches: int):
    """A ``mapInArrow`` over ``prepared`` that reads its rows and returns, for its
    partition, the rows ``matches`` has there, computed beforehand and read from
    memory-mapped Arrow files (one batch after each input batch, the rest at the
    end): the cost of returning those rows, without the engine or the glue.
    ``(None, None)`` when the master is not local (the files are on this machine)."""
    if not spark.sparkContext.master.startswith("local"):
        return None, None
    where = Path(tempfile.mkdtemp(prefix="ceql-bench-floor-"))
    folder = str(where)

    def save(batches):
        # Each task writes the rows detect gives in its partition.
        import os

        import pyarrow as pa
        from pyspark import TaskContext

        writer = None
        for b in batches:
            if writer is None:
                writer = pa.ipc.new_file(os.path.join(folder, f"{TaskContext.get().partitionId()}.arrow"), b.schema)
            writer.write_batch(b)
        if writer is not None:
            writer.close()
        return iter(())

    matches.mapInArrow(save, matches.schema).write.format("noop").mode("overwrite").save()

    def replay(batches):
        import os

        import pyarrow as pa
        from pyspark import TaskContext

        path = os.path.join(folder, f"{TaskContext.get().partitionId()}.arrow")
        reader = pa.ipc.open_file(pa.memory_map(path)) if os.path.exists(path) else None
        out = [reader.get_batch(i) for i in range(reader.num_record_batches)] if reader else []
        k = 0
        for _ in batches:
            if k < len(out):
                yield out[k]
                k += 1
        yield from out[k:]

    floor = prepared.mapInArrow(replay, matches.schema)
    got = floor.count()
    if got != n_matches:  # the partitions of the two plans differ: no floor, rather than a wrong one
        print(f"  (output floor skipped: it returned {got:,} rows, not {n_matches:,})", flush=True)
        shutil.rmtree(where, ignore_errors=True)
        return None, None
    return floor, where


def tree_cpu_seconds(root: int) -> tuple:
    """User + system CPU seconds of process ``root`` (Spark's JVM) and of its
    descendants (its Python workers, reaped children included), from ``/proc``."""
    procs = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        # ppid; own utime + stime; reaped children's cutime + cstime
        procs[int(name)] = (int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
    children = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    own, reaped = procs.get(root, (0, 0, 0))[1:]
    ticks, stack = reaped, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        ticks += sum(procs.get(pid, (0, 0, 0))[1:])
        stack.extend(children.get(pid, []))
    tck = os.sysconf("SC_CLK_TCK")
    return own / tck, ticks / tck


def breakdown(spark, n: int, keys: int, query: str = QUERY, rounds: int = 5) -> None:
    """Where the batch gap goes, in CPU seconds (median of interleaved rounds) of
    the JVM and of its Python workers: the no-op; ``detect`` with its task's output
    dropped in the task (engine, row hashes and glue, nothing back to the JVM);
    ``detect``; and the output floor (``output_floor``)."""
    from pyspark.sql import functions as F

    import ceql.spark as cs
    from ceql.spark import _batch
    from ceql.spark._input import qcol

    jvm = spark.sparkContext._gateway.proc.pid
    df = events(spark, n, keys).cache()
    df.count()
    matches = cs.detect(df, query, time_field="ts", order_field="offset")
    n_matches = matches.count()
    keyed = df.withColumn("__ceql_t", F.unix_micros("ts") * 1000).withColumn("__ceql_k0", F.col("sensor"))

    def noop(batches):
        for _ in batches:
            pass
        return iter(())

    real = _batch.make_task_fn

    def silent(plan, prep, layout):
        task = real(plan, prep, layout)

        def run(batches):
            for _ in task(batches):
                pass
            return iter(())

        return run

    _batch.make_task_fn = silent
    try:
        dropped = cs.detect(df, query, time_field="ts", order_field="offset")
    finally:
        _batch.make_task_fn = real
    sorted_noop = keyed.repartition(qcol("__ceql_k0")).sortWithinPartitions("__ceql_t", "offset", "__ceql_k0")
    plans = {"no-op": sorted_noop.mapInArrow(noop, matches.schema),
             "detect, output dropped in the task": dropped, "detect": matches}
    floor, floor_dir = output_floor(spark, sorted_noop, matches, n_matches)
    if floor is not None:  # measured with the others, shown apart (not a step of detect)
        plans["output floor"] = floor
    cpu = {k: [] for k in plans}
    wall = {k: [] for k in plans}
    for r in range(WARMUP + rounds):
        for label, frame in plans.items():
            c0, t0 = tree_cpu_seconds(jvm), time.perf_counter()
            frame.write.format("noop").mode("overwrite").save()
            t1, c1 = time.perf_counter(), tree_cpu_seconds(jvm)
            if r >= WARMUP:
                wall[label].append(t1 - t0)
                cpu[label].append((c1[0] - c0[0], c1[1] - c0[1]))
    print(f"breakdown, {n:,} events, {keys:,} keys ({n_matches:,} matches), CPU s of the JVM + its Python workers:", flush=True)
    previous = None
    for label in plans:
        j = statistics.median(c[0] for c in cpu[label])
        p = statistics.median(c[1] for c in cpu[label])
        c = statistics.median(sum(x) for x in cpu[label])
        step = "" if previous is None or label == "output floor" else f" (+{c - previous:.2f})"
        print(f"  {label}: CPU median {c:.2f} s{step} (JVM {j:.2f}, Python {p:.2f}); wall median {statistics.median(wall[label]):.2f} s",
              flush=True)
        previous = c
    total = {k: statistics.median(sum(x) for x in v) for k, v in cpu.items()}
    print(f"  => detect / no-op: CPU {total['detect'] / total['no-op']:.2f}x, "
          f"wall {statistics.median(wall['detect']) / statistics.median(wall['no-op']):.2f}x (medians)", flush=True)
    if floor is not None:
        print(f"  => output floor / no-op: CPU {total['output floor'] / total['no-op']:.2f}x; "
              f"detect / output floor: CPU {total['detect'] / total['output floor']:.2f}x", flush=True)
        shutil.rmtree(floor_dir, ignore_errors=True)
    df.unpersist()


def streaming(spark, keys: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import types as T

    import ceql.spark as cs

    schema = T.StructType(
        [
            T.StructField("type", T.StringType()),
            T.StructField("ts", T.TimestampType()),
            T.StructField("offset", T.LongType()),
            T.StructField("sensor", T.LongType()),
            T.StructField("temp", T.DoubleType()),
        ]
    )
    base = Path(tempfile.mkdtemp(prefix="ceql-spark-bench-"))

    def run(label: str, files: int, per_file: int, n_keys: int, buckets=None, report: bool = True) -> None:
        d = base / label.replace(" ", "_").replace(",", "")
        src = d / "in"
        src.mkdir(parents=True)
        off = 0
        for f in range(files):
            rows = {"type": [], "ts": [], "offset": [], "sensor": [], "temp": []}
            for i in range(per_file):
                kind = ("HOT", "WARM", "COLD", "OTHER")[(off * 7) % 4]
                rows["type"].append(kind)
                rows["ts"].append(1_709_251_200_000_000 + off * 100_000)  # 100 ms apart
                rows["offset"].append(off)
                rows["sensor"].append(off % n_keys)
                rows["temp"].append({"HOT": 45.0, "COLD": 5.0}.get(kind, 20.0))
                off += 1
            t = pa.table(rows).set_column(1, "ts", pa.array(rows["ts"], type=pa.timestamp("us", tz="UTC")))
            pq.write_table(t, src / f"part-{f:04d}.parquet")
        df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(src))
        out = cs.detect(df, QUERY, time_field="ts", order_field="offset", watermark="5 seconds", buckets=buckets)
        q = (
            out.writeStream.format("noop")
            .option("checkpointLocation", str(d / "ckpt"))
            .trigger(availableNow=True)
            .start()
        )
        if not q.awaitTermination(900):
            q.stop()
            raise SystemExit("stream did not finish")
        progress = [p for p in q.recentProgress if p["numInputRows"] > 0][1:]  # first batch: warm-up
        ms = [p["durationMs"]["triggerExecution"] for p in progress]
        if report:
            print(
                f"streaming {label}: {len(ms)} micro-batches of {per_file:,} events over {min(n_keys, per_file):,} keys: "
                f"median {statistics.median(ms):,.0f} ms per micro-batch (min {min(ms):,} ms, max {max(ms):,} ms)",
                flush=True,
            )

    try:
        # Each tiny-batch shape runs once unreported first: the first stateful query of
        # a JVM plans and runs slower (its code is compiled then), which favoured
        # whichever query ran later.
        run("tiny", files=8, per_file=20, n_keys=4, report=False)
        stateless(spark, base, "warm-up", report=False)
        stateful_noop(spark, base, "warm-up", report=False)
        run("tiny, measured", files=8, per_file=20, n_keys=4)
        stateless(spark, base, "measured")
        stateful_noop(spark, base, "measured")
        run("10 keys", files=6, per_file=10_000, n_keys=10)
        run(f"{keys:,} keys", files=6, per_file=10_000, n_keys=keys)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def tws(spark, keys: int) -> None:
    """The alternative design: Spark 4's transformWithStateInPandas, with the least
    a per-key design must do (read and write one value state per key), over
    micro-batches of 10,000 events spanning 10 and ``keys`` keys."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import LongType, StructField, StructType

    state_schema = StructType([StructField("n", LongType())])

    class Count(StatefulProcessor):
        def init(self, handle):
            self.n = handle.getValueState("n", state_schema)

        def handleInputRows(self, key, rows, timerValues=None):
            seen = self.n.get()[0] if self.n.exists() else 0
            for pdf in rows:
                seen += len(pdf)
            self.n.update((seen,))
            return iter(())

        def close(self):
            pass

    spark.conf.set("spark.sql.streaming.stateStore.providerClass",
                   "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
    base = Path(tempfile.mkdtemp(prefix="ceql-spark-tws-"))
    try:
        for n_keys in (10, keys):
            src = base / f"in-{n_keys}"
            src.mkdir(parents=True)
            for f in range(6):
                ids = list(range(f * 10_000, (f + 1) * 10_000))
                pq.write_table(pa.table({"sensor": [i % n_keys for i in ids], "offset": ids}), src / f"part-{f:04d}.parquet")
            df = spark.readStream.schema("sensor long, offset long").option("maxFilesPerTrigger", 1).parquet(str(src))
            out = df.groupBy("sensor").transformWithStateInPandas(Count(), "sensor long", "Append", "None")
            q = out.writeStream.format("noop").option("checkpointLocation", str(base / f"ckpt-{n_keys}")).trigger(availableNow=True).start()
            q.awaitTermination(900)
            ms = [p["durationMs"]["triggerExecution"] for p in q.recentProgress if p["numInputRows"] > 0][1:]
            print(f"transformWithStateInPandas, one value state per key, 10,000 events over {n_keys:,} keys: "
                  f"median {statistics.median(ms):,.0f} ms per micro-batch (min {min(ms):,} ms, max {max(ms):,} ms)", flush=True)
    finally:
        spark.conf.unset("spark.sql.streaming.stateStore.providerClass")
        shutil.rmtree(base, ignore_errors=True)


def stateless(spark, base: Path, tag: str, report: bool = True) -> None:
    """Spark's own fixed cost per micro-batch: a stateless query over the same tiny
    files (a projection into the noop sink); ``tag`` names its checkpoint."""
    src = next(base.glob("tiny/in"))
    df = spark.readStream.schema(spark.read.parquet(str(src)).schema).option("maxFilesPerTrigger", 1).parquet(str(src))
    q = (
        df.select("type", "ts").writeStream.format("noop")
        .option("checkpointLocation", str(base / f"stateless-ckpt-{tag}"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(600)
    ms = [p["durationMs"]["triggerExecution"] for p in q.recentProgress if p["numInputRows"] > 0][1:]
    if report:
        print(f"streaming stateless projection, 20-event micro-batches: median {statistics.median(ms):,.0f} ms "
              f"(min {min(ms):,} ms, max {max(ms):,} ms)", flush=True)


def stateful_noop(spark, base: Path, tag: str, report: bool = True) -> None:
    """Spark's own fixed cost per micro-batch for a stateful query shaped like
    ``detect``'s (16 hashed buckets, ``applyInPandasWithState`` with an event-time
    timeout) whose function does nothing but count: the floor under ``detect``;
    ``tag`` names its checkpoint."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    def count(key, pdfs, state):
        state.update((sum(len(p) for p in pdfs),))
        return iter(())

    src = next(base.glob("tiny/in"))
    df = spark.readStream.schema(spark.read.parquet(str(src)).schema).option("maxFilesPerTrigger", 1).parquet(str(src))
    grouped = (
        df.withWatermark("ts", "5 seconds")
        .withColumn("g", F.pmod(F.xxhash64("sensor"), F.lit(16)))
        .groupBy("g")
        .applyInPandasWithState(count, "n long", "n long", "append", GroupStateTimeout.EventTimeTimeout)
    )
    q = (
        grouped.writeStream.format("noop")
        .option("checkpointLocation", str(base / f"stateful-noop-ckpt-{tag}"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(600)
    ms = [p["durationMs"]["triggerExecution"] for p in q.recentProgress if p["numInputRows"] > 0][1:]
    if report:
        print(f"streaming no-op applyInPandasWithState (16 buckets), 20-event micro-batches: median "
              f"{statistics.median(ms):,.0f} ms (min {min(ms):,} ms, max {max(ms):,} ms)", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--batch-keys", type=int, nargs="+", default=[1000, 100_000])
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds of each batch measurement")
    p.add_argument("--keys", type=int, default=10_000, help="keys of the many-keys streaming run")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--skip-batch", action="store_true")
    p.add_argument("--skip-streaming", action="store_true")
    p.add_argument("--tws", action="store_true", help="also measure transformWithStateInPandas (the alternative design)")
    p.add_argument("--extras", action="store_true",
                   help="also measure batch detect with captures=True, and a trailing absence with and without close_deadlines")
    p.add_argument("--breakdown", action="store_true",
                   help="also split the batch gap (engine and glue, output) in CPU seconds")
    a = p.parse_args()
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    spark = session(a.master)
    import ceql

    where = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("ceql").__file__).collect()[0]
    print(f"ceql {ceql.__version__}: driver {ceql.__file__}, executors {where}", flush=True)
    if not a.skip_batch:
        for keys in a.batch_keys:
            batch(spark, a.events, keys, engine_alone=keys == a.batch_keys[0], rounds=a.rounds)
        batch(spark, a.events, a.batch_keys[0], QUERY_HEAVY, engine_alone=True, rounds=a.rounds)
    if a.extras:
        keys = a.batch_keys[0]
        batch(spark, a.events, keys, QUERY, engine_alone=False, rounds=3, captures=True)
        batch(spark, a.events, keys, QUERY_ABSENT, engine_alone=False, rounds=3, close_deadlines=True)
        batch(spark, a.events, keys, QUERY_ABSENT, engine_alone=False, rounds=3)
    if a.breakdown:
        for keys in a.batch_keys:
            breakdown(spark, a.events, keys, rounds=a.rounds)
        breakdown(spark, a.events, a.batch_keys[0], QUERY_HEAVY, rounds=a.rounds)
    if not a.skip_streaming:
        streaming(spark, a.keys)
    if a.tws:
        tws(spark, a.keys)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
