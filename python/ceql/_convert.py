"""Conversions the native layer delegates to Python: date/time values → nanoseconds."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def to_nanos(value: Any) -> Optional[int]:
    """Nanoseconds since the Unix epoch for datetime-like values, else ``None``.

    Naive datetimes are taken as UTC. pandas ``Timestamp`` keeps its nanoseconds;
    numpy ``datetime64`` is converted through its unit; ``timedelta`` gives its length.
    """
    nanos = getattr(value, "value", None)
    if isinstance(nanos, int) and type(value).__name__ == "Timestamp":
        return nanos
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)
        delta = aware - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    if isinstance(value, _dt.date):
        return to_nanos(_dt.datetime(value.year, value.month, value.day))
    if isinstance(value, _dt.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000_000 + value.microseconds * 1_000
    if type(value).__name__ == "datetime64":
        return int(value.astype("datetime64[ns]").astype("int64"))
    return None
