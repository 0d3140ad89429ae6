"""Batch path: hash-partition by key, sort each task's rows by (time, order, key),
then ``mapInArrow`` feeding whole Arrow batches to one engine per task, whose own
``PARTITION BY`` does the per-key work.

Spark never orders rows by itself; feeding unsorted rows would be a silently wrong
answer (or a time-went-backwards error), so the sort is part of the plan, not an
option.
"""

from __future__ import annotations

import logging
from typing import Any, Iterator

import pyarrow as pa

from ._engine import Engine
from ._input import Prepared, check_order_not_null, engine_view, qcol
from ._output import OutputLayout
from ._plan import QueryPlan
from ._rows import RetainedRows

log = logging.getLogger("ceql.spark")


def make_task_fn(plan: QueryPlan, prep: Prepared, layout: OutputLayout) -> Any:
    """The function of one task: its rows, sorted, in; complex events out."""
    order_fields = list(prep.order_fields)  # not `prep` itself: it holds the DataFrame
    kept = prep.kept_columns
    engine_columns = list(prep.engine_columns)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        engine = Engine(plan)
        rows = RetainedRows()
        for batch in batches:
            if batch.num_rows == 0:
                continue
            table = pa.Table.from_batches([batch])
            check_order_not_null(table, order_fields)
            position = engine.position
            found = engine.push(engine_view(table, engine_columns))
            rows.append(table.select(kept), position)
            if found.num_rows:
                yield from layout.matches(rows.table(), rows.base, found).to_batches()
            rows.trim(engine.horizon)

    return run


def detect_batch(plan: QueryPlan, prep: Prepared, layout: OutputLayout) -> Any:
    """The DataFrame of complex events of a batch DataFrame."""
    df = prep.df
    order = [qcol(c) for c in prep.sort_columns]
    if plan.split_by_key:
        df = df.repartition(*[qcol(k) for k in prep.key_hidden]).sortWithinPartitions(*order)
    else:
        why = (
            "the query has no PARTITION BY"
            if not plan.partitioned
            else "its result depends on every partition (WITHIN n EVENTS counts global positions, CONSUME BY ANY resets all)"
        )
        log.warning("ceql.spark: %s, so every event goes to one Spark task (no parallelism)", why)
        df = df.repartition(1).sortWithinPartitions(*order)
    return df.mapInArrow(make_task_fn(plan, prep, layout), prep.output_schema)
