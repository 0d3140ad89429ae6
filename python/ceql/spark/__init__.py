"""ceql on Apache Spark: complex events from a batch or streaming DataFrame.

>>> import ceql.spark as cs
>>> matches = cs.detect(events_df, '''SELECT * FROM S WHERE HOT ; COLD
...     FILTER HOT[temp > 40] AND COLD[temp < 10]
...     PARTITION BY [sensor] WITHIN 10 minutes''',
...     time_field="ts", order_field="offset", watermark="30 seconds")

The output has the partition key columns, ``match_id``, ``start_time``,
``end_time``, one column per measure of the ``SELECT`` list (``count(b) AS n``) and
``events`` (``array<struct<...input columns...>>``), and ``deadline`` for a query
ending with ``ABSENT(...) FOR d``; see docs/spark.md.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from ._executors import CeqlSparkSetupError, check_executors
from ._output import DEADLINE_NS, EVENTS, MATCH_ID

__all__ = ["detect", "explode_events", "check_executors", "CeqlSparkSetupError", "DEFAULT_BUCKETS"]

_LATE = ("drop", "emit")

#: Groups of partition keys in streaming when ``buckets`` is not given.
DEFAULT_BUCKETS = 16


def detect(
    df: Any,
    query: Any,
    *,
    time_field: Optional[str] = None,
    order_field: Union[None, str, Sequence[str]] = None,
    type_field: Optional[str] = None,
    watermark: Any = None,
    late: str = "drop",
    buckets: Optional[int] = None,
    schema: Optional[str] = None,
    time_unit: Optional[str] = None,
    captures: bool = False,
    close_deadlines: bool = False,
    check: bool = True,
    _fault: Optional[Callable] = None,
) -> Any:
    """Runs a CEQL query over a DataFrame of events; returns a DataFrame of complex events.

    ``df``: batch or streaming DataFrame of events. ``type_field`` is the column
    with the event type (default ``type``); ``time_field`` the event time (default
    Kafka's ``timestamp``), a timestamp or a number in ``time_unit`` (``"s"``,
    ``"ms"``, ``"us"``, ``"ns"``, required for numbers); ``order_field`` the
    column(s) that break ties between events of the same time (default Kafka's
    ``partition`` and ``offset``, or ``offset``): (time, order) must be unique
    within a partition key, it is the order in which the engine reads events.

    ``query``: CEQL text (or a ``ceql.Query``); ``schema``: optional ``CREATE
    STREAM`` declarations.

    Streaming only: ``watermark`` (required) is how late an event may arrive
    (``"30 seconds"``); ``late`` says what happens to an event at or before the
    watermark: ``"drop"`` (counted by Spark as ``numRowsDroppedByWatermark``) or
    ``"emit"`` (output row with ``kind = 'late'``); ``buckets`` is the number of
    groups the partition keys are hashed into (default :data:`DEFAULT_BUCKETS`),
    fixed for the life of a checkpoint.

    ``captures=True`` reports valuations (docs/language.md#s3-2a): each struct of
    ``events`` gets ``variables`` (``array<string>``, the variables that captured
    the event, as ``Match.variables`` gives them), and ``match_id`` hashes them, so
    two valuations of one complex event are two rows with different ids.

    Measures (``SELECT a, count(b) AS n``, docs/language.md#s3-5a) are top-level
    columns, named as in the ``SELECT`` list and typed as in ``Query.run_arrow``; a
    measure named like another output column raises ``ValueError``. Two outputs
    with the same events and different measures are two rows with different ids.

    A query ending with ``ABSENT(...) FOR d`` (docs/language.md#s3-3b) has a
    ``deadline`` column (``end_time + d``). A stream reports each match in the
    micro-batch whose watermark passes its deadline. A batch reports, like
    ``Query.run``, the matches whose deadline the input passes (an event later than
    it); ``close_deadlines=True`` also reports the others, as
    ``Query.run(..., close_deadlines=True)`` does and as a stream does once its
    watermark has passed every deadline. Batch only.

    ``check``: first make sure that the executors can import ceql (once per
    session, see :func:`check_executors`).
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    from ._batch import detect_batch
    from ._input import prepare
    from ._output import OutputLayout
    from ._plan import plan_of
    from ._streaming import detect_streaming

    if late not in _LATE:
        raise ValueError(f"late must be 'drop' or 'emit', not {late!r}")
    # The state row keeps the count as a Spark int.
    if buckets is not None and (isinstance(buckets, bool) or not isinstance(buckets, int)
                                or not 1 <= buckets <= 2**31 - 1):
        raise ValueError(f"buckets must be an integer from 1 to 2**31 - 1, not {buckets!r}")
    plan = plan_of(query, schema, captures=bool(captures))
    streaming = bool(df.isStreaming)
    if streaming and close_deadlines:
        raise ValueError("close_deadlines=True is for batch input: a stream reports a match once Spark's watermark "
                         "passes its deadline")
    with_kind = streaming and late == "emit"
    # A batch that does not close its deadlines keeps those the whole input passes.
    cutoff = not streaming and plan.deadline_ns is not None and not close_deadlines
    prep = prepare(df, plan, type_field=type_field, time_field=time_field, order_field=order_field,
                   time_unit=time_unit, with_kind=with_kind, deadline_ns=cutoff)
    if check:
        check_executors(df.sparkSession, cached=True)
    layout = OutputLayout(
        seeds=plan.seeds,
        key_hidden=list(prep.key_hidden),
        time_field=prep.time_field,
        input_columns=list(prep.input_columns),
        schema=to_arrow_schema(prep.output_schema, timezone="UTC"),
        with_kind=with_kind,
        deadline=prep.deadline,
        captures=plan.captures,
        deadline_ns=cutoff,
        measures=tuple(prep.measures),
    )
    if streaming:
        return detect_streaming(plan, prep, layout, watermark=watermark, late=late,
                                buckets=DEFAULT_BUCKETS if buckets is None else buckets, fault=_fault)
    return detect_batch(plan, prep, layout)


def explode_events(matches: Any) -> Any:
    """One row per matched event: the match's columns (without ``events`` and the
    key columns, which are event fields too; with the measures), the event's
    ``event_index`` (0-based, in stream order) and the event's fields as columns. An
    event field whose name is taken by a match column is renamed ``event_<name>``
    (with leading underscores while that name is taken too)."""
    from pyspark.sql import functions as F

    match_cols = [c for c in matches.columns if c != EVENTS]
    ev_type = matches.schema[EVENTS].dataType.elementType
    # Key columns (those before match_id) are input columns too: they come from the
    # event. The columns after it are the match's own, measures included.
    first = match_cols.index(MATCH_ID) if MATCH_ID in match_cols else 0
    own = [c for c in match_cols[first:] if c != DEADLINE_NS]
    exploded = matches.select(*[F.col(c) for c in own], F.posexplode(EVENTS).alias("event_index", "__ceql_event"))
    # A field whose name a match column takes is `event_<name>`; should that be taken
    # too (an input column `event_match_id`), underscores are added until it is free.
    taken = {c.lower() for c in own} | {"event_index"} | {f.name.lower() for f in ev_type.fields}
    fields = []
    for f in ev_type.fields:
        name = f.name
        if name.lower() in {c.lower() for c in own} | {"event_index"}:
            name = f"event_{f.name}"
            while name.lower() in taken:
                name = "_" + name
            taken.add(name.lower())
        fields.append(F.col("__ceql_event").getField(f.name).alias(name))
    return exploded.select(*[F.col(c) for c in own], F.col("event_index"), *fields)
