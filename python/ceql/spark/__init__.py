"""ceql on Apache Spark: complex events from a batch or streaming DataFrame.

>>> import ceql.spark as cs
>>> matches = cs.detect(events_df, '''SELECT * FROM S WHERE HOT ; COLD
...     FILTER HOT[temp > 40] AND COLD[temp < 10]
...     PARTITION BY [sensor] WITHIN 10 minutes''',
...     time_field="ts", order_field="offset", watermark="30 seconds")

The input needs the event type in a column named ``type``. The output has the
partition key columns, ``match_id``, ``start_time``, ``end_time`` and ``events``
(``array<struct<...input columns...>>``); see docs/spark.md.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from ._output import END, EVENTS, KIND, MATCH_ID, START

__all__ = ["detect", "explode_events"]

_LATE = ("drop", "emit")


def detect(
    df: Any,
    query: Any,
    *,
    time_field: str,
    order_field: Union[str, Sequence[str]],
    watermark: Any = None,
    late: str = "drop",
    buckets: Optional[int] = None,
    schema: Optional[str] = None,
    time_unit: Optional[str] = None,
    _fault: Optional[Callable] = None,
) -> Any:
    """Runs a CEQL query over a DataFrame of events; returns a DataFrame of complex events.

    ``df``: batch or streaming DataFrame with a ``type`` column (the event type),
    the time column ``time_field`` and the tie-breaking ``order_field`` column(s):
    (time, order) must be unique within a partition key (e.g. a Kafka
    ``(partition, offset)``), it is the order in which the engine sees events.

    ``query``: CEQL text (or a ``ceql.Query``); ``schema``: optional ``CREATE
    STREAM`` declarations. ``time_field`` is a timestamp column or a number in
    ``time_unit`` (``"s"``, ``"ms"``, ``"us"``, ``"ns"``, required for numbers).

    Streaming only: ``watermark`` (required) is how late an event may arrive
    (``"30 seconds"``); ``late`` says what happens to an event at or before the
    watermark: ``"drop"`` (counted by Spark as ``numRowsDroppedByWatermark``) or
    ``"emit"`` (output row with ``kind = 'late'``); ``buckets=N`` hashes the keys
    into N groups and lets the engine do ``PARTITION BY`` inside each.
    """
    from ._batch import detect_batch
    from ._keys import prepare
    from ._output import OutputLayout
    from ._plan import plan_of
    from ._streaming import detect_streaming

    if late not in _LATE:
        raise ValueError(f"late must be 'drop' or 'emit', not {late!r}")
    if buckets is not None and (not isinstance(buckets, int) or buckets < 1):
        raise ValueError(f"buckets must be a positive integer, not {buckets!r}")
    plan = plan_of(query, schema)
    streaming = bool(df.isStreaming)
    with_kind = streaming and late == "emit"
    prep = prepare(df, plan, time_field=time_field, order_field=order_field, time_unit=time_unit, with_kind=with_kind)
    from pyspark.sql.pandas.types import to_arrow_schema

    key_hidden = list(prep.key_hidden)
    layout = OutputLayout(
        query_hash=plan.query_hash,
        key_hidden=key_hidden,
        key_names=list(prep.key_names),
        time_field=time_field,
        order_fields=list(prep.order_fields),
        input_columns=list(prep.input_columns),
        schema=to_arrow_schema(prep.output_schema, timezone="UTC"),
        with_kind=with_kind,
    )
    if streaming:
        return detect_streaming(plan, prep, layout, watermark=watermark, late=late, buckets=buckets, fault=_fault)
    return detect_batch(plan, prep, layout)


def explode_events(matches: Any) -> Any:
    """One row per matched event: the match's columns (without ``events``), the
    event's ``event_index`` (0-based, in stream order) and the event's fields as
    columns. An event field whose name is taken by a match column is renamed
    ``event_<name>``."""
    from pyspark.sql import functions as F

    match_cols = [c for c in matches.columns if c != EVENTS]
    ev_type = matches.schema[EVENTS].dataType.elementType
    # Key columns are input columns too: they come from the event.
    own = [c for c in (MATCH_ID, START, END, KIND) if c in match_cols]
    exploded = matches.select(*[F.col(c) for c in own], F.posexplode(EVENTS).alias("event_index", "__ceql_event"))
    taken = set(own) | {"event_index"}
    fields = [
        F.col("__ceql_event").getField(f.name).alias(f"event_{f.name}" if f.name in taken else f.name) for f in ev_type.fields
    ]
    return exploded.select(*[F.col(c) for c in own], F.col("event_index"), *fields)
