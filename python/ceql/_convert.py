"""Conversions the native layer delegates to Python: date/time values → nanoseconds."""

from __future__ import annotations

import datetime as _dt
from typing import Any

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


class Missing:
    """What :func:`to_nanos` returns for a missing value (pandas ``NA``/``NaT``,
    numpy ``NaT``): the native layer reads it as NULL."""


MISSING = Missing()


def to_nanos(value: Any) -> Any:
    """Nanoseconds since the Unix epoch for datetime-like values, :data:`MISSING`
    for missing markers, else ``None``.

    Naive datetimes are taken as UTC. pandas ``Timestamp`` and ``Timedelta`` keep
    their nanoseconds; numpy ``datetime64``/``timedelta64`` are converted through
    their unit; ``timedelta`` gives its length.
    """
    kind = type(value).__name__
    if kind in ("NAType", "NaTType"):
        return MISSING
    nanos = getattr(value, "value", None)
    if isinstance(nanos, int) and kind in ("Timestamp", "Timedelta"):
        return nanos
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
        delta = aware - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    if isinstance(value, _dt.date):
        return to_nanos(_dt.datetime(value.year, value.month, value.day))
    if isinstance(value, _dt.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000_000 + value.microseconds * 1_000
    if kind in ("datetime64", "timedelta64"):
        if value != value:  # NaT
            return MISSING
        return int(value.astype(f"{kind}[ns]").astype("int64"))
    return None
