"""The streaming reorder buffer: rows that arrived but that the watermark has not
released yet, handed to the engine in (time, order, key) order once it has.

This is the glue's own stand-in for the engine's reorder buffer (the time issue):
when the engine buffers and sorts by itself, ``_streaming.step`` pushes the rows
to the engine unsorted and drops this class; nothing else depends on it.
"""

from __future__ import annotations

from typing import List, Optional

import pyarrow as pa
import pyarrow.compute as pc

from ._engine import TIME
from ._rows import ipc_to_table, table_to_ipc


class ReorderBuffer:
    """Pending rows (with the hidden time column ``TIME``, in nanoseconds)."""

    def __init__(self, sort_columns: List[str], table: Optional[pa.Table] = None) -> None:
        self.sort_columns = sort_columns
        self._table = table if table is not None and table.num_rows else None

    def __len__(self) -> int:
        return 0 if self._table is None else self._table.num_rows

    def add(self, rows: pa.Table) -> None:
        """Buffers rows (any order)."""
        if rows.num_rows:
            self._table = rows if self._table is None else pa.concat_tables([self._table, rows])

    def release(self, watermark_ns: int) -> Optional[pa.Table]:
        """Removes and returns the rows at or before the watermark, sorted."""
        if self._table is None:
            return None
        ready = pc.less_equal(self._table.column(TIME), watermark_ns)
        out = self._table.filter(ready)
        rest = self._table.filter(pc.invert(ready))
        self._table = rest if rest.num_rows else None
        return sort_rows(out, self.sort_columns) if out.num_rows else None

    def earliest_ns(self) -> Optional[int]:
        """Time of the earliest buffered row, or None."""
        return None if self._table is None else pc.min(self._table.column(TIME)).as_py()

    def to_ipc(self) -> Optional[bytes]:
        return None if self._table is None else table_to_ipc(self._table)

    @classmethod
    def from_ipc(cls, sort_columns: List[str], data: Optional[bytes]) -> "ReorderBuffer":
        return cls(sort_columns, ipc_to_table(data))


def sort_rows(rows: pa.Table, columns: List[str]) -> pa.Table:
    """Rows in the order the batch path reads them (Spark's ascending sort puts
    nulls first)."""
    try:
        return rows.sort_by([(c, "ascending", "at_start") for c in columns])
    except (TypeError, ValueError):  # pyarrow before per-key null placement
        return rows.sort_by([(c, "ascending") for c in columns], null_placement="at_start")
