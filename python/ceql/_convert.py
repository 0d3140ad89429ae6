"""Conversions the native layer delegates to Python: values that are not plain
``None``/``bool``/``int``/``float``/``str`` (numpy and pandas scalars, dates,
times and durations), mapped exactly or refused, never silently changed."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Tuple

from ._units import TIME_UNITS

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

#: Nanoseconds per unit of numpy ``datetime64``/``timedelta64`` values, for the
#: units of a fixed length (``Y`` and ``M`` are calendar units, handled apart):
#: weeks to minutes, then the units of :data:`ceql._units.TIME_UNITS`.
_NUMPY_UNIT_NANOS = {
    "W": 7 * 86_400 * TIME_UNITS["s"],
    "D": 86_400 * TIME_UNITS["s"],
    "h": 3_600 * TIME_UNITS["s"],
    "m": 60 * TIME_UNITS["s"],
    **TIME_UNITS,
    "generic": 1,  # a unit-less count, as numpy's own ``astype('[ns]')`` reads it
}
#: Units finer than a nanosecond: ``value // divisor`` nanoseconds.
_NUMPY_SUB_NANOS = {"ps": 10**3, "fs": 10**6, "as": 10**9}


class Missing:
    """What :func:`to_nanos` returns for a missing value (pandas ``NA``/``NaT``,
    numpy ``NaT``): the native layer reads it as NULL."""


MISSING = Missing()


def to_engine(value: Any) -> Tuple[str, Any]:
    """The engine value of an attribute value the native layer does not map itself,
    as ``(kind, payload)``: ``("null", None)``, ``("bool", b)``, ``("int", i)``
    (a Python int, which the native layer refuses outside 64 bits),
    ``("float", f)`` or ``("time", nanoseconds)`` (a Python int, refused outside
    64 bits). Raises ``ValueError`` with a message for values that have no exact
    engine value: numpy complex numbers, ``Decimal``, a ``longdouble`` that is not
    a double, a duration in months or years, or any other type."""
    nanos = to_nanos(value)
    if nanos is MISSING:
        return ("null", None)
    if nanos is not None:
        return ("time", nanos)
    kind = _numpy_kind(value)
    if kind == "bool":
        return ("bool", bool(value))
    if kind == "int":
        return ("int", int(value))
    if kind == "float":
        f = float(value)
        if f == f and f != value:  # a longdouble that no double equals
            raise ValueError(f"the {type(value).__name__} value {value} is not exactly a 64-bit float")
        return ("float", f)
    if kind is None and not isinstance(value, (bool, float, complex)) and hasattr(value, "__index__"):
        try:
            return ("int", value.__index__())  # integer-like scalars of other libraries
        except (TypeError, ValueError):
            pass  # not an integer after all; any other exception is the value's own, re-raised
    raise ValueError(f"unsupported value of type {type(value).__name__}")


def _numpy_kind(value: Any) -> Any:
    """``"bool"``, ``"int"``, ``"float"`` for numpy scalars of those kinds (numpy
    is only looked at if the value comes from it), else None."""
    if not type(value).__module__.startswith("numpy"):
        return None
    import numpy as np

    if isinstance(value, np.bool_):
        return "bool"
    if isinstance(value, np.integer):
        return "int"
    if isinstance(value, np.floating):
        return "float"
    return None


def to_nanos(value: Any) -> Any:
    """Nanoseconds since the Unix epoch (a Python int, possibly outside 64 bits)
    for datetime-like values and the length in nanoseconds of durations,
    :data:`MISSING` for missing markers, else ``None``.

    Naive datetimes are taken as UTC. pandas ``Timestamp`` and ``Timedelta`` keep
    their nanoseconds; numpy ``datetime64``/``timedelta64`` are converted exactly
    from their unit (never through numpy's wrapping ``astype('[ns]')``); a
    ``timedelta`` gives its length. Raises ``ValueError`` for a ``timedelta64`` in
    months or years, which has no fixed length.
    """
    kind = type(value).__name__
    if kind in ("NAType", "NaTType"):
        return MISSING
    if kind in ("datetime64", "timedelta64") and type(value).__module__.startswith("numpy"):
        return _numpy_nanos(value, kind)
    if kind in ("Timestamp", "Timedelta"):
        try:
            nanos = value.value  # pandas: exact nanoseconds
        except (OverflowError, ValueError):  # a non-nanosecond unit beyond the range
            nanos = None
        if isinstance(nanos, int):
            return nanos
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
        delta = aware - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    if isinstance(value, _dt.date):
        return to_nanos(_dt.datetime(value.year, value.month, value.day))
    if isinstance(value, _dt.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000_000 + value.microseconds * 1_000
    return None


def _numpy_nanos(value: Any, kind: str) -> Any:
    """Exact nanoseconds of a numpy ``datetime64``/``timedelta64`` (``kind``)."""
    import numpy as np

    if np.isnat(value):
        return MISSING
    unit, count = np.datetime_data(value.dtype)
    if unit in ("Y", "M"):
        if kind == "timedelta64":
            raise ValueError(f"a timedelta64 in {'years' if unit == 'Y' else 'months'} has no fixed length in nanoseconds")
        raw = int(value.astype("int64")) * count
        if abs(raw) > (1_000 if unit == "Y" else 12_000):
            # Far outside the years 1677-2262 that 64-bit nanoseconds cover (where
            # numpy's own conversion to days would wrap): any such count will do.
            return raw * 366 * _NUMPY_UNIT_NANOS["D"]
        value = value.astype("datetime64[D]")  # exact for these years
        unit, count = "D", 1
    raw = int(value.astype("int64"))
    if unit in _NUMPY_SUB_NANOS:
        return raw * count // _NUMPY_SUB_NANOS[unit]
    return raw * count * _NUMPY_UNIT_NANOS[unit]
