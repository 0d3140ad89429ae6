"""Measures (``SELECT a, count(b) AS n``, docs/language.md#s3-5a) as top-level
output columns: their names, checked against the other output columns, and their
Spark types, which are those of the engine's Arrow measure columns for the
DataFrame's column types (fixed on the driver, before any row is read, so that
every task and micro-batch writes the same schema)."""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from ._checks import HIDDEN_PREFIX
from ._engine import compiled
from ._plan import QueryPlan


def check_names(plan: QueryPlan, taken: Sequence[str]) -> None:
    """Refuses a measure named like another output column (``taken``: ``match_id``,
    ``start_time``, ..., the key columns, and ``explode_events``' ``event_index``).
    Names compare without regard to case, as Spark's columns do by default; the
    alternative, a prefix, would give the column a name the query does not say."""
    lower = {t.lower(): t for t in taken}
    for m in plan.measures:
        other = lower.get(m.lower())
        if other is not None:
            raise ValueError(
                f"measure {m!r} has the name of an output column of ceql.spark ({other!r}); "
                f"rename it in the SELECT list (count(b) AS n_{m}, say)"
            )
        if m.lower().startswith(HIDDEN_PREFIX):
            raise ValueError(f"measure {m!r}: names starting with {HIDDEN_PREFIX!r} are ceql.spark's hidden columns")


def measure_fields(plan: QueryPlan, engine_schema: Any) -> List[Tuple[str, Any]]:
    """(name, Spark type) of each measure, in ``SELECT`` order, for an engine fed
    columns of the Arrow schema ``engine_schema``: ``count`` is ``long``, ``avg``
    ``double``, ``sum``/``min``/``max``/``first``/``last`` the engine's type of the
    attribute's column (``long`` for integers and time stamps, in nanoseconds as
    ``Match.measures`` gives them; ``double``; ``string``; ``boolean``), and ``void``
    (always NULL) for an attribute the DataFrame has no column for."""
    import pyarrow as pa
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import from_arrow_type

    from ceql import _ceql

    if not plan.measures:
        return []
    out = pa.record_batch(
        _ceql.empty_output(False, plan.captures, compiled(plan)._native, engine_schema.empty_table())
    ).schema
    fields = []
    for name in plan.measures:
        t = out.field(name).type
        if pa.types.is_large_string(t):
            t = pa.string()
        fields.append((name, T.NullType() if pa.types.is_null(t) else from_arrow_type(t)))
    return fields
