"""The evaluation options of ``Query.run``, ``run_arrow``, ``run_arrow_batches``,
``stream`` and the command line, validated in one place."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from . import _ceql
from ._units import duration_nanos, time_unit_nanos

if TYPE_CHECKING:
    from .query import Query

_LATE = ("error", "drop")
#: The memory budgets: ``None`` (the engine's default) or a positive integer.
BUDGETS = ("max_cache_bytes", "max_det_states", "max_state_bytes")


@dataclass(frozen=True)
class RunOptions:
    """How one evaluation reads its events and how much memory it may use (see
    ``Query.run`` for each option). Making one validates every option: a bad
    value is a ``ValueError`` naming its argument, raised before any event is read.
    Budgets given as numpy integers are stored as ints."""

    time_field: Optional[str] = None
    time_unit: str = "ns"
    late: str = "error"
    max_cache_bytes: Optional[int] = None
    max_det_states: Optional[int] = None
    max_state_bytes: Optional[int] = None
    #: Reorder buffer bound (``None``: none), given as seconds, a timedelta or text; stored in nanoseconds.
    max_delay: Optional[Any] = None
    captures: bool = False
    #: The field holding the event type (docs/api.md, "Input events: the `type` field").
    type_field: str = "type"

    def __post_init__(self) -> None:
        if self.late not in _LATE:
            raise ValueError(f"late must be 'error' or 'drop', not {self.late!r}")
        check_type_field(self.type_field)
        if not isinstance(self.captures, bool):
            raise ValueError(f"captures must be True or False, not {self.captures!r}")
        for name in BUDGETS:
            object.__setattr__(self, name, _budget(name, getattr(self, name)))
        time_unit_nanos(self.time_unit)
        if self.max_delay is not None:
            object.__setattr__(self, "max_delay", duration_nanos(self.max_delay, "max_delay"))

    def runtime(self, query: "Query") -> "_ceql.NativeRuntime":
        """A new evaluation of ``query`` with these options."""
        return _ceql.NativeRuntime(
            query._native,
            time_field=self.time_field,
            time_unit_nanos=time_unit_nanos(self.time_unit),
            late_drop=self.late == "drop",
            max_delay=self.max_delay,
            captures=self.captures,
            type_field=self.type_field,
            **{name: getattr(self, name) for name in BUDGETS},
        )


def check_type_field(name: Any) -> None:
    """``type_field``: the name of a field, not ``stream`` (which names the event's
    stream, docs/language.md#s1-2); a ``ValueError`` otherwise."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"type_field must be a field name (a non-empty string), not {name!r}")
    if name == "stream":
        raise ValueError("type_field cannot be 'stream': that field names the stream an event belongs to")


def reserved_fields(type_field: str) -> tuple:
    """The fields that must hold text when present: the type field and ``stream``."""
    return (type_field, "stream")


def _budget(name: str, value: Any) -> Optional[int]:
    """A memory budget (``max_cache_bytes``, ``max_det_states``,
    ``max_state_bytes``) as an int: None (the default) or a positive integer below
    2^64; anything else is a ``ValueError`` naming the argument (a budget of 0
    holds no state, so no event could be evaluated)."""
    if value is None:
        return None
    try:
        n = operator.index(value)  # int, numpy integers
    except TypeError:
        n = -1
    if isinstance(value, bool) or not 0 < n < 2**64:
        raise ValueError(f"{name} must be None or a positive integer below 2**64, not {value!r}")
    return n
