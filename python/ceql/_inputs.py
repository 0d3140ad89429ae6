"""Recognising what the user handed over: Arrow data, pandas frames or an iterable
of mappings."""

from __future__ import annotations

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


def is_pandas(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pandas")


def pandas_to_arrow(frame: Any) -> Any:
    """Converts a pandas DataFrame to a pyarrow Table, or ``None`` if its columns
    cannot be typed (mixed object columns); the caller then reads it row by row."""
    try:
        import pyarrow as pa

        return pa.Table.from_pandas(frame, preserve_index=False)
    except Exception:  # pyarrow missing, or an object column with mixed types
        return None
