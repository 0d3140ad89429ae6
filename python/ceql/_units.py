"""Time units of numeric time stamps: the one table of nanoseconds per unit, used by
``time_unit=`` (``Query.run`` and the others, the command line, ``ceql.spark``)
and by the conversion of numpy time values."""

from __future__ import annotations

import datetime as _dt
import math
import numbers
import re
from fractions import Fraction

#: Nanoseconds per unit of a numeric time field, in the order error messages list them.
TIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def time_unit_nanos(unit: str) -> int:
    """Nanoseconds per ``unit`` (a key of :data:`TIME_UNITS`); a ``ValueError``
    naming ``time_unit`` otherwise."""
    try:
        return TIME_UNITS[unit]
    except (KeyError, TypeError):
        raise ValueError(f"time_unit must be one of {', '.join(TIME_UNITS)}, not {unit!r}") from None


#: Nanoseconds per unit of a duration string (``"10 seconds"``), the words of the
#: query language's ``WITHIN`` durations and their short forms.
DURATION_UNITS = {
    "ns": 1, "nanosecond": 1, "nanoseconds": 1,
    "us": 1_000, "microsecond": 1_000, "microseconds": 1_000,
    "ms": 1_000_000, "millisecond": 1_000_000, "milliseconds": 1_000_000,
    "s": 1_000_000_000, "sec": 1_000_000_000, "second": 1_000_000_000, "seconds": 1_000_000_000,
    "min": 60_000_000_000, "minute": 60_000_000_000, "minutes": 60_000_000_000,
    "h": 3_600_000_000_000, "hour": 3_600_000_000_000, "hours": 3_600_000_000_000,
    "d": 86_400_000_000_000, "day": 86_400_000_000_000, "days": 86_400_000_000_000,
}
_COMPONENT = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]+)\s*")


def duration_nanos(value: object, name: str) -> int:
    """A duration as whole nanoseconds: a number of seconds (int or float), a
    ``datetime.timedelta``, or text such as ``"10 seconds"`` or ``"1 minute 30
    seconds"`` (units of :data:`DURATION_UNITS`, case-insensitive). A negative,
    NaN or infinite duration, or one beyond 2^63 - 1 ns, is a ``ValueError`` naming
    ``name``. Text and integers are read exactly (fractions of a nanosecond cut);
    a float of seconds is rounded to the nearest nanosecond."""
    def bad(why: str) -> ValueError:
        return ValueError(f"{name} must be a duration (seconds, a timedelta or text like '10 seconds'): {why}")

    if isinstance(value, _dt.timedelta):
        ns = (value.days * 86_400 + value.seconds) * 1_000_000_000 + value.microseconds * 1_000
    elif isinstance(value, str):
        text, ns, end = value.strip(), Fraction(0), 0
        for m in _COMPONENT.finditer(text):
            if m.start() != end:
                break
            unit = DURATION_UNITS.get(m.group(2).lower())
            if unit is None:
                raise bad(f"unknown unit {m.group(2)!r} in {value!r} (use {', '.join(sorted(set(TIME_UNITS)))}, "
                          "seconds, minutes, hours, days)")
            ns += Fraction(m.group(1)) * unit  # exact: "129.944532029 s" is 129944532029 ns
            end = m.end()
        if not text or end != len(text):
            raise bad(f"cannot read {value!r}")
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        ns = int(value) * 1_000_000_000
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        exact = isinstance(value, numbers.Rational)
        if not exact:  # float, numpy floats: as a double
            value = float(value)
            if math.isnan(value) or math.isinf(value):
                raise bad(f"{value!r} is not finite")
        # A float of seconds has no exact nanoseconds: the nearest one (129.944532029
        # is 129944532028.99999 ns in binary).
        ns = Fraction(value) * 1_000_000_000
        ns = ns if exact else round(ns)
    else:
        raise bad(f"not {type(value).__name__}")
    if ns < 0:
        raise bad(f"{value!r} is negative")
    if ns >= 2**63:
        raise bad(f"{value!r} is longer than 2^63 nanoseconds (292 years)")
    return int(ns)  # toward zero
