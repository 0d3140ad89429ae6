"""Batch path: hash-partition by key, sort each task's rows by (time, order, key),
then ``mapInArrow`` feeding whole Arrow batches to one engine per task, whose own
``PARTITION BY`` does the per-key work.

Spark never orders rows by itself; feeding unsorted rows would be a silently wrong
answer (or a time-went-backwards error), so the sort is part of the plan, not an
option.

A trailing absence (docs/language.md#s3-3b): each task closes its deadlines at the
end of its rows, so it reports every match no event of the match's own partition
cancelled. ``Query.run`` reports only those whose deadline an event of the input,
of **any** partition, passes; a task sees only some keys, so with
``close_deadlines=False`` the plan keeps the matches whose deadline is before the
latest time stamp of the whole input (``cutoff``), which is the same set.
"""

from __future__ import annotations

import logging
from typing import Any, Iterator, Optional

import pyarrow as pa

from ._engine import TIME, Engine, compiled
from ._checks import check_order_not_null, check_time_not_null, check_unique_order, unique_what
from ._input import Prepared, engine_view, needs_plain_names, plain_names, qcol
from ._match_id import with_row_hashes
from ._output import DEADLINE_NS, OutputLayout
from ._plan import QueryPlan
from ._rows import RetainedRows

log = logging.getLogger("ceql.spark")

#: Column of the one-row DataFrame with the input's latest time stamp.
CUTOFF = "__ceql_cutoff"


def make_task_fn(plan: QueryPlan, prep: Prepared, layout: OutputLayout) -> Any:
    """The function of one task: its rows, sorted, in; complex events out."""
    order_fields = list(prep.order_fields)  # not `prep` itself: it holds the DataFrame
    kept = prep.kept_columns
    engine_columns = list(prep.engine_columns)
    identity = prep.identity_columns
    names = list(prep.df.columns)
    renamed = needs_plain_names(names)  # the plan renamed them (plain_names)
    time_field = prep.time_field
    sort_columns = prep.sort_columns
    what = unique_what(prep)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        engine = Engine(plan)
        rows = RetainedRows()
        last = None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            table = pa.Table.from_batches([batch])
            if renamed:
                table = table.rename_columns(names)
            check_time_not_null(table, time_field)
            check_order_not_null(table, order_fields)
            hashed = with_row_hashes(table.select(kept), identity)
            last = check_unique_order(hashed, sort_columns, last, what)
            position = engine.position
            found = engine.push(engine_view(table, engine_columns))
            rows.append(hashed, position)
            if found.num_rows:
                for out in layout.sliced(rows.table(), rows.base, found):
                    yield from out.to_batches()
            rows.trim(engine.horizon)
        # The end of the task's rows: every deadline still open is closed (the
        # cutoff, if any, keeps those the whole input passes).
        fired = engine.take_fired(close=True)
        if fired is not None and fired.num_rows:
            for out in layout.sliced(rows.table(), rows.base, fired):
                yield from out.to_batches()

    return run


def reads_stream_fn(plan: QueryPlan) -> Any:
    """``mapInArrow`` over (stream, latest time) rows: keeps the rows of the streams
    the query reads. An event of a stream outside ``FROM`` does not pass a deadline
    (docs/language.md#s3-3b); which streams those are, the engine says: it skips them."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from ceql import _ceql

        q = compiled(plan)
        for batch in batches:
            keep = []
            for stream in batch.column(0).to_pylist():
                probe = _ceql.NativeRuntime(q._native, time_field=TIME, time_unit_nanos=1)
                try:
                    probe.push_arrow(pa.table({"type": pa.array(["\x00probe"]), "stream": pa.array([stream], pa.string()),
                                               TIME: pa.array([0], pa.int64())}))
                except Exception:  # only an event the engine reads can fail
                    pass
                keep.append(probe.stats()["skipped_streams"] == 0)
            yield batch.filter(pa.array(keep, pa.bool_())).select([1])

    return run


def cutoff_of(plan: QueryPlan, prep: Prepared) -> Any:
    """A one-row DataFrame: the latest time stamp (ns) of the events that pass
    deadlines, those of the streams the query reads."""
    from pyspark.sql import functions as F

    df = prep.df
    if "stream" in prep.input_columns:
        latest = df.groupBy(qcol("stream")).agg(F.max(qcol(TIME)).alias(CUTOFF))
        latest = latest.mapInArrow(reads_stream_fn(plan), f"{CUTOFF} long")
    else:
        latest = df.select(qcol(TIME).alias(CUTOFF))
    return latest.agg(F.max(qcol(CUTOFF)).alias(CUTOFF))


def detect_batch(plan: QueryPlan, prep: Prepared, layout: OutputLayout) -> Any:
    """The DataFrame of complex events of a batch DataFrame."""
    df = relevant_rows(prep.df, plan, prep.type_field)
    order = [qcol(c) for c in prep.sort_columns]
    if prep.split_columns:
        df = df.repartition(*[qcol(k) for k in prep.split_columns]).sortWithinPartitions(*order)
    else:
        why = plan.one_task_reason()
        log.warning("ceql.spark: %s, so every event goes to one Spark task (no parallelism)", why)
        df = df.repartition(1).sortWithinPartitions(*order)
    out = plain_names(df).mapInArrow(make_task_fn(plan, prep, layout), prep.output_schema)
    if layout.deadline_ns:
        out = keep_passed(out, cutoff_of(plan, prep))
    return out


def relevant_rows(df: Any, plan: QueryPlan, type_field: str) -> Any:
    """``df`` without the events no run can use (docs/spark.md, "Dropped event types"):
    those of a type outside the engine's ``relevant_types``, dropped before the
    shuffle. A row with no type stays, so that the task raises as before."""
    if plan.relevant_types is None:
        return df
    from pyspark.sql import functions as F

    log.info("ceql.spark: rows whose %s is not one of %s are dropped before the shuffle (no run can use them)",
             type_field, ", ".join(plan.relevant_types))
    t = qcol(type_field)
    return df.where(t.isNull() | t.isin(list(plan.relevant_types)))


def keep_passed(matches: Any, cutoff: Optional[Any]) -> Any:
    """The matches whose deadline is before the input's latest time stamp."""
    from pyspark.sql import functions as F

    joined = matches.crossJoin(F.broadcast(cutoff))
    return joined.where(qcol(DEADLINE_NS) < qcol(CUTOFF)).drop(DEADLINE_NS, CUTOFF)
