"""The one place where the Spark glue drives the engine: an evaluation fed whole
Arrow batches, with ``PARTITION BY`` done inside, returning its matches as Arrow
columns (row positions), never as Python objects.

It uses the binding's runtime directly rather than :class:`ceql.Stream`, because
the glue needs three things ``Stream`` does not offer publicly yet: matches as an
Arrow batch with stream positions (``push_arrow_columnar``), the retention horizon
(``horizon``), and a snapshot of the engine state alone, without the event data
that ``Stream.snapshot`` pickles (the glue keeps those rows itself, once, as
Arrow). When ``ceql.Stream`` exposes them, this module is the only one to change.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

import ceql

from ._plan import QueryPlan

#: Hidden column with the event time in nanoseconds (int64): the engine's time
#: field, and what the glue sorts and compares on.
TIME = "__ceql_t"

_QUERIES: Dict[Tuple[str, Optional[str], bool], "ceql.Query"] = {}


def compiled(plan: QueryPlan) -> "ceql.Query":
    """The query compiled once per Python worker process."""
    key = (plan.text, plan.schema, plan.compat_ignore_strategy)
    q = _QUERIES.get(key)
    if q is None:
        q = _QUERIES[key] = ceql.compile(plan.text, plan.schema, compat_ignore_strategy=plan.compat_ignore_strategy)
    return q


#: The engine's reorder buffer holds rows until the caller's watermark alone
#: releases them (Spark's watermark): its own bound is as large as it gets.
HOLD_UNTIL_WATERMARK = 2**64 - 1


class Engine:
    """One evaluation of the query (all the partition keys it is given).

    ``reorder=True`` (the streaming path) gives it the engine's reorder buffer
    (docs/language.md#s3-7a): rows are held until :meth:`push_delayed`'s watermark
    passes them, then evaluated in (time, tie-breaker, arrival) order."""

    def __init__(self, plan: QueryPlan, native: Optional[object] = None, reorder: bool = False,
                 pins: bool = False) -> None:
        from ceql import _ceql

        self.plan = plan
        if native is None:
            native = _ceql.NativeRuntime(compiled(plan)._native, time_field=TIME, time_unit_nanos=1, late_drop=False,
                                         max_delay=HOLD_UNTIL_WATERMARK if reorder else None, captures=plan.captures)
        self._rt = native
        #: ``pins`` (the streaming path) with a trailing absence: the positions of the
        #: complex events deferred to their deadline are recorded, for
        #: :meth:`take_deferred_positions` (the recording is not part of snapshots, so
        #: a restored engine switches it on again).
        self.pins = bool(pins) and plan.deadline_ns is not None
        if self.pins:
            native.record_deferred_positions(True)

    @classmethod
    def restore(cls, plan: QueryPlan, snapshot: bytes, pins: bool = False) -> "Engine":
        """The evaluation saved by :meth:`snapshot`."""
        from ceql import _ceql
        from ceql.errors import CeqlSnapshotError

        try:
            native = _ceql.NativeRuntime.restore(compiled(plan)._native, snapshot)
        except ValueError as e:
            raise CeqlSnapshotError(f"ceql.spark: the state of this stream cannot be restored: {e}", code="SNAPSHOT") from None
        if native.captures != plan.captures:
            raise CeqlSnapshotError(
                f"ceql.spark: this checkpoint was made with captures={native.captures}, not {plan.captures}: "
                "restart with the same options, or from a new checkpoint",
                code="SNAPSHOT",
            )
        return cls(plan, native, pins=pins)

    def push(self, rows: pa.Table) -> pa.RecordBatch:
        """Feeds ``rows`` (sorted by time, then order); returns the matches that end
        in them: ``start``, ``end`` and ``positions`` (uint64 stream positions). An
        event error also gives the bad event's time: its position counts from the
        task's first event, which means nothing to the user."""
        from ceql.errors import CeqlEventError

        first = self.position
        try:
            return pa.record_batch(self._rt.push_arrow_columnar(rows, 0, False, False))
        except CeqlEventError as e:
            i = e.position - first
            if not 0 <= i < rows.num_rows or TIME not in rows.column_names:
                raise
            raise _with_time(e, rows.column(TIME)[i].as_py()) from None

    def push_delayed(self, rows: Optional[pa.Table], first_tag: int, ties: Sequence[bytes],
                     watermark_ns: int, time_of: Callable[[int], Optional[int]]) -> Tuple[pa.RecordBatch, List[int]]:
        """Feeds ``rows`` (any order; row ``i`` tagged ``first_tag + i``, with the
        tie-breaker ``ties[i]``) to the reorder buffer, then releases the held rows at
        or before ``watermark_ns``: returns the matches of the released rows (as
        :meth:`push`) and their tags in release (= stream position) order. An event
        error also gives the bad event's time, ``time_of`` its tag: the engine logs
        that tag as dropped, and its position counts from the bucket's first event."""
        from ceql.errors import CeqlEventError

        try:
            batch = pa.record_batch(self._rt.push_arrow_delayed(rows, first_tag, list(ties), int(watermark_ns)))
        except CeqlEventError as e:
            dropped = [tag for tag, ok in self._rt.take_fates() if not ok]
            ns = time_of(dropped[-1]) if dropped else None
            if ns is None:
                raise
            raise _with_time(e, ns) from None
        released = []
        for tag, ok in self._rt.take_fates():
            if not ok:  # only late rows are dropped, and the glue sets those aside first
                raise RuntimeError(f"ceql.spark: the engine dropped a buffered row (tag {tag})")
            released.append(tag)
        return batch, released

    def take_fired(self, close: bool = False) -> Optional[pa.RecordBatch]:
        """The matches of a trailing absence whose deadline the last watermark passed
        (as :meth:`push`); with ``close``, also every match still waiting: the input
        is over (docs/language.md#s3-3b). None for other queries."""
        if self.plan.deadline_ns is None:
            return None
        return pa.record_batch(self._rt.take_fired_arrow(close))

    @property
    def position(self) -> int:
        """Stream position of the next row."""
        return self._rt.next_position()

    @property
    def horizon(self) -> int:
        """Lowest stream position a future match can contain."""
        return self._rt.horizon()

    @property
    def window_horizon(self) -> int:
        """Lowest stream position a future match can contain, the complex events
        waiting for their deadline aside (:meth:`take_deferred_positions`)."""
        return self._rt.window_horizon()

    def take_deferred_positions(self) -> np.ndarray:
        """The positions (sorted, distinct) of the complex events deferred to their
        deadline since the last call, each interval's start and end included (a
        leading ``NOT(...)`` or a projection can leave them out of its data rows, and
        the output reads their times); empty unless made with ``pins``."""
        if not self.pins:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self._rt.take_deferred_positions(), dtype=np.int64)

    def waiting_positions(self) -> np.ndarray:
        """Every position (start, end and data rows; sorted, distinct) of the complex
        events waiting for their deadline now (a superset: cancelled ones not yet
        dropped from the queue included): for state written before rows were kept
        aside."""
        return np.asarray(self._rt.waiting_positions(), dtype=np.int64)

    def next_deadline_ns(self) -> Optional[int]:
        """When the earliest partial match leaves its time window, or None."""
        if self.plan.window != "duration":
            return None
        return self._rt.next_deadline()

    def is_idle(self) -> bool:
        """No partial match and no strategy state: the evaluation can be dropped."""
        return self._rt.is_idle()

    def snapshot(self) -> bytes:
        """The engine state (versioned bytes), without event data."""
        return self._rt.snapshot()


def _with_time(e: Any, ns: Optional[int]) -> Any:
    """``e``, a CeqlEventError, with the bad event's time (nanoseconds) added."""
    from ceql.errors import CeqlEventError

    return CeqlEventError(
        f"{e} [ceql.spark: positions count from the first event of a Spark task or bucket; the event at "
        f"position {e.position} has the time {_nanos_text(ns)}]",
        position=e.position, field=e.field, event_type=e.event_type, message=e.message,
    )


def _nanos_text(ns: Optional[int]) -> str:
    """Nanoseconds since the epoch as an ISO UTC time, with the nanoseconds."""
    import datetime as _dt

    if ns is None:
        return "null"
    at = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(microseconds=ns // 1000)
    return f"{at.isoformat()} ({ns} ns since the epoch)"
