"""One engine evaluation over the rows of one Spark group (a key, a bucket or
everything), fed in (time, order) order, plus the rows it may still need.

The engine reports positions (0-based, counted per ``ceql.Stream``); the glue
maps them back to the rows it pushed. It keeps those rows itself (``retained``),
all columns, as long as a future match may contain them, and feeds the engine
only the columns the query reads, so that the engine's snapshot stays small.
"""

from __future__ import annotations

import io
from typing import Any, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

import ceql

from ._plan import QueryPlan

#: Hidden column with the event time in nanoseconds (int64): the engine's time
#: field, and what the glue sorts and compares on.
TIME = "__ceql_t"

_QUERIES: dict = {}


def compiled(plan: QueryPlan) -> "ceql.Query":
    """The query compiled once per Python worker process."""
    key = (plan.text, plan.schema)
    q = _QUERIES.get(key)
    if q is None:
        q = _QUERIES[key] = ceql.compile(plan.text, plan.schema)
    return q


def table_to_ipc(table: Optional[pa.Table]) -> Optional[bytes]:
    if table is None or table.num_rows == 0:
        return None
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def ipc_to_table(data: Optional[bytes]) -> Optional[pa.Table]:
    if not data:
        return None
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


class GroupEngine:
    """The engine state of one group and the rows it may still need.

    ``feed`` takes rows already sorted by (time, order), with the hidden time
    column; it returns the matches as (start, end, positions) row indexes into
    ``self.retained`` (valid until the next ``feed``/``advance``).
    """

    def __init__(self, plan: QueryPlan, engine_columns: List[str]) -> None:
        self.plan = plan
        self.engine_columns = engine_columns
        self.stream: Optional[ceql.Stream] = None
        self.retained: Optional[pa.Table] = None
        self.base = 0  # position of retained row 0
        self.max_attr: Optional[int] = None  # WITHIN n [attr]: largest coordinate fed

    # -- persistence ---------------------------------------------------------
    def to_state(self) -> Tuple[Optional[bytes], Optional[bytes], int]:
        snap = self.stream.snapshot() if self.stream is not None else None
        return snap, table_to_ipc(self.retained), self.base

    @classmethod
    def from_state(cls, plan: QueryPlan, engine_columns: List[str], snap: Optional[bytes], rows: Optional[bytes], base: int) -> "GroupEngine":
        g = cls(plan, engine_columns)
        if snap:
            g.stream = ceql.Stream.restore(compiled(plan), snap)
        g.retained = ipc_to_table(rows)
        g.base = int(base or 0)
        if g.retained is not None and plan.window == "attribute":
            g.max_attr = pc.max(g.retained.column(plan.window_attr)).as_py()
        return g

    # -- evaluation ----------------------------------------------------------
    def _ensure_stream(self) -> ceql.Stream:
        if self.stream is None:
            self.stream = compiled(self.plan).stream(time_field=TIME, time_unit="ns", late="error")
            self.base = 0
            self.retained = None
        return self.stream

    def feed(self, rows: pa.Table) -> List[Any]:
        """Pushes ``rows`` (sorted by time, order); returns the engine's matches."""
        if rows.num_rows == 0:
            return []
        stream = self._ensure_stream()
        first = stream.position
        expected = self.base + (self.retained.num_rows if self.retained is not None else 0)
        if self.retained is not None and first != expected:
            raise RuntimeError(f"ceql.spark: retained rows out of step with the engine ({expected} != {first})")
        if self.retained is None:
            self.base = first
            self.retained = rows
        else:
            self.retained = pa.concat_tables([self.retained, rows], promote_options="permissive")
        matches = stream.process(rows.select(self.engine_columns))
        if self.plan.window == "attribute":
            m = pc.max(rows.column(self.plan.window_attr)).as_py()
            if m is not None and (self.max_attr is None or m > self.max_attr):
                self.max_attr = m
        return matches

    def advance(self, watermark_ns: int) -> None:
        """No event at or before ``watermark_ns`` will come any more."""
        if self.stream is not None and self.plan.window == "duration":
            self.stream.advance_watermark(int(watermark_ns))

    def next_deadline_ns(self) -> Optional[int]:
        if self.stream is None or self.plan.window != "duration":
            return None
        return self.stream.next_deadline()

    def is_idle(self) -> bool:
        return self.stream is None or self.stream.is_idle()

    def trim(self, watermark_ns: Optional[int] = None) -> None:
        """Forgets the retained rows that no future match can contain."""
        if self.retained is None:
            return
        if self.is_idle():
            # No partial match is alive: future matches start at future rows.
            self.base += self.retained.num_rows
            self.retained = None
            return
        n = self.retained.num_rows
        keep_from = 0
        if self.plan.window == "duration":
            times = self.retained.column(TIME)
            last = times[n - 1].as_py()
            now = max(last, watermark_ns) if watermark_ns is not None else last
            # a future match ends at time >= now and starts within the window
            keep_from = _first_at_least(times, now - self.plan.window_n)
        elif self.plan.window == "events":
            end = self.base + n
            keep_from = max(0, (end - self.plan.window_n) - self.base)
        elif self.plan.window == "attribute" and self.max_attr is not None:
            col = self.retained.column(self.plan.window_attr)
            ok = pc.fill_null(pc.greater_equal(col, self.max_attr - self.plan.window_n), False)
            idx = pc.index(ok, True).as_py()
            keep_from = n if idx < 0 else idx
        if keep_from > 0:
            if keep_from >= n:
                self.base += n
                self.retained = None
            else:
                self.base += keep_from
                self.retained = self.retained.slice(keep_from)
                if self.retained.num_columns and self.retained.column(0).num_chunks > 64:
                    self.retained = self.retained.combine_chunks()


def _first_at_least(sorted_col: Any, value: int) -> int:
    """Index of the first element >= value of an ascending int64 column."""
    import numpy as np

    arr = sorted_col.to_numpy() if hasattr(sorted_col, "to_numpy") else np.asarray(sorted_col)
    return int(np.searchsorted(arr, value, side="left"))
