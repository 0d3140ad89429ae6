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
    #: ``d`` of a trailing ``ABSENT(...) FOR d`` in nanoseconds (docs/language.md#s3-3b):
    #: every match then ends by its deadline, which Spark's watermark (streaming) or
    #: the end of the input (batch) passes.
    deadline_ns: Optional[int] = None
    #: ``detect(..., captures=True)``: outputs are valuations, each event with its variables.
    captures: bool = False
    #: The measures of the ``SELECT`` list (``count(b) AS n``, docs/language.md#s3-5a), in
    #: order: each is a top-level column of the output, and part of ``match_id``, since
    #: two outputs with the same events may differ only in their measures.
    measures: Tuple[str, ...] = ()
    #: Equalities between variables routed by key (docs/language.md#s3-4b): per event type
    #: (``stream>type`` when qualified), its key attribute. With ``split_by_key``, the
    #: input is split by the routing key too (``_input.routing_key``).
    routed_by: Tuple[Tuple[str, str], ...] = ()
    #: The event types whose events can change the result (the engine's
    #: ``describe()["relevant_types"]``, docs/language.md#s5-7): the batch path drops
    #: the others before its shuffle, the streaming path in its state function.
    #: ``None``: every event can.
    relevant_types: Optional[Tuple[str, ...]] = None
    #: ``ceql.compile(..., compat_ignore_strategy=True)``: the executors compile the
    #: query with it too (every strategy evaluated as ``ALL``).
    compat_ignore_strategy: bool = False
    #: With declarations: per declared event type (``stream>type``), the attribute
    #: each PARTITION BY group reads, None where it declares none (the engine's
    #: ``describe()["declared_keys"]``, docs/language.md#s3-8).
    declared_keys: Tuple[Tuple[str, Tuple[Optional[str], ...]], ...] = ()

    @property
    def partitioned(self) -> bool:
        return bool(self.key_groups)

    def one_task_reason(self) -> str:
        """Why the input is not split by key (for the warning that says so)."""
        if self.split_by_key:
            return ("a routing key attribute's column type has no routing form in Spark, or the key attributes "
                    "are of two kinds (docs/spark.md)")
        if not self.partitioned and not self.routed_by:
            return "the query has no PARTITION BY"
        return "its result depends on every partition (WITHIN n EVENTS counts global positions, CONSUME BY ANY resets all)"


def seeds_of(text: str, schema: Optional[str]) -> Tuple[int, int]:
    """The ``match_id`` seeds of a query (see docs/spark.md, "match_id")."""
    digest = hashlib.sha256(text.encode() + b"\x00" + (schema or "").encode()).digest()
    return int.from_bytes(digest[0:8], "little"), int.from_bytes(digest[8:16], "little")


def key_independent(d: dict) -> bool:
    """Whether the glue may split the query by key: the engine's ``key_independent``,
    or a partitioned trailing absence. The engine calls the latter key-dependent
    because an event of any partition passes a deadline (docs/language.md#s3-3b), which
    changes *when* a match is reported, not *whether*: a match is an output iff no
    event of its own partition cancels it before its deadline. The glue never lets
    an event of another key decide it: a stream reports a match when Spark's
    watermark passes its deadline, a batch closes every deadline at the end of a
    task and keeps those the whole input passes (see ``_batch``)."""
    if d["key_independent"]:
        return True
    # A trailing absence needs a duration window and forbids CONSUME BY (E0304).
    return d.get("trailing_absence") is not None and bool(d["partitioned"]) and d["window"] == "duration" \
        and d["consume"] == "NONE"


def plan_of(query: Any, schema: Optional[str], captures: bool = False) -> QueryPlan:
    """Compiles (or takes) the query and reads the clauses the glue needs."""
    import ceql

    if isinstance(query, ceql.Query):
        if schema is not None and schema != query.schema:
            raise ValueError("ceql.spark.detect: schema= is for a query given as text; a compiled ceql.Query "
                             "carries its own (compile it with the schema instead)")
        q, text, schema = query, query.text, query.schema
    else:
        text = str(query)
        q = ceql.compile(text, schema)
    d = q.describe()
    if captures:
        from ceql import _ceql

        # Refused here, on the driver, rather than in every task.
        _ceql.NativeRuntime(q._native, captures=True)
    return QueryPlan(
        text=text,
        schema=schema,
        key_groups=tuple(tuple(g) for g in d["partition_by"]),
        window=d["window"],
        time_based=bool(d["time_based"]),
        attributes=tuple(d["attributes"]),
        split_by_key=key_independent(d),
        seeds=seeds_of(text, schema),
        deadline_ns=d.get("trailing_absence"),
        captures=bool(captures),
        measures=tuple(q.measure_names),
        routed_by=tuple((str(t), str(a)) for t, a in d.get("routed_by", ())),
        relevant_types=None if d.get("relevant_types") is None else tuple(d["relevant_types"]),
        compat_ignore_strategy=bool(getattr(q, "_compat_ignore_strategy", False)),
        declared_keys=tuple((str(t), tuple(attrs)) for t, attrs in d.get("declared_keys", ())),
    )
