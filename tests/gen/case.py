"""A generated test case: query text (clause by clause), schema, options and events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .schemas import SCHEMA, SCHEMA_MULTI, SCHEMA_PRIMARY_TIME


@dataclass
class Case:
    text: str
    events: List[Dict[str, Any]]
    schema: Optional[str]
    time_field: Optional[str]
    time_unit: str
    tree: Any = None  # intended formula tree
    window: Optional[str] = None  # "events" | "attr" | "time" | None
    clauses: Dict[str, str] = field(default_factory=dict)  # text pieces, see CLAUSE_ORDER
    late: Optional[str] = None  # engine option late= ("drop": backwards time stamps are dropped)
    compat: bool = False  # compile(..., compat_ignore_strategy=True): strategies evaluated as ALL

    def run_kwargs(self) -> Dict[str, Any]:
        """Keyword arguments of the oracle's evaluate()."""
        kw: Dict[str, Any] = {"time_unit": self.time_unit}
        if self.time_field is not None:
            kw["time_field"] = self.time_field
        return kw

    def engine_kwargs(self) -> Dict[str, Any]:
        """Keyword arguments of Query.run() / Query.stream()."""
        kw = self.run_kwargs()
        if self.late is not None:
            kw["late"] = self.late
        return kw

    def __repr__(self) -> str:
        lines = ["Case(", "  text=%r," % self.text]
        names = {SCHEMA: "SCHEMA", SCHEMA_PRIMARY_TIME: "SCHEMA_PRIMARY_TIME", SCHEMA_MULTI: "SCHEMA_MULTI",
                 None: "None"}
        lines.append("  schema=%s," % names.get(self.schema, repr(self.schema)))
        lines.append("  time_field=%r, time_unit=%r, late=%r, compat=%r," % (
            self.time_field, self.time_unit, self.late, self.compat))
        lines.append("  events=[")
        for e in self.events:
            lines.append("    %r," % (e,))
        lines.append("  ])")
        return "\n".join(lines)


CLAUSE_ORDER = ("head", "where", "partition", "window", "consume", "limit")


def join_clauses(clauses) -> str:
    return "".join(clauses[c] for c in CLAUSE_ORDER if c in clauses)
