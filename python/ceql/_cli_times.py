"""``ceql run``: time stamps written as ISO 8601 text.

The readers keep text as text (see :mod:`ceql._cli_input`); the time field given
with ``--time-field``, and the attributes ``--schema`` declares ``primary_time``,
are then converted here, the same way for every format and reader: an empty
text is NULL (a missing time stamp), a time without a zone offset is UTC, one
with an offset is converted to UTC, and the result has nanoseconds. A value that
is not such a time stamp (or is outside the years 1677 to 2262) is a bad event
at its own row, as the engine would report it.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

#: A zone offset at the end of an ISO 8601 time stamp.
_ZONE = r"(?:[Zz]|[+-]\d\d(?::?\d\d)?)$"


@dataclass(frozen=True)
class BadTime:
    """The first value of a time column that is not an ISO 8601 time stamp: its
    ``position`` (row of the input, from 0), ``field`` and ``text``."""

    position: int
    field: str
    text: str
    numeric: bool = False

    @property
    def message(self) -> str:
        if self.numeric:
            return f"`{self.text}` is not a number, as the column's values before it are"
        return f"`{self.text}` is not an ISO 8601 time stamp of the years 1677 to 2262"


_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")  # what Arrow casts


def numeric_times(column: Any, field: str) -> Tuple[Optional[Any], Optional[BadTime]]:
    """A text column whose first value is a number (a CSV's numeric time column
    with a bad cell, which made pyarrow read the column as text) as numbers up to
    its first value that is not one, and that value; ``(None, None)`` for a column
    of other text (ISO 8601 time stamps)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    text = pc.if_else(pc.equal(column, ""), pa.scalar(None, column.type), column)
    present = pc.drop_null(text)
    if len(present) == 0 or not _NUMBER.match(present[0].as_py()):
        return None, None
    values = text.to_pylist()
    row = next((i for i, v in enumerate(values) if v is not None and not _NUMBER.match(v)), len(values))
    head = values[:row] + [None] * (len(values) - row)
    numbers = pa.array(head, pa.string())
    try:
        numbers = numbers.cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        try:
            numbers = numbers.cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None, None  # read as ISO 8601 text, which reports the bad value
    return numbers, (BadTime(row, field, values[row], numeric=True) if row < len(values) else None)


def iso_times(column: Any, field: str) -> Tuple[Any, Optional[BadTime]]:
    """A string column as ``timestamp[ns]`` (UTC, written without a zone as the
    row reader's ``numpy.datetime64`` values are), and its first bad value (whose
    row, and every row after it, holds NULL: the run stops before it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    text = pc.if_else(pc.equal(column, ""), pa.scalar(None, column.type), column)
    zoned = pc.fill_null(pc.match_substring_regex(text, _ZONE), False)
    try:
        return _cast(text, zoned), None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    values = text.to_pylist()
    for row, value in enumerate(values):
        if value is None:
            continue
        try:
            _cast(pa.array([value], column.type), pa.array([bool(zoned[row].as_py())]))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            head = pa.array(values[:row] + [None] * (len(values) - row), column.type)
            return _cast(head, zoned), BadTime(row, field, value)
    raise AssertionError("a column that fails to convert has a value that fails")  # pragma: no cover


def _cast(text: Any, zoned: Any) -> Any:
    """``text`` as UTC time stamps without a zone: converted from its offset where
    ``zoned``, else taken as UTC."""
    import pyarrow as pa
    import pyarrow.compute as pc

    utc = pa.timestamp("ns", tz="UTC")  # tz-aware to naive keeps the UTC instant
    none = pa.scalar(None, text.type)
    naive = pc.if_else(zoned, none, text).cast(pa.timestamp("ns"))
    with_zone = pc.if_else(zoned, text, none).cast(utc).cast(pa.timestamp("ns"))
    return pc.if_else(zoned, with_zone, naive)


def iso_times_of_values(values: List[Any]) -> List[Any]:
    """The same for a row reader's values (Python's ``json``): each ISO 8601 text
    becomes a ``numpy.datetime64`` in nanoseconds (the Python API reads those as
    time stamps) and an empty text None; other values, and text that is no time
    stamp, stay as they are, for the engine to judge at their own row."""
    import numpy as np
    import pyarrow as pa

    out = [None if v == "" else v for v in values]
    rows = [i for i, v in enumerate(out) if isinstance(v, str)]
    while rows:
        converted, bad = iso_times(pa.array([out[i] for i in rows], pa.string()), "")
        limit = bad.position if bad is not None else len(rows)
        ns = converted.cast(pa.int64()).to_pylist()
        for k in range(limit):
            out[rows[k]] = np.datetime64(ns[k], "ns")
        rows = rows[limit + 1:]  # a bad text stays text
    return out
