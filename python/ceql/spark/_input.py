"""Spark side of the input: which columns are the type, time and order (with the
common spellings), the hidden time, key and row-hash columns, and the output
schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Union

from ceql._units import TIME_UNITS, time_unit_nanos

from ._checks import check_input_columns, check_read_types
from ._engine import TIME
from ._match_id import H0, H1
from ._output import DEADLINE, DEADLINE_NS, END, EVENTS, KIND, MATCH_ID, START, VARIABLES, DeadlineColumn
from ._measures import check_names, measure_fields
from ._plan import QueryPlan

#: Hidden column with the routing key of a routed query (``routing_key``).
ROUTE = "__ceql_route"

#: Kafka's source columns, taken as time and order when none is named.
KAFKA_TIME, KAFKA_ORDER = "timestamp", ["partition", "offset"]


def qcol(name: str) -> Any:
    """A column by its exact name (dots and backquotes included)."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def needs_plain_names(columns: Sequence[str]) -> bool:
    """Whether a column name has a dot or a backquote. PySpark's ``mapInArrow`` and
    ``applyInPandasWithState`` look every column up by its name (``df[name]``),
    which reads a dot as a field of a struct and refuses an unpaired backquote, so
    such a DataFrame fails there even when the glue never reads those columns."""
    return any("." in c or "`" in c for c in columns)


def plain_names(df: Any) -> Any:
    """``df`` with its columns renamed by position so that none has a dot or a
    backquote (:func:`needs_plain_names`); the tasks give the rows their names back
    by position (``Table.rename_columns``)."""
    columns = list(df.columns)
    if not needs_plain_names(columns):
        return df
    return df.toDF(*[f"__ceql_c{i}" if "." in c or "`" in c else c for i, c in enumerate(columns)])


@dataclass
class Prepared:
    """The input with its hidden columns, and what the executors need to know."""

    df: Any  # pyspark DataFrame with the hidden columns
    input_columns: List[str]  # the user's columns: the fields of `events`
    type_field: str
    time_field: str
    key_hidden: List[str]
    key_names: List[str]
    order_fields: List[str]
    engine_columns: List[str]  # columns the engine reads, the type column first
    output_schema: Any  # pyspark StructType
    deadline: Optional[DeadlineColumn] = None  # a trailing absence: how `deadline` is computed
    measures: List[str] = field(default_factory=list)  # measure columns of the output, in SELECT order
    engine_schema: Any = None  # pyarrow Schema of the rows fed to the engine (``engine_view``)
    #: Columns that split the input by key (Spark partitions, streaming buckets): the
    #: ``PARTITION BY`` keys, then the routing key of a routed query; empty when the
    #: query cannot be split.
    split_columns: List[str] = field(default_factory=list)
    #: The columns ``match_id``'s row hashes are made of (keys, time, orders), which
    #: the task hashes (``_match_id.with_row_hashes``); ``None`` when Spark has
    #: computed the hash columns (a column type the task does not hash).
    identity_columns: Optional[List[str]] = None

    @property
    def sort_columns(self) -> List[str]:
        """The order the engine reads rows in: time, order, then the keys and the
        routing key (which break ties between keys, so that nothing depends on the
        shuffle; rows of two routing keys are in independent substreams)."""
        return [TIME, *self.order_fields, *self.key_hidden, *self.route_hidden]

    @property
    def route_hidden(self) -> List[str]:
        """The routing key's hidden column, when the input is split by it."""
        return [ROUTE] if ROUTE in self.split_columns else []

    @property
    def kept_columns(self) -> List[str]:
        """Columns of a row the glue keeps while a match may still need it."""
        seen: List[str] = []
        hashes = [H0, H1] if self.identity_columns is None else []
        for c in [*self.input_columns, TIME, *self.key_hidden, *self.route_hidden, *hashes]:
            if c not in seen:
                seen.append(c)
        return seen



def engine_view(rows: Any, engine_columns: List[str]) -> Any:
    """The columns of ``rows`` the engine reads (``Prepared.engine_columns``), the
    first one, the event type, named ``type``."""
    view = rows.select(engine_columns)
    if engine_columns[0] != "type":
        view = view.rename_columns(["type", *view.column_names[1:]])
    return view


def engine_view_schema(spark_schema: Any, engine_columns: List[str]) -> Any:
    """The Arrow schema of :func:`engine_view` for rows of the Spark schema
    ``spark_schema``: what the measure columns' types are derived from, and what an
    empty push carries (``Engine.push_delayed``)."""
    import pyarrow as pa
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow = to_arrow_schema(T.StructType([spark_schema[c] for c in engine_columns]), timezone="UTC")
    return engine_view(arrow.empty_table(), engine_columns).schema if arrow.names else pa.schema([])


def resolve_columns(columns: Sequence[str], type_field: Optional[str], time_field: Optional[str],
                    order_field: Union[None, str, Sequence[str]]) -> Any:
    """(type, time, orders): the named columns, or the common spellings: ``type``;
    Kafka's ``timestamp``; Kafka's ``partition`` and ``offset``, or ``offset``."""
    if type_field is None:
        if "type" not in columns:
            raise ValueError(
                "ceql.spark needs the event type: name its column with type_field= (e.g. type_field='event_type'), "
                "or call it `type`"
            )
        type_field = "type"
    if time_field is None:
        if KAFKA_TIME not in columns:
            raise ValueError("ceql.spark needs the event time: name its column with time_field=")
        time_field = KAFKA_TIME
    if order_field is None:
        if all(c in columns for c in KAFKA_ORDER):
            orders = list(KAFKA_ORDER)
        elif "offset" in columns:
            orders = ["offset"]
        else:
            raise ValueError("ceql.spark needs an order_field that breaks ties between events of the same time (an offset)")
    elif isinstance(order_field, str):
        orders = [order_field]
    else:
        orders = list(order_field)
        if not orders or not all(isinstance(f, str) for f in orders):
            raise TypeError("order_field must be a column name or a list of column names")
    for c in [type_field, time_field, *orders]:
        if c not in columns:
            raise ValueError(f"column {c!r} not found (columns: {', '.join(columns)})")
    return type_field, time_field, orders


def time_nanos_expr(df: Any, time_field: str, time_unit: Optional[str]) -> Any:
    """int64 nanoseconds since the epoch of the time column (what the engine sees).
    A timestamp carries its unit; a number needs ``time_unit``. A value whose
    nanoseconds do not fit in 64 bits (about the years 1677 to 2262), or a NaN or
    infinite number, fails the job with an error naming the field, as the engine
    rejects such an event (docs/language.md#s1-4), whatever ``spark.sql.ansi.enabled``
    says (without ANSI, Spark's arithmetic would wrap around silently)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dt = df.schema[time_field].dataType
    c = qcol(time_field)
    if isinstance(dt, (T.TimestampType, T.TimestampNTZType)):
        micros = F.unix_micros(c) if isinstance(dt, T.TimestampType) else ntz_micros(c)
        return _in_range(micros, -(2**63) // 1000 + 1, (2**63 - 1) // 1000, time_field, c) * F.lit(1000)
    if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType, T.DecimalType)):
        if time_unit is None:
            raise ValueError(
                f"the time field {time_field!r} is numeric ({dt.simpleString()}): say its unit with time_unit="
                + ", ".join(repr(u) for u in TIME_UNITS)
            )
        per = time_unit_nanos(time_unit)
        lo, hi = -(2**63) // per + (1 if -(2**63) % per else 0), (2**63 - 1) // per
        if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            return _in_range(c.cast("long"), lo, hi, time_field, c) * F.lit(per)
        if isinstance(dt, T.DecimalType):
            return _decimal_nanos(c, dt, per, lo, hi, time_field)
        # The double product rounded to the nearest nanosecond, halves away from zero
        # (Spark's HALF_UP), as the engine reads a double (docs/language.md#s1-4).
        d = F.round(c.cast("double") * F.lit(float(per)))
        bad = F.isnan(d) | (d >= F.lit(2.0**63)) | (d < F.lit(-(2.0**63)))
        return F.when(bad, _out_of_range(time_field, c)).otherwise(d.cast("long"))
    raise TypeError(f"the time field {time_field!r} must be a timestamp or a number, not {dt.simpleString()}")


def _decimal_nanos(c: Any, dt: Any, per: int, lo: int, hi: int, time_field: str) -> Any:
    """Exact nanoseconds of a decimal time in units of ``per`` ns: the whole units and
    the fraction's nanoseconds, each truncated toward zero (a double keeps about 16
    digits and could reorder events). The range is checked on the whole units and then
    on the fraction at the two edge units (9223372036.5 s is 9223372036500000000 ns and
    fits). Spark rounds a decimal result whose precision would pass 38 to fewer
    fraction digits, so the fraction is taken with ``%`` (precision scale + 1, where a
    subtraction from the whole units needed 20 + scale) and, past 9 digits, cut
    toward zero before the product (Spark rounded a product of 26 digits); the CASE that guards the cast has the column's
    own type (with an ``int`` 0 Spark widened decimal(38,30) to 28 digits)."""
    from decimal import Decimal

    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    outside = (c <= F.lit(Decimal(lo - 1))) | (c >= F.lit(Decimal(hi + 1)))
    whole = F.when(outside, F.lit(0).cast(dt)).otherwise(c).cast("long")
    frac = c % F.lit(1).cast(T.DecimalType(1, 0))
    if dt.scale > 9:
        # The nanoseconds of the fraction depend on its first 9 digits at most (a unit is
        # at most 10^9 ns): cut toward zero there, so that the product stays exact.
        frac = F.when(frac >= 0, F.floor(frac, F.lit(9))).otherwise(F.ceil(frac, F.lit(9)))
    frac_ns = F.when(outside, F.lit(0)).otherwise((frac * F.lit(per).cast(T.DecimalType(10, 0))).cast("long"))
    spill = ((whole == F.lit(hi)) & (frac_ns > F.lit(2**63 - 1 - hi * per))) \
        | ((whole == F.lit(lo)) & (frac_ns < F.lit(-(2**63) - lo * per)))
    return F.when(outside | spill, _out_of_range(time_field, c)).otherwise(whole * F.lit(per) + frac_ns)


def ntz_micros(c: Any) -> Any:
    """Microseconds since the epoch of a ``timestamp_ntz`` column, its wall time read
    as UTC (as the engine reads a naive ``datetime``), from its fields: Spark's
    functions that take the difference of two ``timestamp_ntz`` values go through
    the session time zone, and moved every wall time of a spring-forward gap by an
    hour."""
    from pyspark.sql import functions as F

    return (F.unix_date(c.cast("date")).cast("long") * F.lit(86_400_000_000)
            + F.hour(c).cast("long") * F.lit(3_600_000_000) + F.minute(c).cast("long") * F.lit(60_000_000)
            + (F.date_part(F.lit("SECOND"), c) * F.lit(1_000_000)).cast("long"))


def _in_range(e: Any, lo: int, hi: int, time_field: str, c: Any) -> Any:
    """``e`` where it is within [lo, hi], an error naming the time field elsewhere."""
    from pyspark.sql import functions as F

    return F.when((e < F.lit(lo)) | (e > F.lit(hi)), _out_of_range(time_field, c)).otherwise(e)


def _out_of_range(time_field: str, c: Any) -> Any:
    from pyspark.sql import functions as F

    return F.raise_error(F.concat(
        F.lit(f"ceql.spark: the time field {time_field!r} has a value out of range, "),
        F.coalesce(c.cast("string"), F.lit("?")),
        F.lit(": in nanoseconds it does not fit in 64 bits (years 1677 to 2262)"),
    ))


def key_exprs(df: Any, plan: QueryPlan, type_field: str) -> List[Any]:
    """(hidden name, output name, expression) per PARTITION BY group.

    Without a declaration the engine keys an event on the first attribute of each
    group that the event has; with Arrow input that is the first of the group's
    columns that the DataFrame has. With alternatives (``[sensor, device]``) the
    expression takes the first non-null one: rows the engine finds keyless land in
    some group and are dropped there, as in a single run. Doubles are normalised
    (-0.0 is 0.0) as the engine does. Alternatives of different types become a
    string tagged with the kind of value the engine reads (:func:`tagged_key`), so
    that values the engine finds equal are equal here and others are not.

    With declarations each type reads the first attribute of the group that it
    declares, NULL or not, and a type that declares none (or that is not declared)
    has no key: the expression picks the column per type (``plan.declared_keys``).
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
        if plan.declared_keys and len(group) > 1:
            e = declared_key(df, plan, i, type_field, present, len(types) > 1)
        elif len(present) == 1:
            e = qcol(present[0])
        elif len(types) == 1:
            e = F.coalesce(*[qcol(a) for a in present])
        else:
            e = F.coalesce(*[tagged_key(qcol(a), df.schema[a].dataType) for a in present])
        dt = df.schema[present[0]].dataType
        if len(types) == 1 and isinstance(dt, (T.FloatType, T.DoubleType)):
            e = positive_zero(e, dt)
        out.append((f"__ceql_k{i}", present[0], e))
    return out


def declared_key(df: Any, plan: QueryPlan, group: int, type_field: str, present: List[str], tagged: bool) -> Any:
    """Group ``group``'s key with declarations: per declared type, the column of the
    attribute it declares (tagged when the group's columns differ in type); NULL for
    other rows, which the engine finds keyless."""
    from pyspark.sql import functions as F

    e = F.lit(None)
    for qualified, attrs in reversed(plan.declared_keys):
        attr = attrs[group]
        if attr is None or attr not in present:
            continue
        c = qcol(attr)
        e = F.when(of_type(df, type_field, qualified), tagged_key(c, df.schema[attr].dataType) if tagged else c) \
            .otherwise(e)
    return e


def of_type(df: Any, type_field: str, qualified: str) -> Any:
    """Whether a row is of the event type ``qualified`` (``stream>type``, as the
    engine's facts name it): by its stream too when the DataFrame has a ``stream``
    column, by the type name alone otherwise."""
    from pyspark.sql import functions as F

    stream, _, ty = qualified.rpartition(">")
    cond = qcol(type_field) == F.lit(ty)
    if stream and "stream" in df.columns:
        cond = cond & (qcol("stream") == F.lit(stream))
    return cond


def positive_zero(e: Any, dt: Any) -> Any:
    """A float or double key with -0.0 as 0.0, the one key the engine reads for both."""
    from pyspark.sql import functions as F

    return F.when(e == F.lit(0.0), F.lit(0.0).cast(dt)).otherwise(e)


def tagged_key(c: Any, dt: Any) -> Any:
    """A key value of a group whose columns have different types, as a string that
    names the kind of value the engine reads (docs/language.md#s3-8: keys are equal
    with equal types and values): ``i`` and an integer, ``d`` and a double (-0.0 is
    0.0; a float is read as the double it is), ``s`` and a string, ``b`` and a
    boolean, ``t`` and nanoseconds (time stamps and dates). NULL stays NULL."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def tag(letter: str, text: Any) -> Any:
        return F.concat(F.lit(letter), text)

    if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return tag("i", c.cast("string"))
    if isinstance(dt, (T.FloatType, T.DoubleType)):
        return tag("d", positive_zero(c.cast("double"), T.DoubleType()).cast("string"))
    if isinstance(dt, T.StringType):
        return tag("s", c)
    if isinstance(dt, T.BooleanType):
        return tag("b", c.cast("string"))
    if isinstance(dt, T.TimestampType):
        return tag("t", (F.unix_micros(c) * F.lit(1000)).cast("string"))
    if isinstance(dt, T.TimestampNTZType):
        return tag("t", (ntz_micros(c) * F.lit(1000)).cast("string"))
    if isinstance(dt, T.DateType):
        return tag("t", (F.unix_date(c).cast("long") * F.lit(86_400_000_000_000)).cast("string"))
    return tag("x", c.cast("string"))


def routing_key(df: Any, plan: QueryPlan, type_field: str) -> Any:
    """The routing key of a routed query (docs/language.md#s3-4b) as a Spark string
    column, or None when a key attribute's column type has no such form here.

    Each event type reads its own key attribute (``ORDER`` its ``id``, ``PAYMENT``
    its ``order_id``), normalised as the engine does, so that events the engine puts
    in one substream get one value: an integer, or a double with an integral value
    below 2^53 (``-0.0`` included), is ``i<integer>``; another double ``d<value>``; a
    string ``s<text>``; a boolean ``b<value>``; a time stamp its nanoseconds as an
    integer. NaN, NULL, a type without a key attribute, and a type the query does not
    read get NULL: the engine finds them keyless wherever they land. A double of
    magnitude 2^53 or more gets its ``d`` value: the engine raises its event error
    in whichever task reads it. Key attributes of two kinds (a string column on one
    side, a number on the other) also give None: in one process an event whose key
    is of another kind than a held substream's raises, and split by key the two kinds
    would never meet, so such a query keeps one task and the single-process answer."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def normalised(c: Any, dt: Any) -> Any:
        if isinstance(dt, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
            return F.concat(F.lit("i"), c.cast("string"))
        if isinstance(dt, (T.FloatType, T.DoubleType)):
            d = c.cast("double")
            integral = (d == F.floor(d)) & (F.abs(d) < F.lit(float(2**53)))
            return (F.when(F.isnan(d), F.lit(None).cast("string"))
                    .when(integral, F.concat(F.lit("i"), d.cast("long").cast("string")))
                    .otherwise(F.concat(F.lit("d"), d.cast("string"))))
        if isinstance(dt, T.StringType):
            return F.concat(F.lit("s"), c)
        if isinstance(dt, T.BooleanType):
            return F.concat(F.lit("b"), c.cast("string"))
        if isinstance(dt, T.TimestampType):
            return F.concat(F.lit("i"), (F.unix_micros(c) * F.lit(1000)).cast("string"))
        return None

    def kind(dt: Any) -> str:
        if isinstance(dt, T.StringType):
            return "string"
        if isinstance(dt, T.BooleanType):
            return "boolean"
        return "number"  # integers, doubles, time stamps (nanoseconds)

    kinds = {kind(df.schema[attr].dataType) for _, attr in plan.routed_by if attr in df.columns}
    if len(kinds) > 1:
        return None
    branches = []
    seen = {}
    for qualified, attr in plan.routed_by:
        ty = qualified.rpartition(">")[2]
        # Without a stream column only the type name tells events apart.
        if "stream" not in df.columns and seen.setdefault(ty, attr) != attr:
            return None
        if attr not in df.columns:
            continue  # no event of this type has a key
        key = normalised(qcol(attr), df.schema[attr].dataType)
        if key is None:
            return None
        branches.append((of_type(df, type_field, qualified), key))
    e = F.lit(None).cast("string")
    for cond, key in reversed(branches):
        e = F.when(cond, key).otherwise(e)
    return e


def deadline_column(time_type: Any, time_unit: Optional[str], nanos: int) -> Any:
    """(how, Spark type) of the ``deadline`` column, ``end_time + d``: the time field's
    type for a timestamp, and for a number of ``time_unit`` when ``d`` is a whole
    number of units; a double otherwise (``FOR 500 ms`` over a time in seconds)."""
    from pyspark.sql import types as T

    if isinstance(time_type, (T.TimestampType, T.TimestampNTZType)):
        return DeadlineColumn(nanos, None), time_type
    per = time_unit_nanos(time_unit)
    if isinstance(time_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)) and nanos % per == 0:
        return DeadlineColumn(nanos, per), T.LongType()
    return DeadlineColumn(nanos, per), T.DoubleType()


def prepare(df: Any, plan: QueryPlan, *, type_field: Optional[str], time_field: Optional[str], order_field: Any,
            time_unit: Optional[str], with_kind: bool, deadline_ns: bool = False) -> Prepared:
    """Adds the hidden columns and works out the output schema (with ``deadline_ns``,
    the hidden deadline column of a batch that does not close its deadlines)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    input_columns = list(df.columns)
    type_field, time_field, orders = resolve_columns(input_columns, type_field, time_field, order_field)
    check_input_columns(df, type_field)
    keys = key_exprs(df, plan, type_field)
    if plan.captures and VARIABLES in input_columns:
        raise ValueError(
            f"captures=True adds a field {VARIABLES!r} to each event of `events`, and the DataFrame has a column of "
            "that name: rename it"
        )
    # Every name an output may have, whatever the mode, compared as Spark does
    # (without case), so that a query's output columns do not change with late=.
    taken = {MATCH_ID, START, END, EVENTS, KIND, DEADLINE}
    for _, name, _ in keys:
        if name.lower() in taken:
            raise ValueError(
                f"PARTITION BY column {name!r} has the name of an output column ({', '.join(sorted(taken))}); "
                "rename it in the DataFrame and the query"
            )
    out = df.withColumn(TIME, time_nanos_expr(df, time_field, time_unit))
    for hidden, _, e in keys:
        out = out.withColumn(hidden, e)
    split = [hidden for hidden, _, _ in keys]
    if plan.routed_by:
        route = routing_key(df, plan, type_field)
        if route is None:
            split = []  # a column type without a routing form here: one task (see _batch)
        else:
            out = out.withColumn(ROUTE, route)
            split.append(ROUTE)
    # Row hashes of match_id (see _match_id): keys, time, order values, hashed in
    # the task unless a column's type is one only Spark hashes.
    identity_columns: Optional[List[str]] = [h for h, _, _ in keys] + [TIME] + list(orders)
    if not all(task_hashable(out.schema[c].dataType) for c in identity_columns):
        identity = [qcol(c) for c in identity_columns]
        out = out.withColumn(H0, F.xxhash64(*identity)).withColumn(H1, F.xxhash64(F.lit(1).cast("long"), *identity))
        identity_columns = None
    engine_columns = [type_field] + [c for c in ("stream",) if c in input_columns]
    engine_columns += [a for a in plan.attributes if a in input_columns and a not in engine_columns and a != "type"]
    check_read_types(df, [c for c in engine_columns if c not in (type_field, "stream")])
    engine_columns.append(TIME)
    engine_schema = engine_view_schema(out.schema, engine_columns)
    check_names(plan, [MATCH_ID, START, END, DEADLINE, KIND, EVENTS, "event_index", *(k[1] for k in keys)])
    measures = measure_fields(plan, engine_schema)
    fields = [T.StructField(name, out.schema[hidden].dataType, True) for hidden, name, _ in keys]
    time_type = df.schema[time_field].dataType
    fields += [
        T.StructField(MATCH_ID, T.StringType(), False),
        T.StructField(START, time_type, True),
        T.StructField(END, time_type, True),
    ]
    deadline = None
    if plan.deadline_ns is not None:
        deadline, deadline_type = deadline_column(time_type, time_unit, plan.deadline_ns)
        fields.append(T.StructField(DEADLINE, deadline_type, True))
    if with_kind:
        fields.append(T.StructField(KIND, T.StringType(), False))
    fields += [T.StructField(name, dtype, True) for name, dtype in measures]
    event_fields = [df.schema[c] for c in input_columns]
    if plan.captures:
        event_fields.append(T.StructField(VARIABLES, T.ArrayType(T.StringType(), False), True))
    fields.append(T.StructField(EVENTS, T.ArrayType(T.StructType(event_fields), False), False))
    if deadline_ns:
        fields.append(T.StructField(DEADLINE_NS, T.LongType(), False))
    return Prepared(
        df=out,
        input_columns=input_columns,
        type_field=type_field,
        time_field=time_field,
        key_hidden=[k[0] for k in keys],
        key_names=[k[1] for k in keys],
        order_fields=orders,
        engine_columns=engine_columns,
        output_schema=T.StructType(fields),
        deadline=deadline,
        measures=[name for name, _ in measures],
        engine_schema=engine_schema,
        split_columns=split if plan.split_by_key else [],
        identity_columns=identity_columns,
    )


def task_hashable(dt: Any) -> bool:
    """Whether the task hashes a column of Spark type ``dt`` as Spark's ``xxhash64``
    does (ceql-engine's ``row_hash``: the types that reach Python as Arrow
    integers, floats, booleans, dates, microsecond time stamps, decimals, strings and
    binaries)."""
    from pyspark.sql import types as T

    simple = (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType,
              T.DateType, T.TimestampType, T.TimestampNTZType, T.DecimalType, T.StringType, T.BinaryType, T.NullType)
    if isinstance(dt, T.StringType) and getattr(dt, "collation", "UTF8_BINARY") != "UTF8_BINARY":
        return False  # Spark hashes a collated string's collation key, not its bytes
    return isinstance(dt, simple)
