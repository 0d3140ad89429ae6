"""What the Spark glue needs to know about a query, read from the compiled query
(``Query.describe()``): the clauses that decide how it is distributed, and the
seed of its ``match_id``."""

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
    window: str  # "unbounded" | "events" | "duration" | "attribute"
    time_based: bool
    attributes: Tuple[str, ...]
    #: Whether the query's result over all events is the union of its results over
    #: the events of each partition key: the engine's ``describe()["key_independent"]``
    #: (false under ``WITHIN n EVENTS``, which counts positions of the whole stream,
    #: and ``CONSUME BY ANY``, which resets every partition).
    split_by_key: bool
    #: The two 64-bit seeds of ``match_id``: the first 16 bytes of
    #: SHA-256(query text, 0x00, schema text), little-endian.
    seeds: Tuple[int, int] = field(repr=False)

    @property
    def partitioned(self) -> bool:
        return bool(self.key_groups)


def seeds_of(text: str, schema: Optional[str]) -> Tuple[int, int]:
    """The ``match_id`` seeds of a query (see docs/spark.md, "match_id")."""
    digest = hashlib.sha256(text.encode() + b"\x00" + (schema or "").encode()).digest()
    return int.from_bytes(digest[0:8], "little"), int.from_bytes(digest[8:16], "little")


def plan_of(query: Any, schema: Optional[str]) -> QueryPlan:
    """Compiles (or takes) the query and reads the clauses the glue needs."""
    import ceql

    if isinstance(query, ceql.Query):
        q, text, schema = query, query.text, query.schema
    else:
        text = str(query)
        q = ceql.compile(text, schema)
    d = q.describe()
    if d.get("trailing_absence") is not None:
        # Its deadlines are passed by time: in a stream by Spark's watermark, in a batch by
        # the end of the input; the glue does not hand the engine either yet, and the
        # matches would be lost or depend on the partitioning.
        raise ValueError(
            "ceql.spark does not support a trailing ABSENT(...) FOR yet: its deadlines must be fired by "
            "Spark's watermark, which the glue does not do yet (run such queries with ceql.Query.run or "
            "ceql.Query.stream; docs/spark.md)"
        )
    if q.measure_names:
        # The output rows have no measure columns yet: dropping them would be a silent loss.
        raise ValueError(
            "ceql.spark does not support measures in the SELECT list yet (count(b) AS n; run such queries "
            "with ceql.Query.run or ceql.Query.run_arrow; docs/language.md#s3-5a)"
        )
    return QueryPlan(
        text=text,
        schema=schema,
        key_groups=tuple(tuple(g) for g in d["partition_by"]),
        window=d["window"],
        time_based=bool(d["time_based"]),
        attributes=tuple(d["attributes"]),
        split_by_key=bool(d["key_independent"]),
        seeds=seeds_of(text, schema),
    )
