"""Streaming path: the partition keys hashed into a fixed number of buckets, then
``groupBy(bucket).applyInPandasWithState`` with an event-time timeout; one engine
per bucket does ``PARTITION BY`` inside. Python is called once per bucket with
rows (or a due timeout) per micro-batch, whatever the number of keys.

The state row of a bucket holds

* ``buckets``: the bucket count it was made with (fixed for a checkpoint);
* ``engine``: the engine's snapshot (no event data), null when idle;
* ``rows``/``base``: the rows already fed that a future match may still contain
  (Arrow IPC; the only copy of them), and the stream position of the first one;
  with a trailing absence, the window's rows (from ``base`` on) followed by the
  rows kept aside for the complex events waiting for their deadline, their
  positions in the table's schema metadata (``_rows.py``);
* ``pending``: the rows the engine's reorder buffer holds (Arrow IPC, with their
  tags in ``__ceql_tag``): the engine holds what it reads of them, in its snapshot,
  and decides when and in which order they are released; these are their full rows,
  for the output;
* ``released``: the time (ns) up to which rows have been released to the engine.

Each call sets late rows aside and hands the others to the engine's reorder buffer
(docs/language.md#s3-7a), with a tie-breaker made of the order fields and the key
(``_ties.py``), so that rows of equal time are evaluated in the batch path's (time,
order, key) order; the watermark then releases the held rows at or before it, in
that order, and advances the engine's window watermark. The rows released move
from ``pending`` to the retained rows at the positions the engine gave them; the
retained rows are kept from the engine's horizon on (with a trailing absence: from
its window horizon on, and, aside, those of the waiting complex events, see
:func:`keep_rows`), and the timeout is set to the
earliest of: the first held row, the engine's next window expiry. When the engine
is idle (nothing held, no partial match), the row keeps only ``released`` (a few
bytes per bucket).

A row is late when its time is at or before ``released``: the engine has moved
past it. That is Spark's own rule (a row at or before the previous micro-batch's
watermark is late) and not the current watermark's: Spark filters late rows with
the previous watermark but hands the function the current one, and after a
restart the two can be far apart; rows between them are not late and are fed in
order. With ``late="emit"`` Spark's filter is off and the glue's must not depend
on which bucket a row hashes to: a bucket not called in the previous micro-batch
(or never) does not know its watermark, so there a row is late when it is at or
before the current watermark, in every bucket (docs/spark.md, "Late events").
"""

from __future__ import annotations

import datetime as _dt
import logging
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Union

import pyarrow as pa
import pyarrow.compute as pc

from ._engine import TIME, Engine
from ._checks import check_order_not_null, check_time_not_null, check_unique_ties, unique_what
from ._input import Prepared, engine_view, needs_plain_names, plain_names, qcol
from ._match_id import with_row_hashes
from ._output import LazyMatches, OutputLayout
from ._plan import QueryPlan
from ._rows import RetainedRows, ipc_to_table, table_to_ipc
from ._ties import check_tie_types, tie_keys

log = logging.getLogger("ceql.spark")

STATE_SCHEMA = "buckets int, engine binary, rows binary, base long, pending binary, released long"
GROUP = "__ceql_g"
WATERMARK = "__ceql_wm"
#: Column of the pending rows: the tag the engine's reorder buffer knows each by.
TAG = "__ceql_tag"
#: In ``late="emit"`` mode the watermark column is shifted this far into the
#: future (and the delay by as much), so that Spark's own late-row filter, which
#: drops rows at or before the watermark ahead of the stateful operator, lets
#: late rows through to the glue; the watermark itself is unchanged.
EMIT_SHIFT_DAYS = 36_500
#: Prefix of the hidden columns that say which values of a floating-point column
#: are NULL (``float_null_masks``).
NULL_MASK = "__ceql_null"
#: Prefix of the hidden columns that carry the high 32 bits of a 64-bit integer
#: column (``split_longs``).
HIGH_BITS = "__ceql_hi"


def delay_text(watermark: Any) -> str:
    """A watermark delay as Spark's interval text: ``"30 seconds"`` as given, a
    ``timedelta`` or a number of seconds in milliseconds."""
    if isinstance(watermark, _dt.timedelta):
        return f"{int(watermark.total_seconds() * 1000)} milliseconds"
    if isinstance(watermark, (int, float)) and not isinstance(watermark, bool):
        return f"{int(watermark * 1000)} milliseconds"
    text = str(watermark).strip()
    if text.lower().startswith("interval "):
        text = text[len("interval ") :]
    return text


def make_state_fn(plan: QueryPlan, prep: Prepared, layout: OutputLayout, in_schema: pa.Schema, late: str,
                  buckets: int, fault: Optional[Callable] = None,
                  null_masks: Optional[Dict[str, str]] = None, split: Optional[Dict[str, str]] = None,
                  stamps: Sequence[str] = ()) -> Any:
    """The function Spark calls per bucket and micro-batch. ``null_masks`` names,
    per floating-point column, the hidden column that says which of its values are
    NULL (:func:`float_null_masks`); ``split``, per 64-bit integer column, the
    hidden column of its high bits (:func:`split_longs`); ``stamps``, the
    ``timestamp`` columns sent as microseconds (:func:`stamps_as_micros`)."""
    masks = {c: m for c, m in (null_masks or {}).items() if c in prep.kept_columns}
    halves = {c: h for c, h in (split or {}).items() if c in prep.kept_columns}
    # Spark names the rows' columns as the plan does (plain_names); in_schema has
    # their own names, in the same order.
    renamed = needs_plain_names(in_schema.names)
    # Timestamp columns come as microseconds (stamps_as_micros), not as Spark's
    # wall-clock nanoseconds of the session time zone.
    instants = [c for c in stamps if c in prep.kept_columns]
    engine_columns = list(prep.engine_columns)
    kept = prep.kept_columns
    identity = prep.identity_columns
    tie_columns = prep.sort_columns[1:]  # after the time: the order fields, then the key
    order_fields = list(prep.order_fields)
    time_field = prep.time_field
    key_hidden = list(prep.key_hidden)
    what = unique_what(prep)
    out_columns = [f.name for f in layout.schema]
    # With measures, a call without rows still gives the engine their schema: a
    # restored engine types its measure columns from the first rows it is given.
    no_rows = prep.engine_schema.empty_table() if plan.measures else None
    # The types no run can use are dropped here, after Spark's watermark and the
    # late-row split have seen them (docs/spark.md, "Dropped event types").
    relevant = None if plan.relevant_types is None else pa.array(plan.relevant_types, pa.string())
    type_field = prep.type_field

    def to_arrow(pdfs: Iterator[Any]) -> Optional[pa.Table]:
        parts = []
        for pdf in pdfs:
            if len(pdf):
                if renamed:
                    pdf.columns = in_schema.names
                part = pa.Table.from_pandas(pdf, schema=in_schema, preserve_index=False)
                part = joined_longs(with_nan(part, pdf, masks), halves)
                parts.append(micros_as_stamps(part, instants).select(kept))
        return with_row_hashes(pa.concat_tables(parts), identity) if parts else None

    def fn(key: Any, pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
        w_ms = state.getCurrentWatermarkMs()
        # Spark compares event times in microseconds: a row is at or before the
        # watermark when its time, truncated to the microsecond, is.
        released_ns = w_ms * 1_000_000 + 999
        if state.exists:
            made_with, snap, rows_b, base, pending_b, released = state.get
            if made_with != buckets:
                raise ValueError(
                    f"ceql.spark: this checkpoint's state was made with buckets={made_with}, not {buckets}: "
                    "the bucket count is fixed for the life of a checkpoint"
                )
        else:
            snap, rows_b, base, pending_b, released = None, None, 0, None, None
        engine = Engine.restore(plan, snap, pins=True) if snap else Engine(plan, reorder=True, pins=True)
        rows = RetainedRows.from_ipc(int(base or 0), rows_b)
        if rows.legacy and engine.pins and snap:
            # State written before rows were kept aside: every row from the horizon on
            # is a window row. Those of the complex events already waiting are kept
            # aside now, before the window is first trimmed.
            rows.pin(engine.waiting_positions())
        pending = ipc_to_table(pending_b)
        outputs: List[Union[pa.Table, LazyMatches]] = []
        incoming = to_arrow(pdfs)
        if incoming is not None:
            check_time_not_null(incoming, time_field)
            check_order_not_null(incoming, order_fields)
            # late="emit" (Spark's own filter off): the current watermark for every
            # bucket, which need not have been called in the previous micro-batch.
            bound = released_ns if late == "emit" else released
            if bound is not None:
                is_late = pc.less_equal(incoming.column(TIME), bound)
                late_rows = incoming.filter(is_late)
                if late_rows.num_rows:
                    if late == "emit":
                        outputs.append(layout.late(late_rows))
                    else:
                        log.warning("ceql.spark: dropped %d late rows (at or before the watermark)", late_rows.num_rows)
                    incoming = incoming.filter(pc.invert(is_late))
            if not incoming.num_rows:
                incoming = None
        released = released_ns if released is None else max(released, released_ns)
        ties: List[bytes] = []
        if incoming is not None:
            ties = tie_keys(incoming, tie_columns)
            check_unique_ties(incoming, ties, key_hidden, what, tie_columns)
            if relevant is not None:
                incoming, ties = used_rows(incoming, ties, type_field, relevant)
        first_tag = 0 if pending is None else pc.max(pending.column(TAG)).as_py() + 1
        view = no_rows
        if incoming is not None:
            view = engine_view(incoming, engine_columns)
            incoming = incoming.append_column(TAG, pa.array(range(first_tag, first_tag + incoming.num_rows), pa.int64()))
            pending = incoming if pending is None else pa.concat_tables([pending, incoming])
        found, tags = engine.push_delayed(view, first_tag, ties, released, lambda tag: time_of_tag(pending, tag))
        if tags:
            # The released rows, in the order (= stream positions) the engine gave them.
            index = {t: i for i, t in enumerate(pending.column(TAG).to_pylist())}
            ready = pending.take(pa.array([index[t] for t in tags], pa.int64()))
            rows.append(ready.drop_columns([TAG]), engine.position - len(tags))
            pending = pending.filter(pc.invert(pc.is_in(pending.column(TAG), pa.array(tags, pa.int64()))))
            if found.num_rows:
                outputs.append(LazyMatches(layout, *rows.resolve(found)))
        # A trailing absence: the matches whose deadline the watermark has passed.
        fired = engine.take_fired()
        if fired is not None and fired.num_rows:
            outputs.append(LazyMatches(layout, *rows.resolve(fired)))
        if pending is not None and not pending.num_rows:
            pending = None
        keep_rows(engine, rows)
        if fault is not None:
            fault(key, state, outputs)
        save(state, engine, rows, pending, w_ms, buckets, released)
        for out in outputs:
            for table in out.tables() if isinstance(out, LazyMatches) else [out]:
                if table.num_rows:
                    yield table.to_pandas(types_mapper=_nullable_dtypes)[out_columns]

    return fn


def keep_rows(engine: Engine, rows: RetainedRows) -> None:
    """Trims the retained rows to what a future output can contain. With a trailing
    absence, that is the rows from the engine's window horizon on, plus, kept aside,
    the rows of the complex events waiting for their deadline (their data rows and
    their interval's start and end, as the engine reports them when it defers them),
    forgotten once the engine's horizon passes them. Otherwise, the rows from the
    engine's horizon on."""
    if not engine.pins:
        rows.trim(engine.horizon)
        return
    deferred = engine.take_deferred_positions()
    if len(deferred):
        rows.pin(deferred)
    rows.unpin(engine.horizon)
    rows.trim(engine.window_horizon)


def used_rows(rows: pa.Table, ties: List[bytes], type_field: str,
              relevant: pa.Array) -> "tuple[Optional[pa.Table], List[bytes]]":
    """The rows (and their tie-breakers) of the types a run can use, or of no type
    (the engine raises on those); None when no row is left."""
    types = rows.column(type_field)
    if types.type != relevant.type:  # large_string from pandas, say
        relevant = relevant.cast(types.type)
    keep = pc.or_(pc.is_null(types), pc.is_in(types, value_set=relevant))
    if pc.all(keep).as_py():
        return rows, ties
    kept = rows.filter(keep)
    ties = [t for t, k in zip(ties, keep.to_pylist()) if k]
    return (kept if kept.num_rows else None), ties


def time_of_tag(pending: Optional[pa.Table], tag: int) -> Optional[int]:
    """The time (nanoseconds) of the held row tagged ``tag``, None if none is."""
    if pending is None:
        return None
    hit = pending.filter(pc.equal(pending.column(TAG), tag))
    return hit.column(TIME)[0].as_py() if hit.num_rows else None


def check_nested_payload(df: Any, kept: Sequence[str]) -> None:
    """Refuses a payload column whose nested type pandas does not carry exactly: the
    streaming path hands rows to pandas (applyInPandasWithState), which shifts a
    timestamp inside a struct or array by the session time zone, rounds a bigint
    inside one to a double when a NULL is near, turns a nested NaN into NULL, and
    fails on a map. Top-level columns of those types are carried exactly
    (:func:`split_longs`, :func:`stamps_as_micros`, :func:`float_null_masks`)."""
    from pyspark.sql import types as T

    lossy_leaves = (T.TimestampType, T.TimestampNTZType, T.LongType, T.FloatType, T.DoubleType)

    def lossy(t: Any) -> Optional[str]:
        if isinstance(t, T.MapType):
            return t.simpleString()
        if isinstance(t, T.ArrayType):
            return lossy(t.elementType) if not isinstance(t.elementType, lossy_leaves) else t.elementType.simpleString()
        if isinstance(t, T.StructType):
            for f in t.fields:
                found = f.dataType.simpleString() if isinstance(f.dataType, lossy_leaves) else lossy(f.dataType)
                if found:
                    return found
        return None

    for f in df.schema.fields:
        found = lossy(f.dataType) if f.name in kept else None
        if found:
            raise ValueError(
                f"ceql.spark: the column {f.name!r} ({f.dataType.simpleString()}) holds {found} values inside a "
                "nested type, which a streaming detect cannot carry exactly through pandas; pass it as JSON "
                "text (F.to_json) and parse it back from the output (F.from_json), or flatten it into top-level "
                "columns (docs/spark.md, 'Streaming path')")


def split_longs(df: Any, skip: List[str]) -> "tuple[Any, Dict[str, str]]":
    """``df`` with each 64-bit integer column (but ``skip``) cut in two: its low 32
    bits in place, its high 32 bits in a hidden column. Spark hands a chunk with a
    NULL in an integer column to pandas as ``float64``, which holds integers exactly
    only up to 2^53; halves of 32 bits survive that (:func:`joined_longs`)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    split = {}
    for i, f in enumerate(df.schema.fields):
        if isinstance(f.dataType, T.LongType) and f.name not in skip:
            high = f"{HIGH_BITS}{i}"
            df = df.withColumn(high, F.shiftright(qcol(f.name), 32)).withColumn(
                f.name, qcol(f.name).bitwiseAND(F.lit(0xFFFFFFFF)))
            split[f.name] = high
    return df, split


def stamps_as_micros(df: Any, skip: List[str]) -> "tuple[Any, List[str]]":
    """``df`` with each ``timestamp`` column (but ``skip``) as its microseconds since
    the epoch. Spark hands timestamps to pandas as naive wall-clock nanoseconds of
    the session time zone: that reading is ambiguous in the hour daylight saving
    time repeats, and fails outside the years 1677-2262. Microseconds are exact
    (:func:`micros_as_stamps` turns them back)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    stamps = [f.name for f in df.schema.fields if isinstance(f.dataType, T.TimestampType) and f.name not in skip]
    for c in stamps:
        df = df.withColumn(c, F.unix_micros(qcol(c)))
    return df, stamps


def micros_as_stamps(table: pa.Table, stamps: Sequence[str]) -> pa.Table:
    """``table`` with the columns of :func:`stamps_as_micros` time stamps again."""
    for column in stamps:
        i = table.schema.get_field_index(column)
        instant = pa.field(column, pa.timestamp("us", tz="UTC"))
        table = table.set_column(i, instant, table.column(i).cast(instant.type))
    return table


def joined_longs(table: pa.Table, halves: Dict[str, str]) -> pa.Table:
    """``table`` with each column split by :func:`split_longs` whole again."""
    for column, high in halves.items():
        i = table.schema.get_field_index(column)
        whole = pc.add(pc.multiply(table.column(high), 1 << 32), table.column(i))
        table = table.set_column(i, table.schema.field(i), whole)
    return table


def float_null_masks(df: Any) -> Dict[str, str]:
    """A hidden column name per floating-point column of ``df``: Spark hands rows to
    pandas with NULL and NaN both as NaN, and the engine tells them apart (a NaN key
    is a key, a NULL one is none; docs/language.md), so the column's NULLs travel
    beside it (:func:`with_nan`)."""
    from pyspark.sql import types as T

    floats = [f.name for f in df.schema.fields if isinstance(f.dataType, (T.FloatType, T.DoubleType))]
    return {c: f"{NULL_MASK}{i}" for i, c in enumerate(floats)}


def with_nan(table: pa.Table, pdf: Any, masks: Dict[str, str]) -> pa.Table:
    """``table`` (made from ``pdf`` by ``Table.from_pandas``, which reads every NaN
    as NULL) with the NaNs of its floating-point columns back: a value is NULL only
    where the column's hidden mask says so."""
    for column, mask in masks.items():
        i = table.schema.get_field_index(column)
        values = pdf[column].to_numpy(dtype=table.schema.field(i).type.to_pandas_dtype())
        exact = pa.array(values, type=table.schema.field(i).type, mask=pdf[mask].to_numpy(dtype=bool))
        table = table.set_column(i, table.schema.field(i), exact)
    return table


def _nullable_dtypes(t: pa.DataType) -> Any:
    """pandas dtype of an output column: pandas' nullable (masked) float for a
    floating-point column, which Spark reads back through ``__arrow_array__`` as it
    is (NaN stays NaN; a NumPy column's NaN would come back NULL), and its nullable
    integer for an integer column (a NumPy one with a NULL would be ``float64``,
    exact only up to 2^53); the default otherwise."""
    import pandas as pd

    if pa.types.is_float64(t):
        return pd.Float64Dtype()
    if pa.types.is_float32(t):
        return pd.Float32Dtype()
    if pa.types.is_int64(t):  # a NumPy column with a NULL would be float64: inexact beyond 2^53
        return pd.Int64Dtype()
    if pa.types.is_int32(t):
        return pd.Int32Dtype()
    return None


def save(state: Any, engine: Engine, rows: RetainedRows, pending: Optional[pa.Table], w_ms: int, buckets: int,
         released: int) -> None:
    """Writes the bucket's state row and sets its timeout."""
    pending_b = None if pending is None else table_to_ipc(pending)
    if engine.is_idle():  # nothing held, and positions aside, a new engine gives the same results
        state.update((buckets, None, None, 0, pending_b, released))
    else:
        state.update((buckets, engine.snapshot(), rows.to_ipc(), rows.base, pending_b, released))
    # A timeout fires once the watermark is past it: at the first held row's
    # millisecond, or at the engine's next window expiry.
    timeouts = []
    first = None if pending is None else pc.min(pending.column(TIME)).as_py()
    if first is not None:
        timeouts.append(-(-(first // 1000) // 1000) - 1)
    d = engine.next_deadline_ns()
    if d is not None:
        timeouts.append(-(-d // 1_000_000) - 1)
    if timeouts:
        state.setTimeoutTimestamp(max(min(timeouts), w_ms, 1))


def warn_shuffle_partitions(spark: Any, buckets: int) -> None:
    """Every micro-batch runs one state task per shuffle partition, most of them
    empty when there are many more partitions than buckets; the count is fixed in
    the checkpoint at the query's first start."""
    try:
        n = int(spark.conf.get("spark.sql.shuffle.partitions"))
    except Exception:
        return
    if n > max(2 * buckets, 32):
        log.warning(
            "ceql.spark: spark.sql.shuffle.partitions is %d: each micro-batch will run %d state tasks for %d buckets. "
            "Set it to about the executors' cores before the query first starts (it is then fixed in the checkpoint)",
            n, n, buckets,
        )


def detect_streaming(plan: QueryPlan, prep: Prepared, layout: OutputLayout, *, watermark: Any, late: str,
                     buckets: int, fault: Optional[Callable] = None) -> Any:
    """The streaming DataFrame of complex events of a streaming DataFrame."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.streaming.state import GroupStateTimeout

    if watermark is None:
        raise ValueError("a streaming DataFrame needs watermark= (how late an event may arrive, e.g. '30 seconds')")
    delay = delay_text(watermark)
    df = prep.df
    wm = F.timestamp_micros(F.expr(f"div({TIME}, 1000)"))
    if late == "emit":
        wm = wm + F.expr(f"INTERVAL {EMIT_SHIFT_DAYS} DAYS")
        delay = f"{EMIT_SHIFT_DAYS} days {delay}"
    try:
        df = df.withColumn(WATERMARK, wm).withWatermark(WATERMARK, delay)
    except Exception as e:
        raise ValueError(f"cannot read the watermark delay {watermark!r} (write e.g. '30 seconds'): {e}") from None
    if prep.split_columns:
        df = df.withColumn(GROUP, F.pmod(F.xxhash64(*[qcol(k) for k in prep.split_columns]), F.lit(int(buckets))))
    else:
        why = plan.one_task_reason()
        log.warning("ceql.spark: %s, so every event goes to one group (one task per micro-batch)", why)
        df = df.withColumn(GROUP, F.lit(0).cast("long"))
    warn_shuffle_partitions(df.sparkSession, buckets)
    if plan.relevant_types is not None:
        log.info("ceql.spark: rows whose %s is not one of %s are dropped in the state function (no run can use "
                 "them)", prep.type_field, ", ".join(plan.relevant_types))
    null_masks = float_null_masks(df)
    for column, mask in null_masks.items():
        df = df.withColumn(mask, qcol(column).isNull())
    df, stamps = stamps_as_micros(df, [WATERMARK])
    # The time and order columns need no halves: a NULL there fails the micro-batch
    # anyway (check_time_not_null, check_order_not_null), and pandas converts each
    # column on its own, so theirs stay int64.
    df, split = split_longs(df, [GROUP, TIME, *prep.order_fields, prep.time_field])
    names = list(df.columns)
    df = plain_names(df)
    in_schema = to_arrow_schema(df.schema, timezone="UTC")
    in_schema = pa.schema([f.with_name(n) for f, n in zip(in_schema, names)])
    ties = prep.sort_columns[1:]
    check_tie_types(in_schema, ties, [f"order_field {c!r}" for c in prep.order_fields]
                    + [f"PARTITION BY column {c!r}" for c in prep.key_names] + ["the routing key"] * len(prep.route_hidden))
    check_nested_payload(prep.df, prep.kept_columns)  # after the order fields' own check
    fn = make_state_fn(plan, prep, layout, in_schema, late, buckets, fault, null_masks, split, stamps)
    return df.groupBy(qcol(GROUP)).applyInPandasWithState(
        fn, prep.output_schema, STATE_SCHEMA, "append", GroupStateTimeout.EventTimeTimeout
    )
