"""Recognising what the user handed over, in one place: :func:`classify` tells
Arrow data, pandas frames, sequences and other iterables of mappings apart, and
the functions below prepare each kind for the row-wise pushes
(:func:`for_push`) or for the columnar output paths (:func:`for_columns`)."""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence, Tuple

from ._columns import pandas_to_arrow, records_to_arrow, without_float16
from ._sources import ArrowSource, ListSource
from .errors import CeqlEventError


class Kind(enum.Enum):
    """The kinds of input the evaluation paths tell apart."""

    #: Anything exposing the Arrow PyCapsule stream interface (pyarrow Tables,
    #: RecordBatches and readers, polars DataFrames, ...), pandas frames aside.
    ARROW = "arrow"
    #: A pandas DataFrame.
    PANDAS = "pandas"
    #: A list or tuple of mappings: its length is known and it can be read again.
    SEQUENCE = "sequence"
    #: Any other iterable of mappings (a generator, say): read once, lazily.
    ITERABLE = "iterable"


def classify(events: Any) -> Kind:
    """The :class:`Kind` of ``events``. pandas frames are recognised first: recent
    pandas versions also expose ``__arrow_c_stream__``, but a frame is converted
    with :func:`pandas_to_arrow`, which keeps its values exact."""
    if is_pandas(events):
        return Kind.PANDAS
    if hasattr(events, "__arrow_c_stream__"):
        return Kind.ARROW
    if isinstance(events, (list, tuple)):
        return Kind.SEQUENCE
    return Kind.ITERABLE


@dataclass(frozen=True)
class Pushable:
    """Events ready for one row-wise push of the native runtime: ``table``, Arrow
    data that can be read again (for ``push_arrow``), or else ``rows``, a
    sequence of mappings (for ``push_events``)."""

    table: Any = None
    rows: Any = None

    def source(self, offset: int = 0) -> Any:
        """Where ``Match.events`` reads these events back, the first at ``offset``."""
        if self.table is not None:
            return ArrowSource(self.table, offset=offset)
        return ListSource(self.rows, offset=offset)

    def push(self, runtime: Any, source: Any) -> Any:
        """Pushes the events into ``runtime`` (a ``NativeRuntime``); returns its matches."""
        if self.table is not None:
            return runtime.push_arrow(self.table, source)
        return runtime.push_events(self.rows, source)


def for_push(events: Any, kind: Kind, position: int, reserved: Sequence[str] = ("type", "stream")) -> Pushable:
    """``events`` (of ``kind``, not :attr:`Kind.ITERABLE`) for a row-wise push whose
    first event gets ``position``: Arrow data read into a pyarrow Table when it
    could not be read twice (:func:`rereadable_arrow`); a pandas frame as a
    pyarrow Table, or as records when Arrow cannot type its columns; a sequence
    as it is. Duplicate column names raise :class:`CeqlEventError` at ``position``.
    ``reserved``: the fields that must hold text (the type field and ``stream``)."""
    if kind is Kind.ARROW:
        table = rereadable_arrow(events)
        refuse_duplicate_columns(table.schema.names, position)
        refuse_deep_types(table.schema, position)
        return Pushable(table=table)
    if kind is Kind.PANDAS:
        refuse_duplicate_columns(events.columns, position)
        table = pandas_to_arrow(events, reserved)
        return Pushable(table=table) if table is not None else Pushable(rows=pandas_records(events))
    if kind is Kind.SEQUENCE:
        return Pushable(rows=events)
    raise TypeError(
        f"a {type(events).__name__} is not a batch of events (Arrow data, a pandas DataFrame, a list or a tuple); "
        "push an iterable of events with Stream.push_many")


def for_columns(events: Any, reserved: Sequence[str] = ("type", "stream")) -> Tuple[Optional[Any], Optional[Any]]:
    """``events`` for the columnar paths (``run_arrow``, ``run_arrow_batches``):
    ``(data, None)`` with Arrow data (Arrow objects as they are, see
    :func:`checked_arrow`; pandas frames and iterables of mappings converted
    with pyarrow), or ``(None, rows)`` when Arrow cannot type the events (a column
    mixing value types, say): the caller then evaluates ``rows`` (the pandas frame,
    or the mappings as a list) row by row. ``reserved`` as for :func:`for_push`."""
    kind = classify(events)
    if kind is Kind.ARROW:
        return checked_arrow(events, 0), None
    if kind is Kind.PANDAS:
        refuse_duplicate_columns(events.columns, 0)
        table = pandas_to_arrow(events, reserved)
        return (table, None) if table is not None else (None, events)
    rows = list(events)
    table = records_to_arrow(rows, reserved)
    return (table, None) if table is not None else (None, rows)


def record_batches(data: Any) -> Iterable[Any]:
    """The pyarrow RecordBatches of ``data``, Arrow data from :func:`for_columns`:
    a RecordBatch itself, a Table's batches, a reader as it is (read as the
    batches are iterated), anything else read into a pyarrow Table first."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        return [data]
    if isinstance(data, pa.RecordBatchReader):
        return data
    if not isinstance(data, pa.Table):
        data = pa.table(data)
    return data.to_batches()


def rereadable_arrow(obj: Any) -> Any:
    """Arrow data whose rows can be read again after the engine has consumed it, so
    that ``Match.events`` can find them, half floats cast to double
    (:func:`ceql._columns.without_float16`): a pyarrow Table or RecordBatch as it is;
    anything else with ``__arrow_c_stream__`` (a polars DataFrame, a one-shot
    ``RecordBatchReader``) read into a pyarrow Table first, without copying the
    buffers of producers that share them."""
    if hasattr(obj, "take"):
        return without_float16(obj)
    import pyarrow as pa

    return without_float16(pa.table(obj))


def checked_arrow(obj: Any, position: int) -> Any:
    """Arrow data for the engine, its column names checked (see
    :func:`refuse_duplicate_columns`) and its half floats cast to double
    (:func:`ceql._columns.without_float16`): pyarrow Tables, RecordBatches and readers
    and polars DataFrames as they are (a polars frame with a Null or Float16 column read
    into pyarrow first), any other ``__arrow_c_stream__`` producer
    opened as a pyarrow ``RecordBatchReader`` (no copy) so that its schema can be
    read before its rows."""
    module, name = type(obj).__module__, type(obj).__name__
    if module.startswith("polars") and name == "DataFrame":
        names = obj.columns
        if any(str(t) in ("Null", "Float16") for t in obj.dtypes):
            import pyarrow as pa

            # polars exports a Null column with a buffer, which the Arrow C data
            # import of arrow-rs refuses; pyarrow's import takes it (no copy).
            obj = without_float16(pa.table(obj))
    else:
        if not (module.startswith("pyarrow") and name in ("Table", "RecordBatch", "RecordBatchReader")):
            import pyarrow as pa

            obj = pa.RecordBatchReader.from_stream(obj)
        obj = without_float16(obj)
        names = obj.schema.names
        refuse_deep_types(obj.schema, position)
    refuse_duplicate_columns(names, position)
    return obj


def known_rows(obj: Any) -> Any:
    """The number of rows of input whose length is known before it is read (a
    pyarrow Table or RecordBatch, a polars or pandas DataFrame, a list), else None
    (a ``RecordBatchReader`` or another Arrow stream)."""
    kind = classify(obj)
    if kind in (Kind.SEQUENCE, Kind.PANDAS):
        return len(obj)
    if kind is Kind.ARROW:
        module, name = type(obj).__module__, type(obj).__name__
        if module.startswith("pyarrow") and name in ("Table", "RecordBatch"):
            return obj.num_rows
        if module.startswith("polars") and name == "DataFrame":
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


#: Deepest nesting of list, struct and map types in an Arrow column that ceql
#: accepts: the Arrow C data import recurses once per level, and 200 levels are
#: enough to overflow a 256 KiB thread's stack. The CLI's value limit is the same.
MAX_TYPE_DEPTH = 64


def refuse_deep_types(schema: Any, position: int) -> None:
    """Raises :class:`CeqlEventError` naming the column when a column of the Arrow
    ``schema`` nests types more than :data:`MAX_TYPE_DEPTH` levels deep (walked
    without recursion, so that the check itself is safe on a small stack)."""
    for field in schema:
        stack = [(field.type, 1)]
        while stack:
            t, depth = stack.pop()
            if depth > MAX_TYPE_DEPTH:
                message = f"the column's type nests more than {MAX_TYPE_DEPTH} levels deep"
                raise CeqlEventError(f"event at position {position}, field `{field.name}`: {message}",
                                     position=position, field=field.name, event_type=None, message=message)
            stack.extend((t.field(i).type, depth + 1) for i in range(t.num_fields))
