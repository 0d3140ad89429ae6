"""What the Spark glue needs to know about a query: the clauses that decide how
it is distributed, read from the compiled query (``Query.describe()``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Optional, Tuple


@dataclass(frozen=True)
class QueryPlan:
    """The facts of a compiled query that decide how Spark distributes it."""

    text: str
    schema: Optional[str]
    key_groups: Tuple[Tuple[str, ...], ...]
    consume: str
    window: str  # "unbounded" | "events" | "duration" | "attribute"
    window_n: int  # events for "events", nanoseconds for "duration", n for "attribute"
    window_attr: Optional[str]
    attributes: Tuple[str, ...]
    query_hash: bytes = field(repr=False)

    @property
    def partitioned(self) -> bool:
        return bool(self.key_groups)

    @property
    def global_order(self) -> bool:
        """True when the query's result depends on the events of other partitions:
        ``WITHIN n EVENTS`` counts global positions and ``CONSUME BY ANY`` resets
        every partition (§3.7, §3.10). Such a query cannot be split by key: it is
        evaluated in one group, with ``PARTITION BY`` done inside the engine."""
        return self.partitioned and (self.window == "events" or self.consume == "ANY")

    @property
    def split_by_key(self) -> bool:
        return self.partitioned and not self.global_order


def plan_of(query: Any, schema: Optional[str]) -> QueryPlan:
    """Compiles (or takes) the query and reads the clauses the glue needs."""
    import ceql

    if isinstance(query, ceql.Query):
        q, text, schema = query, query.text, query.schema
    else:
        text = str(query)
        q = ceql.compile(text, schema)
    d = q.describe()
    h = hashlib.sha256()
    h.update(text.encode())
    h.update(b"\x00")
    h.update((schema or "").encode())
    return QueryPlan(
        text=text,
        schema=schema,
        key_groups=tuple(tuple(g) for g in d["partition_by"]),
        consume=d["consume"],
        window=d["window"],
        window_n=d["window_n"],
        window_attr=d["window_attr"],
        attributes=tuple(d["attributes"]),
        query_hash=h.digest(),
    )
