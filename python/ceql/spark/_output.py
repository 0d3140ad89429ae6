"""Output rows, built column-wise: a take over the retained rows for ``events``,
keys and times, and the ``match_id`` hash (``_match_id``); no Python object per
match or per event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

import numpy as np
import pyarrow as pa

from ._match_id import H0, H1, late_seeds, match_ids, row_hashes

#: Output columns besides the partition key columns, in order.
MATCH_ID, START, END, KIND, EVENTS = "match_id", "start_time", "end_time", "kind", "events"


@dataclass(frozen=True)
class OutputLayout:
    """How output rows are made from the rows fed to the engine."""

    seeds: Tuple[int, int]
    key_hidden: List[str]  # hidden key columns of the input rows
    time_field: str
    input_columns: List[str]  # user columns, the fields of `events`
    schema: pa.Schema  # Arrow schema of the output
    with_kind: bool

    def empty(self) -> pa.Table:
        return self.schema.empty_table()

    def matches(self, rows: pa.Table, base: int, found: pa.RecordBatch) -> pa.Table:
        """Output rows of the engine's matches ``found`` (stream positions);
        ``rows`` holds the rows of positions ``base, base + 1, ...``."""
        if found.num_rows == 0:
            return self.empty()
        b = np.uint64(base)
        starts = (found.column("start").to_numpy() - b).astype(np.int64)
        ends = (found.column("end").to_numpy() - b).astype(np.int64)
        positions = found.column("positions")
        flat = (positions.values.to_numpy() - b).astype(np.int64)
        offsets = positions.offsets.to_numpy().astype(np.int64)
        offsets = offsets - offsets[0]
        if len(starts) and starts.min() < 0:
            raise RuntimeError("ceql.spark: a match starts at a row that is no longer retained")
        ids = match_ids(self.seeds, row_hashes(rows.column(H0)), row_hashes(rows.column(H1)), starts, ends, flat, offsets)
        return self._assemble(rows, ends, ids, starts, ends, flat, offsets, "match")

    def late(self, rows: pa.Table) -> pa.Table:
        """One output row of kind ``late`` per late event (``late="emit"``)."""
        n = rows.num_rows
        if n == 0:
            return self.empty()
        idx = np.arange(n, dtype=np.int64)
        offsets = np.arange(n + 1, dtype=np.int64)
        ids = match_ids(late_seeds(self.seeds), row_hashes(rows.column(H0)), row_hashes(rows.column(H1)), idx, idx, idx, offsets)
        return self._assemble(rows, idx, ids, idx, idx, idx, offsets, "late")

    def _assemble(self, rows: pa.Table, key_rows: np.ndarray, ids: pa.Array, starts: np.ndarray, ends: np.ndarray,
                  flat: np.ndarray, offsets: np.ndarray, kind: str) -> pa.Table:
        n = len(ids)
        cols: List[pa.Array] = [_take(rows.column(k), key_rows) for k in self.key_hidden]
        cols.append(ids)
        t = rows.column(self.time_field)
        cols.append(_take(t, starts))
        cols.append(_take(t, ends))
        if self.with_kind:
            cols.append(pa.array([kind]).take(np.zeros(n, dtype=np.int64)))
        ev_field = self.schema.field(EVENTS)
        struct_type = ev_field.type.value_type
        fields = [_take(rows.column(c), flat) for c in self.input_columns]
        fields = [a if a.type == f.type else a.cast(f.type) for a, f in zip(fields, struct_type)]
        struct = pa.StructArray.from_arrays(fields, fields=list(struct_type))
        cols.append(pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), struct, type=ev_field.type))
        arrays = [c if c.type == f.type else c.cast(f.type) for c, f in zip(cols, self.schema)]
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _take(column: pa.ChunkedArray, idx: np.ndarray) -> pa.Array:
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return arr.take(pa.array(idx, type=pa.int64()))
