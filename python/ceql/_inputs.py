"""Recognising what the user handed over: Arrow data, pandas frames or an iterable
of mappings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def records_to_arrow(rows: list) -> Any:
    """A list of event mappings as a pyarrow Table with a column for every key met
    in any event (missing keys are nulls), or ``None`` when that is not possible:
    an event that is not a mapping, or a field whose values Arrow cannot put in one
    column (``1`` in one event and ``"a"`` in another)."""
    import pyarrow as pa

    if not all(isinstance(r, Mapping) for r in rows):
        return None
    keys = list(dict.fromkeys(k for r in rows for k in r))
    try:
        return pa.table({k: pa.array([r.get(k) for r in rows]) for k in keys}) if keys else None
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError, ValueError):
        return None


def pandas_records(frame: Any) -> list:
    """A pandas DataFrame as a list of dicts for the row-by-row path (frames whose
    columns Arrow cannot type). Missing markers (NaN, NaT, ``pd.NA``, ``None``)
    become ``None``, i.e. NULL, as they do when the frame goes through Arrow."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def pandas_to_arrow(frame: Any) -> Any:
    """Converts a pandas DataFrame to a pyarrow Table, or ``None`` if its columns
    cannot be typed (mixed object columns); the caller then reads it row by row."""
    try:
        import pyarrow as pa

        return pa.Table.from_pandas(frame, preserve_index=False)
    except Exception:  # pyarrow missing, or an object column with mixed types
        return None
