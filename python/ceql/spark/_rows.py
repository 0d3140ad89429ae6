"""The rows an evaluation has been fed that a future match may still contain.

The engine reports stream positions; these rows turn them into output values
(``events``, ``start_time``, ``end_time``, keys, ``match_id``). They are kept here
only (the engine's own snapshot holds no event data), and dropped as soon as the
engine's horizon passes them.

A query ending with ``ψ ; ABSENT(β) FOR d`` (docs/language.md#s3-3b) keeps two
kinds of rows: the *window*, the rows of consecutive positions from the engine's
window horizon on (what the automaton can still use), and rows *kept aside*, one
by one, below it: those of the complex events that wait for their deadline (their
data positions, start and end), until the engine's horizon passes them
(:meth:`RetainedRows.pin`, :meth:`RetainedRows.unpin`). Without it a bucket would
keep every row of the last ``d``.

Persisted form (the ``rows`` column of the streaming state): one Arrow IPC stream,
the window rows, then the rows kept aside in position order; schema metadata
``ceql.rows`` (the format, ``2``), ``ceql.pinned`` (the positions of the rows kept
aside, the table's last rows) and ``ceql.marks`` (the positions of window rows to
keep aside once the window passes them), both as base64 of little-endian int64s
and absent when empty. State written before this format has no metadata: every row
is a window row (:attr:`RetainedRows.legacy`).
"""

from __future__ import annotations

import base64
import io
from typing import List, Optional, Tuple

import numpy as np
import pyarrow as pa

#: Schema metadata of the persisted rows: format, rows kept aside, marks.
FORMAT, PINNED, MARKS = b"ceql.rows", b"ceql.pinned", b"ceql.marks"
_VERSION = b"2"
_EMPTY = np.zeros(0, dtype=np.int64)


class RetainedRows:
    """Rows of stream positions ``[base, base + len)`` (the window), as Arrow
    batches, and rows kept aside below ``base`` at the positions ``pinned``."""

    def __init__(self, base: int = 0, table: Optional[pa.Table] = None, pins: Optional[pa.Table] = None,
                 pinned: Optional[np.ndarray] = None, marks: Optional[np.ndarray] = None, legacy: bool = False) -> None:
        self.base = base
        self._parts: List[pa.Table] = [table] if table is not None and table.num_rows else []
        self._rows = sum(t.num_rows for t in self._parts)
        #: Rows kept aside (positions ``pinned``, ascending, all below ``base``).
        self._pins: Optional[pa.Table] = pins if pins is not None and pins.num_rows else None
        self.pinned: np.ndarray = _EMPTY if self._pins is None else np.asarray(pinned, dtype=np.int64)
        #: Positions of window rows to keep aside when the window passes them (ascending).
        self.marks: np.ndarray = _EMPTY if marks is None else np.asarray(marks, dtype=np.int64)
        #: Read from state written before rows were kept aside: the caller pins the
        #: rows of the complex events already waiting (they are all in the window).
        self.legacy = legacy

    def __len__(self) -> int:
        return self._rows

    @property
    def end(self) -> int:
        """Stream position after the last row."""
        return self.base + self._rows

    @property
    def aside(self) -> int:
        """Number of rows kept aside below the window."""
        return len(self.pinned)

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
        """Every window row, row ``i`` at stream position ``base + i``, one chunk."""
        if len(self._parts) != 1:
            self._parts = [pa.concat_tables(self._parts).combine_chunks()] if self._parts else []
        return self._parts[0] if self._parts else pa.table({})

    def resolve(self, found: pa.RecordBatch) -> Tuple[pa.Table, int, pa.RecordBatch]:
        """``(rows, base, found)`` for ``OutputLayout.matches``: the rows of the
        engine's matches ``found`` and their positions. Without rows kept aside, the
        window as it is; otherwise only the rows the matches use (a ``take`` from
        the window and from the rows aside), ``found``'s ``start``, ``end`` and
        ``positions`` renumbered into them (the order of positions is kept)."""
        if self._pins is None or found.num_rows == 0:
            return self.table(), self.base, found
        starts = found.column("start").to_numpy().astype(np.int64)
        ends = found.column("end").to_numpy().astype(np.int64)
        positions = found.column("positions")
        offsets = positions.offsets.to_numpy().astype(np.int64)
        flat = positions.values.to_numpy()[offsets[0] : offsets[-1]].astype(np.int64)
        offsets = offsets - offsets[0]
        needed = np.unique(np.concatenate([starts, ends, flat]))
        split = int(np.searchsorted(needed, self.base))
        below, within = needed[:split], needed[split:] - self.base
        at = np.searchsorted(self.pinned, below)
        if (len(within) and within[-1] >= self._rows) or np.any(at >= len(self.pinned)) or np.any(
                self.pinned[np.minimum(at, len(self.pinned) - 1)] != below):
            raise RuntimeError("ceql.spark: a match contains a row that is no longer retained")
        window = self.table()
        parts = [self._pins.take(pa.array(at, pa.int64()))]
        if len(within):
            parts.append(window.take(pa.array(within, pa.int64())))
        rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]

        def renumbered(p: np.ndarray) -> pa.Array:
            return pa.array(np.searchsorted(needed, p).astype(np.uint64), pa.uint64())

        columns = []
        for name, column in zip(found.schema.names, found.columns):
            if name in ("start", "end"):
                column = renumbered(starts if name == "start" else ends).cast(column.type)
            elif name == "positions":
                values = renumbered(flat).cast(column.type.value_type)
                column = type(column).from_arrays(pa.array(offsets, column.offsets.type), values, type=column.type)
            columns.append(column)
        return rows, 0, pa.RecordBatch.from_arrays(columns, schema=found.schema)

    def pin(self, positions: np.ndarray) -> None:
        """Keeps the rows at ``positions`` aside once the window passes them: those
        of complex events that wait for their deadline. Positions below the window
        are already aside (or were never needed again)."""
        p = np.asarray(positions, dtype=np.int64)
        p = p[(p >= self.base) & (p < self.end)]
        if len(p):
            self.marks = np.union1d(self.marks, p)

    def unpin(self, floor: int) -> None:
        """Forgets the rows kept aside below stream position ``floor`` (the engine's
        horizon: no waiting complex event has them)."""
        if len(self.pinned) and self.pinned[0] < floor:
            k = int(np.searchsorted(self.pinned, floor))
            self.pinned = self.pinned[k:]
            self._pins = self._pins.slice(k) if len(self.pinned) else None
        if len(self.marks) and self.marks[0] < floor:
            self.marks = self.marks[np.searchsorted(self.marks, floor) :]

    def trim(self, horizon: int) -> None:
        """Forgets the window rows before stream position ``horizon``, but the
        marked ones (:meth:`pin`), which are kept aside."""
        drop = min(horizon - self.base, self._rows)
        if drop <= 0:
            return
        if len(self.marks) and self.marks[0] < self.base + drop:
            k = int(np.searchsorted(self.marks, self.base + drop))
            moved = self.marks[:k]
            whole = self._parts[0] if len(self._parts) == 1 else pa.concat_tables(self._parts)
            taken = whole.take(pa.array(moved - self.base, pa.int64()))
            self._pins = taken if self._pins is None else pa.concat_tables([self._pins, taken])
            self.pinned = np.concatenate([self.pinned, moved])
            self.marks = self.marks[k:]
        kept: List[pa.Table] = []
        for t in self._parts:
            if drop >= t.num_rows:
                drop -= t.num_rows
            else:
                kept.append(t.slice(drop) if drop else t)
                drop = 0
        moved_rows = self._rows - sum(t.num_rows for t in kept)
        self.base += moved_rows
        self._rows -= moved_rows
        self._parts = kept

    # -- persistence (streaming state) ----------------------------------------
    def to_ipc(self) -> Optional[bytes]:
        """The rows as Arrow IPC stream bytes (window rows, then the rows kept
        aside; see the module's docstring), None when there are none."""
        if not self._rows and self._pins is None:
            return None
        parts = ([self.table()] if self._rows else []) + ([self._pins] if self._pins is not None else [])
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        meta = dict(table.schema.metadata or {})
        meta[FORMAT] = _VERSION
        meta.pop(PINNED, None)
        meta.pop(MARKS, None)
        if len(self.pinned):
            meta[PINNED] = _encode(self.pinned)
        if len(self.marks):
            meta[MARKS] = _encode(self.marks)
        return table_to_ipc(table.replace_schema_metadata(meta))

    @classmethod
    def from_ipc(cls, base: int, data: Optional[bytes]) -> "RetainedRows":
        table = ipc_to_table(data)
        if table is None:
            return cls(base)
        meta = dict(table.schema.metadata or {})
        if FORMAT not in meta:  # written before rows were kept aside: all window rows
            return cls(base, table, legacy=True)
        pinned = _decode(meta.pop(PINNED, None))
        marks = _decode(meta.pop(MARKS, None))
        del meta[FORMAT]
        table = table.replace_schema_metadata(meta or None)
        n = table.num_rows - len(pinned)
        return cls(base, table.slice(0, n), table.slice(n), pinned, marks)


def _encode(positions: np.ndarray) -> bytes:
    return base64.b64encode(np.ascontiguousarray(positions, dtype="<i8").tobytes())


def _decode(text: Optional[bytes]) -> np.ndarray:
    if not text:
        return _EMPTY
    return np.frombuffer(base64.b64decode(text), dtype="<i8").astype(np.int64)


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
