"""Recognising what the user handed over: Arrow data, pandas frames or an iterable
of mappings."""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ._columns import pandas_to_arrow, records_to_arrow  # noqa: F401  (re-exported)
from .errors import CeqlEventError

TIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def time_unit_nanos(unit: str) -> int:
    """Nanoseconds per unit of a numeric time field."""
    try:
        return TIME_UNITS[unit]
    except KeyError:
        raise ValueError(f"time_unit must be one of {', '.join(TIME_UNITS)}, not {unit!r}") from None


def is_arrow(obj: Any) -> bool:
    """Anything exposing the Arrow PyCapsule stream interface (pyarrow, polars, ...)."""
    return hasattr(obj, "__arrow_c_stream__") and not is_pandas(obj)


def rereadable_arrow(obj: Any) -> Any:
    """Arrow data whose rows can be read again after the engine has consumed it, so
    that ``Match.events`` can find them: a pyarrow Table or RecordBatch as it is;
    anything else with ``__arrow_c_stream__`` (a polars DataFrame, a one-shot
    ``RecordBatchReader``) read into a pyarrow Table first, without copying the
    buffers of producers that share them."""
    if hasattr(obj, "take"):
        return obj
    import pyarrow as pa

    return pa.table(obj)


def checked_arrow(obj: Any, position: int) -> Any:
    """Arrow data for the engine, its column names checked (see
    :func:`refuse_duplicate_columns`): pyarrow Tables, RecordBatches and readers
    and polars DataFrames as they are (a polars frame with a Null column read
    into pyarrow first), any other ``__arrow_c_stream__`` producer
    opened as a pyarrow ``RecordBatchReader`` (no copy) so that its schema can be
    read before its rows."""
    module, name = type(obj).__module__, type(obj).__name__
    if module.startswith("polars") and name == "DataFrame":
        names = obj.columns
        if any(str(t) == "Null" for t in obj.dtypes):
            import pyarrow as pa

            # polars exports a Null column with a buffer, which the Arrow C data
            # import of arrow-rs refuses; pyarrow's import takes it (no copy).
            obj = pa.table(obj)
    else:
        if not (module.startswith("pyarrow") and name in ("Table", "RecordBatch", "RecordBatchReader")):
            import pyarrow as pa

            obj = pa.RecordBatchReader.from_stream(obj)
        names = obj.schema.names
    refuse_duplicate_columns(names, position)
    return obj


def known_rows(obj: Any) -> Any:
    """The number of rows of input whose length is known before it is read (a
    pyarrow Table or RecordBatch, a polars or pandas DataFrame, a list), else None
    (a ``RecordBatchReader`` or another Arrow stream)."""
    if isinstance(obj, (list, tuple)) or is_pandas(obj):
        return len(obj)
    module = type(obj).__module__
    if module.startswith("pyarrow") and type(obj).__name__ in ("Table", "RecordBatch"):
        return obj.num_rows
    if module.startswith("polars") and type(obj).__name__ == "DataFrame":
        return obj.height
    return None


POSITION_TYPES = ("uint32", "uint64")


def narrow_positions(data: Any, position_type: Any) -> bool:
    """Whether ``run_arrow`` output for ``data`` stores positions as uint32:
    ``position_type`` "uint32" or "uint64" as asked; None chooses uint32 when the
    input's length is known and every row number fits in it."""
    if position_type is None:
        rows = known_rows(data)
        return rows is not None and rows <= 2**32
    if position_type not in POSITION_TYPES:
        raise ValueError(f"position_type must be 'uint32', 'uint64' or None, not {position_type!r}")
    return position_type == "uint32"


def is_pandas(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pandas")


def pandas_records(frame: Any) -> list:
    """A pandas DataFrame as a list of dicts for the row-by-row path (frames whose
    columns Arrow cannot type). Missing markers (NaN, NaT, ``pd.NA``, ``None``)
    become ``None``, i.e. NULL, as they do when the frame goes through Arrow; the
    values of object columns are kept as they are (pandas' own ``to_dict`` would
    turn a numpy ``datetime64`` into a ``Timestamp``, or fail on it)."""
    names = list(frame.columns)
    if not names:
        return [{} for _ in range(len(frame))]
    columns = []
    for i in range(len(names)):
        col = frame.iloc[:, i]
        missing = col.isna().to_numpy()
        columns.append([None if m else v for v, m in zip(col.tolist(), missing)])
    return [dict(zip(names, row)) for row in zip(*columns)]


def refuse_duplicate_columns(names: Iterable[Any], position: int) -> None:
    """Raises :class:`CeqlEventError` (at ``position``, the first row of the
    input, naming the column) when ``names``, the columns of a pandas frame or
    Arrow data, has a name twice: which of the columns an attribute would be read
    from is not defined."""
    counts = Counter(str(n) for n in names)
    for name, n in counts.items():
        if n > 1:
            message = f"the input has {n} columns named `{name}`; column names must be unique"
            raise CeqlEventError(f"event at position {position}, field `{name}`: {message}", position=position,
                                 field=name, event_type=None, message=message)
