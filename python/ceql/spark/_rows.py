"""The rows an evaluation has been fed that a future match may still contain.

The engine reports stream positions; these rows turn them into output values
(``events``, ``start_time``, ``end_time``, keys, ``match_id``). They are kept here
only (the engine's own snapshot holds no event data), and dropped as soon as the
engine's horizon passes them.
"""

from __future__ import annotations

import io
from typing import List, Optional

import pyarrow as pa


class RetainedRows:
    """Rows of stream positions ``[base, base + len)``, as Arrow batches."""

    def __init__(self, base: int = 0, table: Optional[pa.Table] = None) -> None:
        self.base = base
        self._parts: List[pa.Table] = [table] if table is not None and table.num_rows else []
        self._rows = sum(t.num_rows for t in self._parts)

    def __len__(self) -> int:
        return self._rows

    @property
    def end(self) -> int:
        """Stream position after the last row."""
        return self.base + self._rows

    def append(self, rows: pa.Table, position: int) -> None:
        """Adds rows fed to the engine at stream ``position``."""
        if position != self.end:
            if self._rows:
                raise RuntimeError(f"ceql.spark: retained rows out of step with the engine ({self.end} != {position})")
            self.base = position
        if rows.num_rows:
            self._parts.append(rows)
            self._rows += rows.num_rows

    def table(self) -> pa.Table:
        """Every retained row, row ``i`` at stream position ``base + i``, one chunk."""
        if len(self._parts) != 1:
            self._parts = [pa.concat_tables(self._parts).combine_chunks()] if self._parts else []
        return self._parts[0] if self._parts else pa.table({})

    def trim(self, horizon: int) -> None:
        """Forgets the rows before stream position ``horizon``."""
        drop = min(horizon - self.base, self._rows)
        if drop <= 0:
            return
        kept: List[pa.Table] = []
        for t in self._parts:
            if drop >= t.num_rows:
                drop -= t.num_rows
            else:
                kept.append(t.slice(drop) if drop else t)
                drop = 0
        moved = self._rows - sum(t.num_rows for t in kept)
        self.base += moved
        self._rows -= moved
        self._parts = kept

    # -- persistence (streaming state) ----------------------------------------
    def to_ipc(self) -> Optional[bytes]:
        """The rows as Arrow IPC stream bytes, None when empty."""
        if not self._rows:
            return None
        return table_to_ipc(self.table())

    @classmethod
    def from_ipc(cls, base: int, data: Optional[bytes]) -> "RetainedRows":
        return cls(base, ipc_to_table(data))


def table_to_ipc(table: pa.Table) -> bytes:
    """Arrow IPC stream bytes of a table."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def ipc_to_table(data: Optional[bytes]) -> Optional[pa.Table]:
    """The table of :func:`table_to_ipc` bytes (None for none)."""
    if not data:
        return None
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()
