"""Spark side of the input: the hidden key and time columns, and the output schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Union

from ._engine import TIME
from ._output import END, EVENTS, KIND, MATCH_ID, START
from ._plan import QueryPlan

_UNIT_NS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def qcol(name: str):
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


@dataclass
class Prepared:
    """The input with its hidden columns, and what the executors need to know."""

    df: object  # pyspark DataFrame with the hidden columns
    input_columns: List[str]
    key_hidden: List[str]
    key_names: List[str]
    order_fields: List[str]
    engine_columns: List[str]
    output_schema: object  # pyspark StructType


def require_columns(columns: Sequence[str], time_field: str, orders: Sequence[str]) -> None:
    if "type" not in columns:
        raise ValueError(
            "ceql.spark needs the event type in a column named `type` "
            "(rename yours, e.g. df.withColumnRenamed('event_type', 'type'))"
        )
    for c in [time_field, *orders]:
        if c not in columns:
            raise ValueError(f"column {c!r} not found (columns: {', '.join(columns)})")


def check_order_not_null(rows: Any, orders: Sequence[str]) -> None:
    """Refuses rows whose order field is null: (time, order) is the order the engine
    reads the events in and what ``match_id`` is made of, so it must be known."""
    for o in orders:
        if rows.column(o).null_count:
            raise ValueError(f"ceql.spark: {rows.column(o).null_count} events have a null order_field {o!r}: every event needs one")


def order_list(order_field: Union[str, Sequence[str]]) -> List[str]:
    if isinstance(order_field, str):
        return [order_field]
    fields = list(order_field)
    if not fields or not all(isinstance(f, str) for f in fields):
        raise TypeError("order_field must be a column name or a list of column names")
    return fields


def time_nanos_expr(df, time_field: str, time_unit: Optional[str]):
    """int64 nanoseconds since the epoch of the time column (what the engine sees)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dt = df.schema[time_field].dataType
    c = qcol(time_field)
    if isinstance(dt, T.TimestampType):
        return F.unix_micros(c) * F.lit(1000)
    if isinstance(dt, T.TimestampNTZType):
        # Wall time read as UTC, as the engine reads naive datetimes: a difference
        # of NTZ values involves no time zone (a cast to timestamp would use the
        # session's, and shift times across its DST changes).
        name = time_field.replace("`", "``")
        return F.expr(f"timestampdiff(MICROSECOND, TIMESTAMP_NTZ'1970-01-01 00:00:00', `{name}`)") * F.lit(1000)
    if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)):
        if time_unit is None:
            raise ValueError(
                f"the time field {time_field!r} is numeric ({dt.simpleString()}): say its unit with time_unit='s', 'ms', 'us' or 'ns'"
            )
        if time_unit not in _UNIT_NS:
            raise ValueError(f"time_unit must be one of s, ms, us, ns, not {time_unit!r}")
        if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            return c.cast("long") * F.lit(_UNIT_NS[time_unit])
        return (c.cast("double") * F.lit(float(_UNIT_NS[time_unit]))).cast("long")
    raise TypeError(f"the time field {time_field!r} must be a timestamp or a number, not {dt.simpleString()}")


def key_exprs(df, plan: QueryPlan):
    """(hidden name, output name, expression) per PARTITION BY group.

    Without a declaration the engine keys an event on the first attribute of each
    group that the event has; with Arrow input that is the first of the group's
    columns that the DataFrame has. With alternatives (``[sensor, device]``) the
    expression takes the first non-null one: rows the engine finds keyless land in
    some group and are dropped there, as in a single run. Doubles are normalised
    (-0.0 is 0.0) as the engine does.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    out = []
    for i, group in enumerate(plan.key_groups):
        present = [a for a in group if a in df.columns]
        if not present:
            raise ValueError(
                f"PARTITION BY [{', '.join(group)}]: the DataFrame has none of these columns, so no event would have a key"
            )
        types = {df.schema[a].dataType for a in present}
        if len(present) == 1:
            e = qcol(present[0])
        elif len(types) == 1:
            e = F.coalesce(*[qcol(a) for a in present])
        else:
            e = F.coalesce(*[qcol(a).cast("string") for a in present])
        dt = df.schema[present[0]].dataType
        if len(types) == 1 and isinstance(dt, (T.FloatType, T.DoubleType)):
            e = F.when(e == F.lit(0.0), F.lit(0.0).cast(dt)).otherwise(e)
        out.append((f"__ceql_k{i}", present[0], e))
    return out


def prepare(df, plan: QueryPlan, *, time_field: str, order_field, time_unit: Optional[str], with_kind: bool) -> Prepared:
    from pyspark.sql import types as T

    orders = order_list(order_field)
    require_columns(df.columns, time_field, orders)
    input_columns = list(df.columns)
    keys = key_exprs(df, plan)
    taken = {MATCH_ID, START, END, EVENTS} | ({KIND} if with_kind else set())
    for _, name, _ in keys:
        if name in taken:
            raise ValueError(
                f"PARTITION BY column {name!r} has the name of an output column ({', '.join(sorted(taken))}); "
                "rename it in the DataFrame and the query"
            )
    out = df.withColumn(TIME, time_nanos_expr(df, time_field, time_unit))
    for hidden, _, e in keys:
        out = out.withColumn(hidden, e)
    engine_columns = ["type"] + [c for c in ("stream",) if c in input_columns]
    engine_columns += [a for a in plan.attributes if a in input_columns and a not in engine_columns]
    engine_columns.append(TIME)
    fields = [T.StructField(name, out.schema[hidden].dataType, True) for hidden, name, _ in keys]
    time_type = df.schema[time_field].dataType
    fields += [
        T.StructField(MATCH_ID, T.StringType(), False),
        T.StructField(START, time_type, True),
        T.StructField(END, time_type, True),
    ]
    if with_kind:
        fields.append(T.StructField(KIND, T.StringType(), False))
    fields.append(T.StructField(EVENTS, T.ArrayType(T.StructType([df.schema[c] for c in input_columns]), False), False))
    return Prepared(
        df=out,
        input_columns=input_columns,
        key_hidden=[k[0] for k in keys],
        key_names=[k[1] for k in keys],
        order_fields=orders,
        engine_columns=engine_columns,
        output_schema=T.StructType(fields),
    )
