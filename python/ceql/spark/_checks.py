"""What ceql.spark refuses, and where: on the driver what every task would fail
on (column types, reserved names), in the tasks what only the rows show (a null
time or order, two events the engine could read in either order). Each error names
the user's columns, never the glue's hidden ones."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ._engine import TIME
from ._match_id import H0

#: Prefix of the glue's hidden columns; input columns and measures may not use it.
HIDDEN_PREFIX = "__ceql_"


def check_input_columns(df: Any, type_field: str) -> None:
    """Refuses, on the driver, what every task would fail on: an event type (or
    ``stream``) column that is not a string, two columns whose names differ only in
    case (ambiguous to Spark unless ``spark.sql.caseSensitive``), and a column named
    like the glue's hidden ones, whose values it would overwrite."""
    from pyspark.sql import types as T

    for name, what in ((type_field, "the event type column (type_field)"), ("stream", "the `stream` column")):
        if name in df.columns and not isinstance(df.schema[name].dataType, T.StringType):
            raise TypeError(f"{what} {name!r} must be a string column, not {df.schema[name].dataType.simpleString()}")
    if not _case_sensitive(df):
        seen: dict = {}
        for c in df.columns:
            if c.lower() in seen:
                raise ValueError(
                    f"columns {seen[c.lower()]!r} and {c!r} differ only in case, which Spark does not tell apart "
                    "(spark.sql.caseSensitive is false): rename one"
                )
            seen[c.lower()] = c
    hidden = [c for c in df.columns if c.startswith(HIDDEN_PREFIX)]
    if hidden:
        raise ValueError(f"column names starting with {HIDDEN_PREFIX!r} are reserved for ceql.spark's hidden columns: "
                         f"rename {', '.join(map(repr, hidden))}")


def check_read_types(df: Any, columns: Sequence[str]) -> None:
    """Refuses, on the driver, a column the engine reads (a ``PARTITION BY`` key, an
    attribute of a filter or a measure) whose type it cannot read: every task would
    fail on it. Decimals, binaries and nested types are payload only (``events``);
    the order fields, which Spark sorts and hashes, may be of any of them."""
    from pyspark.sql import types as T

    readable = (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType,
                T.StringType, T.TimestampType, T.TimestampNTZType, T.DateType, T.DayTimeIntervalType, T.NullType)
    for c in columns:
        dt = df.schema[c].dataType
        if not isinstance(dt, readable):
            cast = "double" if isinstance(dt, T.DecimalType) else "string"
            raise TypeError(
                f"the query reads column {c!r}, of type {dt.simpleString()}, which ceql cannot read (it reads "
                "booleans, integers, floats, strings, timestamps, dates and day-time intervals): cast it, e.g. "
                f"df.withColumn({c!r}, F.col({c!r}).cast({cast!r}))"
            )


def _case_sensitive(df: Any) -> bool:
    try:
        return str(df.sparkSession.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"
    except Exception:  # a session that cannot say: Spark's default
        return False


def check_time_not_null(rows: Any, time_field: str) -> None:
    """Refuses rows without an event time (the hidden time column is null where the
    user's time field is)."""
    nulls = rows.column(TIME).null_count
    if nulls:
        raise ValueError(f"ceql.spark: {nulls} events have a null time field {time_field!r}: every event needs a time")


def check_unique_order(rows: Any, columns: Sequence[str], before: Optional[tuple], what: str) -> Optional[tuple]:
    """Refuses two rows with equal values in every one of ``columns`` (time, order
    fields, keys; a row without a key is in no partition and does not count), in
    ``rows`` sorted by them: Spark does not order such rows, so which one the engine
    read first would be arbitrary. ``rows`` has the row-hash column ``H0``, a hash
    of those very values, so only rows whose hash equals the previous row's are
    compared. ``before`` is (hash, values) of the previous batch's last row; returns
    this batch's. ``what`` names the columns for the message."""
    n = rows.num_rows
    if n == 0:
        return before
    h = rows.column(H0).to_numpy()

    def values(i: int) -> tuple:
        return tuple(rows.column(c)[int(i)].as_py() for c in columns)

    def same(a: tuple, b: tuple) -> bool:
        # NaN equals NaN here, as in Spark's sort and for the engine's keys; a null
        # (only a key can be null here) is no partition.
        return None not in a and all(x == y or (x != x and y != y) for x, y in zip(a, b))

    at = None
    if before is not None and before[0] == h[0] and same(values(0), before[1]):
        at = before[1]
    for i in np.flatnonzero(h[1:] == h[:-1]):
        if at is not None:
            break
        if same(values(i), values(i + 1)):
            at = values(i)
    if at is not None:
        raise _duplicate(what, ", ".join(map(repr, at)))
    return h[-1], values(n - 1)


def check_unique_ties(rows: Any, ties: Sequence[bytes], keys: Sequence[str], what: str,
                      columns: Sequence[str] = ()) -> None:
    """Refuses two rows of one micro-batch and bucket with equal time and
    tie-breaker (order fields, key and routing key; rows without a key are not
    evaluated and do not count): which one the engine read first would depend on
    how Spark split the input. (Late rows, and rows of different micro-batches, are
    not compared.) The error names the time and the values of ``columns``."""
    import pyarrow.compute as pc

    keyed = None
    for k in (k for k in keys if rows.column(k).null_count):
        valid = rows.column(k).is_valid()
        keyed = valid if keyed is None else pc.and_(keyed, valid)
    times = rows.column(TIME).to_pylist()
    index = range(len(times)) if keyed is None else [i for i, ok in enumerate(keyed.to_pylist()) if ok]
    pairs = [(times[i], ties[i]) for i in index]
    if len(set(pairs)) == len(pairs):
        return
    seen = set()
    for i, pair in zip(index, pairs):
        if pair in seen:
            values = [f"time {pair[0]} ns", *(repr(rows.column(c)[i].as_py()) for c in columns)]
            raise _duplicate(what, ", ".join(values))
        seen.add(pair)


def _duplicate(what: str, values: str) -> ValueError:
    """The error of two events the engine could read in either order."""
    return ValueError(
        f"ceql.spark: two events have the same {what} ({values}): (time, order) must be unique within a partition "
        "key, or Spark would decide which one the engine reads first. Name an order_field that tells them apart "
        "(an offset)"
    )


def unique_what(prep: Any) -> str:
    """The columns of ``Prepared.sort_columns``, as :func:`check_unique_order` names
    them to the user."""
    parts = [f"time (nanoseconds of {prep.time_field!r})", *(f"order_field {o!r}" for o in prep.order_fields)]
    parts += [f"key {k!r}" for k in prep.key_names]
    if prep.route_hidden:
        parts.append("routing key")
    return ", ".join(parts)


def check_order_not_null(rows: Any, orders: Sequence[str]) -> None:
    """Refuses rows whose order field is null: (time, order) is the order the engine
    reads the events in and what ``match_id`` is made of, so it must be known."""
    for o in orders:
        if rows.column(o).null_count:
            raise ValueError(f"ceql.spark: {rows.column(o).null_count} events have a null order_field {o!r}: every event needs one")
