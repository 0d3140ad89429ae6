"""Where ``Match.events`` finds the data of matched positions."""

from __future__ import annotations

import bisect
from typing import Any, List, Sequence, Tuple


class ListSource:
    """Events given as a Python sequence: position = index."""

    __slots__ = ("events", "offset")

    def __init__(self, events: Sequence[Any], offset: int = 0) -> None:
        self.events = events
        self.offset = offset

    def events_at(self, positions: Sequence[int]) -> List[Any]:
        return [self.events[p - self.offset] for p in positions]

    def head(self, n: int) -> "ListSource":
        """The first ``n`` events only."""
        return ListSource(self.events[:n], self.offset)


class ArrowSource:
    """Rows of a pyarrow Table or RecordBatch: position = row (+ offset). Other
    Arrow producers are read into a Table first (``_inputs.rereadable_arrow``)."""

    __slots__ = ("table", "offset", "rename")

    def __init__(self, table: Any, offset: int = 0, rename: Any = None) -> None:
        self.table = table
        self.offset = offset
        self.rename = rename

    def events_at(self, positions: Sequence[int]) -> List[dict]:
        if not positions:
            return []
        rows = _rows(self.table, [p - self.offset for p in positions])
        if self.rename:
            for r in rows:
                for new, old in self.rename.items():
                    if old in r:
                        r[new] = r.pop(old)
        return rows

    def head(self, n: int) -> "ArrowSource":
        """The first ``n`` rows only."""
        return ArrowSource(self.table.slice(0, n), self.offset, self.rename)


def _rows(table: Any, indices: List[int]) -> List[dict]:
    """Rows `indices` of a pyarrow Table or RecordBatch as dicts. pyarrow cannot
    `take` from some column types (string views, as polars exports strings, in
    pyarrow 26): those tables are read one row slice at a time."""
    import pyarrow as pa

    try:
        return table.take(indices).to_pylist()
    except pa.ArrowNotImplementedError:
        return [table.slice(i, 1).to_pylist()[0] for i in indices]


class PandasSource:
    """Rows of a pandas DataFrame: position = row number. NaN, NaT and ``pd.NA``
    come back as ``None``."""

    __slots__ = ("frame",)

    def __init__(self, frame: Any) -> None:
        self.frame = frame

    def events_at(self, positions: Sequence[int]) -> List[dict]:
        if not positions:
            return []
        from ._inputs import pandas_records

        # Missing markers as None, as in the events of Arrow and stream inputs.
        return pandas_records(self.frame.iloc[list(positions)])


class ChunkView:
    """A frozen view of a stream's retained chunks at the time matches were made.

    Each chunk is (first position, source); later trimming of the stream's buffer
    does not affect matches that were already returned.
    """

    __slots__ = ("starts", "sources")

    def __init__(self, chunks: Sequence[Tuple[int, Any]]) -> None:
        self.starts = [c[0] for c in chunks]
        self.sources = [c[1] for c in chunks]

    def events_at(self, positions: Sequence[int]) -> List[Any]:
        """Looks positions up chunk by chunk (positions are ascending): one lookup
        per chunk touched, not one per position."""
        out: List[Any] = []
        k = 0
        while k < len(positions):
            i = bisect.bisect_right(self.starts, positions[k]) - 1
            if i < 0:
                raise LookupError(f"event at position {positions[k]} is no longer retained")
            end = self.starts[i + 1] if i + 1 < len(self.starts) else None
            j = k
            while j < len(positions) and (end is None or positions[j] < end):
                j += 1
            out.extend(self.sources[i].events_at(positions[k:j]))
            k = j
        return out
