"""Where a streaming micro-batch's fixed overhead goes: the floors under ``detect``.

Runs query shapes of increasing weight over the same tiny micro-batches (one 20-event
Parquet file each, ``maxFilesPerTrigger=1``, the ``noop`` sink, ``local[2]``, 2 shuffle
partitions) and prints, per shape, the median ``triggerExecution`` of a micro-batch
and its ``addBatch`` part (the job itself; the rest is the offset and commit logs,
source listing and planning, which every shape pays):

* a projection (Spark's own stateless query), one with a shuffle, and an identity
  ``mapInArrow`` (the least a stateless query running Python code pays);
* Spark's native stateful ``count`` (state store, no Python);
* a no-op ``applyInPandasWithState`` with and without an event-time timeout, and a
  no-op ``transformWithStateInPandas`` (RocksDB), all over 16 hashed buckets: the
  floors of a design keeping its state in Spark's state store;
* a ``foreachBatch`` whose one task reads and writes a small state file of its own
  (no state store, no shuffle): the floor of a design outside the state store;
* ``ceql.spark.detect`` itself (the bench's query, default settings).

    python benches/spark_floors.py [--rounds 3]

Shapes run interleaved, once unreported first (the first stateful query of a JVM is
slower while its code is compiled). Prints the load (``uptime``) with each round.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_bench import QUERY, session


def tiny_files(src: Path, files: int = 10, per_file: int = 20) -> None:
    """Writes ``files`` Parquet files of ``per_file`` events over 4 keys, 100 ms apart."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    src.mkdir(parents=True)
    off = 0
    for f in range(files):
        ids = list(range(off, off + per_file))
        off += per_file
        kinds = [("HOT", "WARM", "COLD", "OTHER")[(i * 7) % 4] for i in ids]
        t = pa.table({
            "type": kinds,
            "ts": pa.array([1_709_251_200_000_000 + i * 100_000 for i in ids], type=pa.timestamp("us", tz="UTC")),
            "offset": ids,
            "sensor": [i % 4 for i in ids],
            "temp": [{"HOT": 45.0, "COLD": 5.0}.get(k, 20.0) for k in kinds],
        })
        pq.write_table(t, src / f"part-{f:04d}.parquet")


def shapes(base: Path) -> dict:
    """The measured shapes: name -> function(streaming DataFrame) -> DataFrame or a
    ``foreachBatch`` function (the sink is added by ``measure``)."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.streaming.state import GroupStateTimeout

    import ceql.spark as cs

    def count(key, pdfs, state):
        state.update((sum(len(p) for p in pdfs),))
        return iter(())

    def buckets(df):
        return df.withColumn("g", F.pmod(F.xxhash64("sensor"), F.lit(16))).groupBy("g")

    class Count(StatefulProcessor):
        def init(self, handle):
            self.n = handle.getValueState("n", "n long")

        def handleInputRows(self, key, rows, timerValues=None):
            seen = self.n.get()[0] if self.n.exists() else 0
            self.n.update((seen + sum(len(p) for p in rows),))
            return iter(())

        def close(self):
            pass

    def own_state(bdf, batch_id):
        state_dir = base / "own-state"

        def run(batches):
            import pyarrow as pa

            previous = state_dir / f"{batch_id - 1}"
            held = previous.read_bytes() if previous.exists() else b""
            n = sum(b.num_rows for b in batches)
            state_dir.mkdir(exist_ok=True)
            tmp = state_dir / f".{batch_id}.tmp"
            tmp.write_bytes(held[:1000] or b"x" * 1000)
            tmp.replace(state_dir / f"{batch_id}")
            yield pa.RecordBatch.from_pydict({"n": [n]})

        bdf.coalesce(1).mapInArrow(run, "n long").write.format("noop").mode("overwrite").save()

    wm = "5 seconds"
    return {
        "projection (stateless)": lambda df: df.select("type", "ts"),
        "projection after a shuffle": lambda df: df.repartition(2, "sensor").select("type", "ts"),
        "identity mapInArrow (stateless, Python)": lambda df: df.mapInArrow(lambda it: it, df.schema),
        "native stateful count": lambda df: df.withWatermark("ts", wm).groupBy("sensor").count(),
        "no-op applyInPandasWithState, no timeout": lambda df: buckets(df).applyInPandasWithState(
            count, "n long", "n long", "append", GroupStateTimeout.NoTimeout),
        "no-op applyInPandasWithState, event-time timeout": lambda df: buckets(df.withWatermark("ts", wm))
        .applyInPandasWithState(count, "n long", "n long", "append", GroupStateTimeout.EventTimeTimeout),
        "no-op transformWithStateInPandas, event time (RocksDB)": lambda df: buckets(df.withWatermark("ts", wm))
        .transformWithStateInPandas(Count(), "g long", "Append", "EventTime"),
        "foreachBatch, one task, own state file": lambda df: own_state,
        "ceql.spark.detect": lambda df: cs.detect(df, QUERY, time_field="ts", order_field="offset", watermark=wm),
    }


def measure(spark, src: Path, base: Path, name: str, shape, tag: str) -> tuple:
    """Runs one shape over every file (``availableNow``); returns the medians of
    ``triggerExecution`` and ``addBatch`` over the micro-batches after the first."""
    df = spark.readStream.schema(spark.read.parquet(str(src)).schema).option("maxFilesPerTrigger", 1).parquet(str(src))
    out = shape(df)
    rocks = "transformWithState" in name
    if rocks:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass",
                       "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
    try:
        checkpoint = str(base / f"ckpt-{abs(hash(name))}-{tag}")
        if callable(out):
            w = df.writeStream.foreachBatch(out)
        else:
            mode = "update" if name == "native stateful count" else "append"
            w = out.writeStream.format("noop").outputMode(mode)
        q = w.option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
        if not q.awaitTermination(600):
            q.stop()
            raise SystemExit(f"{name}: the stream did not finish")
    finally:
        if rocks:
            spark.conf.unset("spark.sql.streaming.stateStore.providerClass")
    progress = [p for p in q.recentProgress if p["numInputRows"] > 0][1:]
    return (statistics.median(p["durationMs"]["triggerExecution"] for p in progress),
            statistics.median(p["durationMs"].get("addBatch", 0) for p in progress))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--master", default="local[2]")
    a = p.parse_args()
    spark = session(a.master)
    base = Path(tempfile.mkdtemp(prefix="ceql-spark-floors-"))
    try:
        src = base / "in"
        tiny_files(src)
        todo = shapes(base)
        results = {name: [] for name in todo}
        for r in range(a.rounds + 1):
            for name, shape in todo.items():
                got = measure(spark, src, base, name, shape, f"{r}-{time.time_ns()}")
                if r:
                    results[name].append(got)
            if r:
                print(f"round {r}:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
        floor = statistics.median(t for t, _ in results["projection (stateless)"])
        print(f"{'shape':58s} {'micro-batch (per round)':>28s} {'addBatch':>16s} {'/ projection':>13s}")
        for name, got in results.items():
            ms = " / ".join(f"{t:.0f}" for t, _ in got)
            add = " / ".join(f"{b:.0f}" for _, b in got)
            ratio = statistics.median(t for t, _ in got) / floor
            print(f"{name:58s} {ms:>25s} ms {add:>13s} ms {ratio:12.2f}×", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
