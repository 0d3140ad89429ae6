"""Batch path: repartition by key, sort within partitions by (key, time, order),
then ``mapInArrow`` feeding one engine per key run in that order.

Spark never orders the rows of a group by itself; feeding unsorted rows would be a
silently wrong answer (or a time-went-backwards error), so the sort is part of the
plan, not an option.
"""

from __future__ import annotations

import logging
from typing import Any, Iterator, List, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from ._engine import TIME, GroupEngine
from ._keys import Prepared, check_order_not_null, qcol
from ._output import OutputLayout, canon
from ._plan import QueryPlan

log = logging.getLogger("ceql.spark")


def key_runs(table: pa.Table, key_columns: List[str]) -> List[Tuple[int, int]]:
    """[start, end) row ranges of equal keys in a table sorted by key (nulls and
    NaNs equal to themselves, as Spark groups them)."""
    n = table.num_rows
    if n == 0:
        return []
    if not key_columns or n == 1:
        return [(0, n)]
    changed = None
    for name in key_columns:
        c = table.column(name).combine_chunks()
        a, b = c.slice(1), c.slice(0, n - 1)
        same_null = pc.and_(pc.is_null(a), pc.is_null(b))
        diff = pc.and_(pc.fill_null(pc.not_equal(a, b), True), pc.invert(same_null))
        if pa.types.is_floating(c.type):
            both_nan = pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False)
            diff = pc.and_(diff, pc.invert(both_nan))
        changed = diff if changed is None else pc.or_(changed, diff)
    cuts = [i + 1 for i in pc.indices_nonzero(changed).to_pylist()]
    bounds = [0, *cuts, n]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def make_partition_fn(plan: QueryPlan, prep: Prepared, layout: OutputLayout):
    key_hidden = list(prep.key_hidden) if plan.split_by_key else []
    engine_columns = list(prep.engine_columns)
    order_fields = list(prep.order_fields)  # not `prep` itself: it holds the DataFrame

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        engine = None
        current = None
        for batch in batches:
            table = pa.Table.from_batches([batch])
            check_order_not_null(table, order_fields)
            outputs = []
            for start, end in key_runs(table, key_hidden):
                rows = table.slice(start, end - start)
                key = tuple(canon(rows.column(k)[0].as_py()) for k in key_hidden)
                if engine is None or key != current:
                    engine, current = GroupEngine(plan, engine_columns), key
                found = engine.feed(rows)
                if found:
                    outputs.append(layout.matches(engine.retained, engine.base, found))
                engine.trim()
            for out in outputs:
                yield from out.to_batches()

    return run


def detect_batch(plan: QueryPlan, prep: Prepared, layout: OutputLayout) -> Any:
    df = prep.df
    if plan.split_by_key:
        keys = [qcol(k) for k in prep.key_hidden]
        df = df.repartition(*keys).sortWithinPartitions(*keys, qcol(TIME), *[qcol(o) for o in prep.order_fields])
    else:
        why = (
            "the query has no PARTITION BY"
            if not plan.partitioned
            else "its result depends on every partition (WITHIN n EVENTS counts global positions, CONSUME BY ANY resets all)"
        )
        log.warning("ceql.spark: %s, so every event goes to one Spark task (no parallelism)", why)
        # The keys break ties between events of different keys at the same (time,
        # order), so that positions, and matches, do not depend on the shuffle.
        ties = [qcol(o) for o in prep.order_fields] + [qcol(k) for k in prep.key_hidden]
        df = df.repartition(1).sortWithinPartitions(qcol(TIME), *ties)
    return df.mapInArrow(make_partition_fn(plan, prep, layout), prep.output_schema)
