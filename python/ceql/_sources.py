"""Where ``Match.events`` finds the data of matched positions."""

from __future__ import annotations

import bisect
import heapq
from typing import Any, Dict, List, Optional, Sequence


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

    __slots__ = ("table", "offset")

    def __init__(self, table: Any, offset: int = 0) -> None:
        self.table = table
        self.offset = offset

    def events_at(self, positions: Sequence[int]) -> List[dict]:
        if not positions:
            return []
        return _rows(self.table, [p - self.offset for p in positions])

    def head(self, n: int) -> "ArrowSource":
        """The first ``n`` rows only."""
        return ArrowSource(self.table.slice(0, n), self.offset)


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
    """A frozen view of a stream's retained chunks at the time matches were made:
    chunks ``lo`` to ``hi - 1`` of the (append-only) lists of first positions and
    sources. Later pushes and trims of the stream do not affect it, and making it
    costs O(1), whatever the number of chunks retained.
    """

    __slots__ = ("starts", "sources", "lo", "hi", "pinned")

    def __init__(self, starts: List[int], sources: List[Any], lo: int, hi: int,
                 pinned: Optional[Dict[int, Any]] = None) -> None:
        self.starts = starts
        self.sources = sources
        self.lo = lo
        self.hi = hi
        #: Events kept aside, by position, below the first chunk (see :meth:`Retained.pin`).
        self.pinned = pinned

    def events_at(self, positions: Sequence[int]) -> List[Any]:
        """Looks positions up chunk by chunk (positions are ascending): one lookup
        per chunk touched, not one per position; positions before the first chunk
        in the events kept aside."""
        out: List[Any] = []
        k = 0
        while k < len(positions):
            i = bisect.bisect_right(self.starts, positions[k], self.lo, self.hi) - 1
            if i < self.lo:
                if self.pinned is None or positions[k] not in self.pinned:
                    raise LookupError(f"event at position {positions[k]} is no longer retained")
                out.append(self.pinned[positions[k]])
                k += 1
                continue
            end = self.starts[i + 1] if i + 1 < self.hi else None
            j = k
            while j < len(positions) and (end is None or positions[j] < end):
                j += 1
            out.extend(self.sources[i].events_at(positions[k:j]))
            k = j
        return out


class Retained:
    """The chunks of event data a stream retains, as (first position, source) in
    position order: appended at the end, trimmed at the front, and viewed in O(1)
    (:meth:`view`) for the matches of each push.

    The lists only grow at the end while a view may use them: trimming moves the
    first live index ``lo`` on (the chunks before it stay for the views that
    have them), and once more than half of the lists is dead they are copied
    into new lists (old views keep the old ones), so that every operation is
    amortised O(1) and memory follows the live chunks.

    Single events (:meth:`append_event`) go into a growing tail list of up to
    ``tail_size`` events rather than one chunk each.

    Events of complex events waiting for a deadline are kept aside (:meth:`pin`),
    one by one, so that the chunks follow the window and not the last ``d``.
    """

    __slots__ = ("starts", "sources", "lo", "tail", "tail_size", "pinned", "pin_heap", "pinned_dead")

    def __init__(self, tail_size: int) -> None:
        self.starts: List[int] = []
        self.sources: List[Any] = []
        self.lo = 0
        #: The events list of the last chunk while it is the stream's own tail.
        self.tail: Optional[List[Any]] = None
        self.tail_size = tail_size
        #: Events kept aside by position; replaced, never shrunk in place, so that
        #: the views that have it (matches already handed out) keep their events.
        self.pinned: Dict[int, Any] = {}
        #: The positions of ``pinned`` not yet known to be below the floor, least first.
        self.pin_heap: List[int] = []
        #: Entries of ``pinned`` below the floor, dropped at the next rebuild.
        self.pinned_dead = 0

    def __len__(self) -> int:
        return len(self.starts) - self.lo

    def append(self, start: int, source: Any) -> None:
        """A new last chunk whose first event is at position ``start``."""
        self.starts.append(start)
        self.sources.append(source)
        self.tail = None

    def append_event(self, position: int, event: Any) -> None:
        """One event at ``position``, added to the tail chunk while it has room."""
        if self.tail is None or len(self.tail) >= self.tail_size:
            tail = [event]
            self.append(position, ListSource(tail, offset=position))
            self.tail = tail
        else:
            self.tail.append(event)

    def view(self) -> ChunkView:
        """The chunks as they are now, for the matches of one push."""
        return ChunkView(self.starts, self.sources, self.lo, len(self.starts), self.pinned or None)

    def pin(self, positions: Sequence[int]) -> None:
        """Keeps the events at ``positions`` (ascending, retained now) aside, for
        matches that report them after the chunks holding them are trimmed."""
        new = [p for p in positions if p not in self.pinned]
        if new:
            self.pinned.update(zip(new, self.view().events_at(new)))
            for p in new:
                heapq.heappush(self.pin_heap, p)

    def set_pins(self, pinned: Dict[int, Any]) -> None:
        """The events kept aside of a restored snapshot."""
        self.pinned = dict(pinned)
        self.pin_heap = sorted(self.pinned)
        self.pinned_dead = 0

    def unpin(self, floor: int) -> None:
        """Forgets the events kept aside below ``floor`` (no waiting match has
        them): the dict is rebuilt once at least half of it is below the floor, so
        it holds at most twice the events still needed, at O(log n) per event."""
        while self.pin_heap and self.pin_heap[0] < floor:
            heapq.heappop(self.pin_heap)
            self.pinned_dead += 1
        if self.pinned_dead and 2 * self.pinned_dead >= len(self.pinned):
            self.pinned = {p: e for p, e in self.pinned.items() if p >= floor}
            self.pinned_dead = 0

    def keep_first(self, start: int, n: int) -> None:
        """After a push from ``start`` that failed part-way: only its first ``n``
        events stay (they have positions, and later matches may use them)."""
        if self.tail is not None and self.starts[-1] <= start:
            del self.tail[start - self.starts[-1] + n :]
            if not self.tail:
                self._pop()
            return
        first, src = self.starts[-1], self.sources[-1]
        self._pop()
        if n > 0:
            self.append(first, src.head(n))

    def _pop(self) -> None:
        self.starts.pop()
        self.sources.pop()
        self.tail = None

    def trim(self, horizon: int) -> None:
        """Drops the chunks whose events are all before ``horizon``."""
        while len(self.starts) - self.lo > 1 and self.starts[self.lo + 1] <= horizon:
            self.lo += 1
        # Compacted (new lists: a view taken before keeps the old ones) once more than
        # half the chunks are dropped, so that at most as many dropped chunks as live
        # ones (plus one) stay referenced: memory follows the window, not a chunk count.
        if self.lo * 2 > len(self.starts):
            self.starts = self.starts[self.lo :]
            self.sources = self.sources[self.lo :]
            self.lo = 0


class DeferredSource:
    """The source of the matches of a push through a reorder buffer: the events
    released by the push get their positions while it runs, and are added to the
    stream's retained chunks after it; :attr:`view` is then set to a view that
    has them."""

    __slots__ = ("view",)

    def __init__(self) -> None:
        self.view: Optional[ChunkView] = None

    def events_at(self, positions: Sequence[int]) -> List[Any]:
        if self.view is None:
            raise LookupError("the events of this match are not retained")
        return self.view.events_at(positions)
