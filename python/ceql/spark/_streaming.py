"""Streaming path: ``groupBy(keys).applyInPandasWithState`` with an event-time timeout.

Per group (a key, a bucket of keys, or everything) the state row holds

* ``engine``: the engine's versioned snapshot (``ceql.Stream.snapshot``), null when idle;
* ``rows``/``base``: the rows already fed that a future match may still contain
  (Arrow IPC), and the engine position of the first one;
* ``pending``: the rows the watermark has not released yet (Arrow IPC);
* ``late``: how many late rows this group has seen.

Each call appends the new rows to ``pending``, sorts the ones at or before the
watermark by (time, order) and feeds them, advances the engine's watermark, and
sets the timeout to the earliest of: the first pending row, the engine's next
window expiry. The state row is removed when the engine is idle and nothing is
pending.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable, Iterator, List, Optional

import pyarrow as pa
import pyarrow.compute as pc

from ._engine import TIME, GroupEngine, ipc_to_table, table_to_ipc
from ._keys import Prepared, check_order_not_null, qcol
from ._output import OutputLayout
from ._plan import QueryPlan

log = logging.getLogger("ceql.spark")

STATE_SCHEMA = "engine binary, rows binary, base long, pending binary, late long"
GROUP = "__ceql_g"
WATERMARK = "__ceql_wm"
#: In ``late="emit"`` mode the watermark column is shifted this far into the
#: future (and the delay by as much), so that Spark's own late-row filter, which
#: drops rows at or before the watermark ahead of the stateful operator, lets
#: late rows through to the glue; the watermark itself is unchanged.
EMIT_SHIFT_DAYS = 36_500

_UNITS_MS = {
    "ms": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
    "week": 604_800_000, "weeks": 604_800_000,
}


def delay_ms(watermark: Any) -> int:
    """Milliseconds of a watermark delay: ``"30 seconds"``, ``"1 minute 30 seconds"``,
    a ``timedelta``, or a number of seconds."""
    import datetime as dt

    if isinstance(watermark, dt.timedelta):
        return int(watermark.total_seconds() * 1000)
    if isinstance(watermark, (int, float)) and not isinstance(watermark, bool):
        return int(watermark * 1000)
    text = str(watermark).strip().lower()
    if text.startswith("interval "):
        text = text[len("interval ") :]
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text)
    if not parts or re.sub(r"(\d+(?:\.\d+)?)\s*([a-z]+)", "", text).strip():
        raise ValueError(f"cannot read the watermark delay {watermark!r} (write e.g. '30 seconds')")
    total = 0.0
    for n, unit in parts:
        if unit not in _UNITS_MS:
            raise ValueError(f"unknown unit {unit!r} in the watermark delay {watermark!r}")
        total += float(n) * _UNITS_MS[unit]
    return int(total)


def _sort_rows(rows: pa.Table, orders: List[str]) -> pa.Table:
    """Rows in the order the batch path gives them (Spark's ascending sort puts
    nulls first)."""
    columns = [TIME] + orders
    try:
        return rows.sort_by([(c, "ascending", "at_start") for c in columns])
    except (TypeError, ValueError):  # pyarrow before per-key null placement
        return rows.sort_by([(c, "ascending") for c in columns], null_placement="at_start")


def make_state_fn(
    plan: QueryPlan,
    prep: Prepared,
    layout: OutputLayout,
    in_schema: pa.Schema,
    late: str,
    fault: Optional[Callable] = None,
    local_tz: Optional[str] = None,
):
    # Spark hands timestamps to pandas as naive wall-clock times of the session
    # time zone; they are localised back before they become Arrow (UTC) again.
    ts_columns = [f.name for f in in_schema if pa.types.is_timestamp(f.type) and f.type.tz is not None]
    relocalize = local_tz not in (None, "UTC", "Etc/UTC", "GMT", "Z", "+00:00")
    engine_columns = list(prep.engine_columns)
    keep = list(prep.input_columns) + [TIME] + list(prep.key_hidden)
    # The partition keys break ties between events of different keys at the same
    # (time, order), which only one key has to keep unique: with several keys in
    # one group (one Spark group for the whole query, or buckets) the engine must
    # see them in the same order on every run.
    order_fields = list(prep.order_fields)
    orders = order_fields + list(prep.key_hidden)
    out_columns = [f.name for f in layout.schema]

    def fn(key: Any, pdfs: Iterator[Any], state: Any) -> Iterator[Any]:
        w_ms = state.getCurrentWatermarkMs()
        w_us = w_ms * 1000
        w_ns = w_us * 1000
        if state.exists:
            snap, rows_b, base, pending_b, late_n = state.get
        else:
            snap, rows_b, base, pending_b, late_n = None, None, 0, None, 0
        late_n = int(late_n or 0)
        parts = []
        for pdf in pdfs:
            if len(pdf):
                if relocalize:
                    for c in ts_columns:
                        pdf[c] = pdf[c].dt.tz_localize(local_tz, ambiguous=False, nonexistent="shift_forward")
                parts.append(pa.Table.from_pandas(pdf, schema=in_schema, preserve_index=False).select(keep))
        outputs: List[pa.Table] = []
        pending = ipc_to_table(pending_b)
        if parts:
            incoming = pa.concat_tables(parts)
            if incoming.column(TIME).null_count:
                raise ValueError(f"ceql.spark: {incoming.column(TIME).null_count} events have a null time field: every event needs a time")
            check_order_not_null(incoming, order_fields)
            t_us = pc.divide(incoming.column(TIME), 1000)
            is_late = pc.less_equal(t_us, w_us)
            late_rows = incoming.filter(is_late)
            if late_rows.num_rows:
                late_n += late_rows.num_rows
                if late == "emit":
                    outputs.append(layout.late(_sort_rows(late_rows, orders)))
                else:
                    log.warning("ceql.spark: dropped %d late rows (at or before the watermark)", late_rows.num_rows)
            incoming = incoming.filter(pc.invert(is_late))
            pending = incoming if pending is None else pa.concat_tables([pending, incoming])
        engine = GroupEngine.from_state(plan, engine_columns, snap, rows_b, base)
        if pending is not None and pending.num_rows:
            ready = pc.less_equal(pc.divide(pending.column(TIME), 1000), w_us)
            feed = _sort_rows(pending.filter(ready), orders)
            pending = pending.filter(pc.invert(ready))
            found = engine.feed(feed)
            if found:
                outputs.append(layout.matches(engine.retained, engine.base, found))
        if w_ns > 0:
            engine.advance(w_ns)
        engine.trim(w_ns)
        if fault is not None:
            fault(key, state, outputs)
        has_pending = pending is not None and pending.num_rows > 0
        if engine.is_idle() and not has_pending:
            if state.exists:
                state.remove()
        else:
            if engine.is_idle():
                snap2, rows2, base2 = None, None, 0
            else:
                snap2, rows2, base2 = engine.to_state()
            state.update((snap2, rows2, base2, table_to_ipc(pending) if has_pending else None, late_n))
            timeouts = []
            if has_pending:
                first_us = pc.min(pending.column(TIME)).as_py() // 1000
                timeouts.append(-(-first_us // 1000) - 1)
            d = engine.next_deadline_ns()
            if d is not None:
                timeouts.append(-(-d // 1_000_000) - 1)
            if timeouts:
                state.setTimeoutTimestamp(max(min(timeouts), w_ms, 1))
        for out in outputs:
            if out.num_rows:
                yield out.to_pandas()[out_columns]

    return fn


def detect_streaming(plan: QueryPlan, prep: Prepared, layout: OutputLayout, *, watermark: Any, late: str, buckets: Optional[int], fault: Optional[Callable] = None) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.streaming.state import GroupStateTimeout

    if watermark is None:
        raise ValueError("a streaming DataFrame needs watermark= (how late an event may arrive, e.g. '30 seconds')")
    delay = delay_ms(watermark)
    df = prep.df
    wm = F.timestamp_micros(F.expr(f"div({TIME}, 1000)"))
    if late == "emit":
        wm = wm + F.expr(f"INTERVAL {EMIT_SHIFT_DAYS} DAYS")
        df = df.withColumn(WATERMARK, wm).withWatermark(WATERMARK, f"{EMIT_SHIFT_DAYS} days {delay} milliseconds")
    else:
        df = df.withColumn(WATERMARK, wm).withWatermark(WATERMARK, f"{delay} milliseconds")
    if plan.split_by_key and buckets:
        df = df.withColumn(GROUP, F.pmod(F.xxhash64(*[qcol(k) for k in prep.key_hidden]), F.lit(int(buckets))))
        group = [GROUP]
    elif plan.split_by_key:
        group = list(prep.key_hidden)
    else:
        why = "the query has no PARTITION BY" if not plan.partitioned else "its result depends on every partition"
        log.warning("ceql.spark: %s, so every event goes to one group (one task per micro-batch)", why)
        df = df.withColumn(GROUP, F.lit(0))
        group = [GROUP]
    in_schema = to_arrow_schema(df.schema, timezone="UTC")
    local_tz = df.sparkSession.conf.get("spark.sql.session.timeZone")
    fn = make_state_fn(plan, prep, layout, in_schema, late, fault, local_tz)
    return df.groupBy(*[qcol(g) for g in group]).applyInPandasWithState(
        fn, prep.output_schema, STATE_SCHEMA, "append", GroupStateTimeout.EventTimeTimeout
    )
