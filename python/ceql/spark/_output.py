"""Output rows, built column-wise: a take over the retained rows for ``events``,
keys and times, and the ``match_id`` hash (``_match_id``); no Python object per
match or per event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._engine import TIME
from ._match_id import label_hashes, late_seeds, match_ids

#: Output columns besides the partition key columns, in order.
MATCH_ID, START, END, DEADLINE, KIND, EVENTS = "match_id", "start_time", "end_time", "deadline", "kind", "events"
#: The field of each ``events`` struct with the event's variables (``captures=True``).
VARIABLES = "variables"
#: Hidden last column of the batch path's output with ``close_deadlines=False``: the
#: deadline in nanoseconds, compared with the end of the whole input (``_batch``).
DEADLINE_NS = "__ceql_deadline_ns"

_UNIT_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}

#: Most complex events, and most of their events, in one output slice: a task's
#: output is built and handed to Spark slice by slice, so that its memory is that of
#: a slice, not of every match one input batch completes (one event can complete
#: millions: docs/spark.md, "Output in slices").
SLICE_MATCHES = 1 << 16
SLICE_EVENTS = 1 << 20


@dataclass(frozen=True)
class DeadlineColumn:
    """How the ``deadline`` column (``end_time + d``) is computed, in the type of the
    time field: a timestamp gets ``d`` truncated to its precision; a number in
    ``time_unit`` gets ``d`` in that unit (a whole number of units stays an integer,
    otherwise the column is a double)."""

    nanos: int  # d
    numeric_unit_ns: Optional[int]  # ns per unit of a numeric time field; None for a timestamp

    def of(self, end_times: pa.Array) -> pa.Array:
        """The deadlines of matches whose last events have the times ``end_times``,
        saturated as the engine's are (docs/language.md#s3-3b): never past 2^63 - 1 ns
        in the column's unit (numpy's int64 addition wrapped around to 1677)."""
        t = end_times.type
        if pa.types.is_timestamp(t):
            per = _UNIT_NS[t.unit]
            return self._saturated(end_times.cast(pa.int64()), self.nanos // per, (2**63 - 1) // per).cast(t)
        per = self.numeric_unit_ns or 1
        if pa.types.is_integer(t) and self.nanos % per == 0:
            return self._saturated(end_times.cast(pa.int64()), self.nanos // per, (2**63 - 1) // per)
        last = float((2**63 - 1) / per)
        return pc.min_element_wise(pc.add(end_times.cast(pa.float64()), self.nanos / per), pa.scalar(last))

    @staticmethod
    def _saturated(ints: pa.Array, d: int, last: int) -> pa.Array:
        """``ints + d``, at most ``last``, exactly (the sum of int64s is checked)."""
        room = pc.subtract(pa.scalar(last, pa.int64()), pa.scalar(d, pa.int64()))
        return pc.if_else(pc.greater(ints, room), pa.scalar(last, pa.int64()), pc.add(ints, pa.scalar(d, pa.int64())))


@dataclass(frozen=True)
class OutputLayout:
    """How output rows are made from the rows fed to the engine."""

    seeds: Tuple[int, int]
    key_hidden: List[str]  # hidden key columns of the input rows
    time_field: str
    input_columns: List[str]  # user columns, the fields of `events`
    schema: pa.Schema  # Arrow schema of the output
    with_kind: bool
    deadline: Optional[DeadlineColumn] = None  # a trailing absence: the `deadline` column
    captures: bool = False  # `events` structs have `variables`; ids hash them
    deadline_ns: bool = False  # the hidden DEADLINE_NS column (batch, close_deadlines=False)
    measures: Tuple[str, ...] = ()  # measure columns, after `kind` and before `events`

    def empty(self) -> pa.Table:
        return self.schema.empty_table()

    def sliced(self, rows: pa.Table, base: int, found: Optional[pa.RecordBatch]) -> Iterator[pa.Table]:
        """:meth:`matches`, built and yielded slice by slice (see ``SLICE_MATCHES``)."""
        for part in output_slices(found):
            yield self.matches(rows, base, part)

    def matches(self, rows: pa.Table, base: int, found: Optional[pa.RecordBatch]) -> pa.Table:
        """Output rows of the engine's matches ``found`` (stream positions);
        ``rows`` holds the rows of positions ``base, base + 1, ...``."""
        if found is None or found.num_rows == 0:
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
        variables, labels = None, None
        if self.captures:
            variables, labels = _variables(found.column(VARIABLES))
        measures = [found.column(m) for m in self.measures]
        ids = match_ids(self.seeds, rows, base, found, labels, measures)
        return self._assemble(rows, ends, ids, starts, ends, flat, offsets, "match", variables, measures)

    def late(self, rows: pa.Table) -> pa.Table:
        """One output row of kind ``late`` per late event (``late="emit"``)."""
        n = rows.num_rows
        if n == 0:
            return self.empty()
        idx = np.arange(n, dtype=np.int64)
        offsets = np.arange(n + 1, dtype=np.int64)
        each = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(idx, pa.uint64()))
        alone = pa.record_batch({"start": pa.array(idx, pa.uint64()), "end": pa.array(idx, pa.uint64()), "positions": each})
        ids = match_ids(late_seeds(self.seeds), rows, 0, alone)
        return self._assemble(rows, idx, ids, idx, idx, idx, offsets, "late", None, None)

    def _assemble(self, rows: pa.Table, key_rows: np.ndarray, ids: pa.Array, starts: np.ndarray, ends: np.ndarray,
                  flat: np.ndarray, offsets: np.ndarray, kind: str, variables: Optional[pa.Array],
                  measures: Optional[List[pa.Array]]) -> pa.Table:
        n = len(ids)
        cols: List[pa.Array] = [_take(rows.column(k), key_rows) for k in self.key_hidden]
        cols.append(ids)
        t = rows.column(self.time_field)
        cols.append(_take(t, starts))
        end_times = _take(t, ends)
        cols.append(end_times)
        if self.deadline is not None:
            if kind == "match":
                cols.append(self.deadline.of(end_times))
            else:  # a late event has no deadline
                cols.append(pa.nulls(n, self.schema.field(DEADLINE).type))
        if self.with_kind:
            cols.append(pa.array([kind]).take(np.zeros(n, dtype=np.int64)))
        for k, name in enumerate(self.measures):  # a late event has no measures
            cols.append(_whole(measures[k]) if measures is not None else pa.nulls(n, self.schema.field(name).type))
        ev_field = self.schema.field(EVENTS)
        struct_type = ev_field.type.value_type
        fields = [_take(rows.column(c), flat) for c in self.input_columns]
        if self.captures:
            fields.append(variables if variables is not None else pa.nulls(len(flat), struct_type.field(VARIABLES).type))
        fields = [a if a.type == f.type else a.cast(f.type) for a, f in zip(fields, struct_type)]
        struct = pa.StructArray.from_arrays(fields, fields=list(struct_type))
        cols.append(pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), struct, type=ev_field.type))
        if self.deadline_ns:
            ns = _take(rows.column(TIME), ends).to_numpy(zero_copy_only=False)
            d = self.deadline.nanos if self.deadline else 0
            # Saturated at 2^63 - 1 ns, as the engine's deadlines are (docs/language.md#s3-3b).
            cols.append(pa.array(np.where(ns > np.iinfo(np.int64).max - d, np.iinfo(np.int64).max, ns + d), pa.int64()))
        arrays = [c if c.type == f.type else c.cast(f.type) for c, f in zip(cols, self.schema)]
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _variables(column: pa.ChunkedArray) -> Tuple[pa.Array, Tuple[np.ndarray, np.ndarray]]:
    """From the engine's ``variables`` column (per match, per position, the variable
    names as dictionary strings): the ``variables`` of each data row as
    ``list<string>``, and the label hashes of each data row (``_match_id``)."""
    inner = _whole(column).flatten()  # one list of names per data row, in the order of `positions`
    names = inner.flatten()
    if isinstance(names, pa.ChunkedArray):
        names = names.combine_chunks()
    offsets = inner.offsets.to_numpy().astype(np.int64)
    offsets = offsets - offsets[0]
    if pa.types.is_dictionary(names.type):
        dictionary, keys = names.dictionary, names.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    else:  # plain strings: their own dictionary
        encoded = names.dictionary_encode()
        dictionary, keys = encoded.dictionary, encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    strings = dictionary.take(pa.array(keys, pa.int64()))
    listed = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), strings)
    return listed, label_hashes(dictionary.to_pylist(), keys, offsets)


def _whole(column: pa.ChunkedArray) -> pa.Array:
    """One array: the only chunk as it is (``combine_chunks`` copies even that)."""
    if not isinstance(column, pa.ChunkedArray):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _take(column: pa.ChunkedArray, idx: np.ndarray) -> pa.Array:
    return _whole(column).take(pa.array(idx, type=pa.int64()))


class LazyMatches:
    """The output rows of ``found``, not built yet: a micro-batch saves its state
    first, then builds and yields its output slice by slice (:meth:`tables`).
    ``num_rows`` is the number of complex events (what a test's fault hook reads)."""

    def __init__(self, layout: OutputLayout, rows: pa.Table, base: int, found: pa.RecordBatch) -> None:
        self.layout, self.rows, self.base, self.found = layout, rows, base, found
        self.num_rows = found.num_rows

    def tables(self) -> Iterator[pa.Table]:
        return self.layout.sliced(self.rows, self.base, self.found)


def output_slices(found: Optional[pa.RecordBatch], most_matches: int = SLICE_MATCHES,
                  most_events: int = SLICE_EVENTS) -> Iterator[pa.RecordBatch]:
    """``found`` cut into consecutive batches of at most ``most_matches`` complex
    events and ``most_events`` positions (a single longer complex event is a slice
    of its own). Each slice is compact (its own buffers, no offset), so that
    :meth:`OutputLayout.matches` may read the positions' child array directly."""
    if found is None or found.num_rows == 0:
        return
    offsets = found.column("positions").offsets.to_numpy().astype(np.int64)
    offsets = offsets - offsets[0]
    n = found.num_rows
    if n <= most_matches and offsets[-1] <= most_events:
        yield found
        return
    i = 0
    while i < n:
        # The last j with offsets[j] - offsets[i] <= most_events, at least i + 1.
        by_events = int(np.searchsorted(offsets, offsets[i] + most_events, side="right")) - 1
        j = max(i + 1, min(n, i + most_matches, by_events))
        yield found.take(pa.array(np.arange(i, j, dtype=np.int64)))
        i = j
