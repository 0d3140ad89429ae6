"""Python values → Arrow columns, exactly or not at all.

pyarrow's type inference unifies what the engine keeps apart: ``[1, 2.5]``
becomes a double column (so ``x / 2`` turns into float division and the keys
``1`` and ``1.0`` merge), ``[1, np.float16(2.5)]`` an integer column holding 2,
``[1, np.True_]`` an integer column. The columnar paths (``run_arrow``,
``run_arrow_batches``, pandas frames) must give the answer of the row-by-row
path, which reads each value's own type. So a column is built only when every
value of it has one engine type (NULLs aside) that Arrow stores exactly;
otherwise the caller reads the events row by row.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Optional, Sequence

#: Engine kinds of the Python types Arrow stores exactly. ``None`` is NULL.
_BUILTIN_KINDS: Dict[type, Optional[str]] = {
    type(None): None,
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    _dt.datetime: "datetime",
    _dt.date: "date",
    _dt.timedelta: "timedelta",
}
_OTHER = "other"
_kind_cache: Dict[type, Optional[str]] = dict(_BUILTIN_KINDS)


def _kind(t: type) -> Optional[str]:
    """The kind of values of type ``t``: a ``_BUILTIN_KINDS`` kind, or ``_OTHER``
    for types read row by row (pandas and numpy time values, which carry
    nanoseconds or units pyarrow does not keep; ``longdouble``, which may not be
    a double; anything else)."""
    try:
        return _kind_cache[t]
    except KeyError:
        pass
    kind = _OTHER
    if t.__module__.startswith("numpy"):
        import numpy as np

        if issubclass(t, np.bool_):
            kind = "bool"
        elif issubclass(t, (np.timedelta64, np.datetime64)):
            kind = _OTHER  # timedelta64 is an np.integer, but its count has a unit
        elif issubclass(t, np.integer):
            kind = "int"
        elif issubclass(t, (np.float16, np.float32, np.float64)):
            kind = "float"
        elif issubclass(t, np.str_):
            kind = "str"
    _kind_cache[t] = kind
    return kind


def exact_array(values: List[Any], reserved: bool = False) -> Any:
    """``values`` (``None`` for NULL) as a pyarrow Array whose values the engine
    reads exactly as it reads the Python values, or ``None`` when no such column
    exists: values of several kinds, a kind Arrow does not store exactly, an
    integer outside 64 bits, naive and aware datetimes together. ``reserved``:
    the column is the type field or ``stream``, which must hold strings."""
    import pyarrow as pa

    types = set(map(type, values))
    kinds = {_kind(t) for t in types} - {None}
    if len(kinds) > 1 or _OTHER in kinds or (reserved and kinds - {"str"}):
        return None
    kind = next(iter(kinds), None)
    plain = types <= set(_BUILTIN_KINDS)
    try:
        if kind is None:
            return pa.nulls(len(values))
        if kind == "int":
            return pa.array(values if plain else [None if v is None else int(v) for v in values], pa.int64())
        if kind == "float":
            return pa.array(values if plain else [None if v is None else float(v) for v in values], pa.float64())
        if kind == "bool":
            return pa.array(values if plain else [None if v is None else bool(v) for v in values], pa.bool_())
        if kind == "str":
            return pa.array(values, pa.string())
        if kind == "datetime" and len({v.tzinfo is None for v in values if v is not None}) > 1:
            return None  # naive (UTC) and aware values: no one Arrow type holds both
        return pa.array(values)  # datetime, date, timedelta: microseconds, kept exactly
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return None


def records_to_arrow(rows: list, reserved: Sequence[str] = ("type", "stream")) -> Any:
    """A list of event mappings as a pyarrow Table with a column for every key met
    in any event (missing keys are nulls), or ``None`` when that is not possible
    without changing a value (see :func:`exact_array`) or an event is not a
    mapping: the caller then reads the events row by row. ``reserved``: the fields
    that must hold text (the type field and ``stream``)."""
    import pyarrow as pa
    from collections.abc import Mapping

    if not rows or not all(isinstance(r, Mapping) for r in rows):
        return None
    keys = list(dict.fromkeys(k for r in rows for k in r))
    if not all(isinstance(k, str) for k in keys):
        return None
    columns = {}
    for k in keys:
        array = exact_array([r.get(k) for r in rows], reserved=k in reserved)
        if array is None:
            return None
        columns[k] = array
    return pa.table(columns)


def pandas_to_arrow(frame: Any, reserved: Sequence[str] = ("type", "stream")) -> Any:
    """A pandas DataFrame as a pyarrow Table, or ``None`` when an object column
    cannot be typed exactly (see :func:`exact_array`): the caller then reads the
    frame row by row. Typed columns go through pyarrow (NaN, NaT and ``pd.NA``
    are NULL, as in :func:`ceql._inputs.pandas_records`); object columns are
    typed by their values; ``reserved`` as for :func:`records_to_arrow`."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    arrays = []
    for i, name in enumerate(frame.columns):
        col = frame.iloc[:, i]
        if col.dtype == object:
            missing = col.isna().to_numpy()
            values = [None if m else v for v, m in zip(col.tolist(), missing)]
            array = exact_array(values, reserved=name in reserved)
        else:
            try:
                array = widened_array(pa.Array.from_pandas(col))
            except (pa.ArrowException, OverflowError, TypeError, ValueError):
                array = None
        if array is None:
            return None
        arrays.append(array)
    return pa.Table.from_arrays(arrays, names=[str(n) for n in frame.columns])


def without_float16(data: Any) -> Any:
    """Arrow data (a pyarrow Table, RecordBatch or RecordBatchReader) with every
    half-float column, also inside lists and structs, cast to double: exactly, as
    ``np.float16`` values are read as Python floats; and dictionary-encoded numbers
    (or other non-string values) decoded. The engine has neither; other data, and
    data without any, is returned as it is."""
    import pyarrow as pa

    if not isinstance(data, (pa.Table, pa.RecordBatch, pa.RecordBatchReader)):
        return data
    schema = data.schema
    try:
        wide = pa.schema([f.with_type(_widened(f.type)) for f in schema], metadata=schema.metadata)
    except RecursionError:  # a type nested too deeply for anyone: the engine says so
        return data
    if wide.equals(schema):
        return data
    if isinstance(data, pa.RecordBatchReader):
        return pa.RecordBatchReader.from_batches(wide, (batch.cast(wide) for batch in data))
    return data.cast(wide)


def widened_array(array: Any) -> Any:
    """A pyarrow Array with half floats cast to double (see :func:`without_float16`)."""
    wide = _widened(array.type)
    return array if wide.equals(array.type) else array.cast(wide)


def _is_text(t: Any) -> bool:
    """Whether ``t`` is a string type (string views exist from pyarrow 16 on)."""
    import pyarrow as pa

    is_view = getattr(pa.types, "is_string_view", lambda _: False)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or is_view(t)


def _widened(t: Any) -> Any:
    """``t`` with float16 replaced by float64, in lists and structs too, and a
    dictionary of other values than strings (a pandas ``Categorical`` of numbers)
    replaced by its values' type: the engine reads dictionaries of strings only."""
    import pyarrow as pa

    if pa.types.is_float16(t):
        return pa.float64()
    if pa.types.is_dictionary(t) and not _is_text(t.value_type):
        return _widened(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        value = t.value_field.with_type(_widened(t.value_type))
        if pa.types.is_fixed_size_list(t):
            return pa.list_(value, t.list_size)
        return pa.large_list(value) if pa.types.is_large_list(t) else pa.list_(value)
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_widened(f.type)) for f in t])
    return t
