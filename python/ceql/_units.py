"""Time units of numeric time stamps: the one table of nanoseconds per unit, used by
``time_unit=`` (``Query.run`` and the others, the command line, ``ceql.spark``)
and by the conversion of numpy time values."""

from __future__ import annotations

#: Nanoseconds per unit of a numeric time field, in the order error messages list them.
TIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def time_unit_nanos(unit: str) -> int:
    """Nanoseconds per ``unit`` (a key of :data:`TIME_UNITS`); a ``ValueError``
    naming ``time_unit`` otherwise."""
    try:
        return TIME_UNITS[unit]
    except (KeyError, TypeError):
        raise ValueError(f"time_unit must be one of {', '.join(TIME_UNITS)}, not {unit!r}") from None
