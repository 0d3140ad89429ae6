"""One Spark task's engine work, outside Spark, for profilers (callgrind, cProfile).

``dump`` writes the rows one task of ``spark_bench.py``'s batch query feeds its
engine (the hidden time column, sorted by time, order and key) to an Arrow file;
``push`` feeds them to the engine in batches of 10,000 rows as the task does
(``push_arrow_columnar``), without Spark::

    python benches/spark_task.py dump --keys 1000 --events 500000 --out task.arrow
    valgrind --tool=callgrind python benches/spark_task.py push task.arrow --rows 100000

``dump`` also writes the task's own input rows (``task.rows.arrow``) and its
function, pickled as Spark ships it (``task.fn``); ``task`` runs that function,
glue included (row hashes, checks, output assembly), ``--runs`` times::

    python benches/spark_task.py task task.arrow --rows 100000 --runs 3

Under callgrind, the instructions of ``--runs 3`` minus those of ``--runs 1``,
halved, are one run's, without the imports and first calls (set
``OPENBLAS_NUM_THREADS=1 ARROW_DEFAULT_MEMORY_POOL=system PYTHONHASHSEED=0``: the
BLAS threads' spinning and the allocator's background work otherwise vary the
counts by a few percent).

(Under pyenv, give valgrind the interpreter itself, not the ``python`` shim.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def dump(keys: int, events: int, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    sys.path.insert(0, str(Path(__file__).parent))
    import spark_bench as sb

    import ceql.spark as cs
    from ceql.spark import _batch
    from ceql.spark._input import engine_view, qcol

    seen = {}
    real = _batch.make_task_fn

    def spy(plan, prep, layout):
        seen["args"] = (plan, prep)
        seen["full"] = (plan, prep, layout)
        return real(plan, prep, layout)

    _batch.make_task_fn = spy
    spark = sb.session("local[2]")
    cs.detect(sb.events(spark, events, keys), sb.QUERY, time_field="ts", order_field="offset")
    plan, prep = seen["args"]
    # The rows detect's tasks see: without the types no run can use (docs/spark.md,
    # "Dropped event types").
    kept = _batch.relevant_rows(prep.df, plan, prep.type_field)
    rows = kept.repartition(1).sortWithinPartitions(*[qcol(c) for c in prep.sort_columns])
    raw = pa.Table.from_batches(rows._collect_as_arrow())
    table = engine_view(raw, list(prep.engine_columns))
    with ipc.new_file(out, table.schema) as w:
        w.write_table(table)
    with ipc.new_file(out.with_suffix(".rows.arrow"), raw.schema) as w:
        w.write_table(raw)
    out.with_suffix(".json").write_text(json.dumps({"text": plan.text, "schema": plan.schema}))
    from pyspark import cloudpickle

    out.with_suffix(".fn").write_bytes(cloudpickle.dumps(real(*seen["full"])))
    spark.stop()
    print(f"{table.num_rows:,} rows -> {out}")


def push(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    import ceql
    from ceql import _ceql
    from ceql.spark._engine import TIME

    table = ipc.open_file(path).read_all()
    meta = json.loads(path.with_suffix(".json").read_text())
    q = ceql.compile(meta["text"], meta["schema"])
    rt = _ceql.NativeRuntime(q._native, time_field=TIME, time_unit_nanos=1, late_drop=False, max_delay=None, captures=False)
    batches = table.slice(0, rows or table.num_rows).to_batches(max_chunksize=10_000)
    t0 = time.perf_counter()
    for b in batches:
        rt.push_arrow_columnar(pa.Table.from_batches([b]), 0, False, False)
    print(f"push: {time.perf_counter() - t0:.3f} s for {sum(b.num_rows for b in batches):,} rows")


def task(path: Path, rows: int, runs: int) -> None:
    import pickle

    import pyarrow.ipc as ipc

    fn = pickle.loads(path.with_suffix(".fn").read_bytes())
    table = ipc.open_file(path.with_suffix(".rows.arrow")).read_all()
    batches = table.slice(0, rows or table.num_rows).to_batches(max_chunksize=10_000)
    for r in range(runs):
        t0 = time.perf_counter()
        matches = sum(b.num_rows for b in fn(iter(batches)))
        print(f"task run {r}: {time.perf_counter() - t0:.3f} s, {matches:,} matches of {sum(b.num_rows for b in batches):,} rows")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--keys", type=int, default=1000)
    d.add_argument("--events", type=int, default=500_000)
    d.add_argument("--out", type=Path, default=Path("task.arrow"))
    r = sub.add_parser("push")
    r.add_argument("path", type=Path)
    r.add_argument("--rows", type=int, default=0, help="the first ROWS rows only (0: all)")
    t = sub.add_parser("task")
    t.add_argument("path", type=Path)
    t.add_argument("--rows", type=int, default=0, help="the first ROWS rows only (0: all)")
    t.add_argument("--runs", type=int, default=1)
    a = p.parse_args()
    if a.command == "dump":
        dump(a.keys, a.events, a.out)
    elif a.command == "task":
        task(a.path, a.rows, a.runs)
    else:
        push(a.path, a.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
