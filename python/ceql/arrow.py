"""Helpers for matches as Arrow tables (``Query.run_arrow``)."""

from __future__ import annotations

from typing import Any, Dict, List

from ._inputs import refuse_duplicate_columns, rereadable_arrow


def join_events(matches: Any, events: Any) -> Any:
    """One row per (match, matched event): ``match_id``, ``start``, ``end``,
    ``index`` (0-based position of the event inside the match), ``position`` and
    every column of ``events`` (the Arrow data the matches were computed on:
    pyarrow, polars or any ``__arrow_c_stream__`` producer; positions are its row
    numbers). ``matches`` is a table from ``Query.run_arrow`` or a batch from
    ``Query.run_arrow_batches``. With ``captures=True`` those have a
    ``variables`` column, and each row gets ``variables`` too: the names of the
    variables that captured its event (``large_list<dictionary<int32, string>>``).
    A query with measures has a column per measure in ``matches``, and each row gets
    its match's measures (docs/language.md#s3-5a).
    An event column named like one of the match columns is renamed ``event_<name>``. String-view columns (polars' strings) come back
    as ``large_string``, since pyarrow cannot gather rows of string views.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    events = rereadable_arrow(events)
    refuse_duplicate_columns(events.schema.names, 0)
    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(matches, pa.RecordBatch):
        matches = pa.Table.from_batches([matches])
    positions = matches.column("positions").combine_chunks()
    parents = pc.list_parent_indices(positions)
    flat = pc.list_flatten(positions)
    # index inside the match = flat offset - offset of the match's first element
    starts = pc.take(pc.subtract(positions.offsets, positions.offsets[0]), parents)
    index = pc.subtract(pa.array(range(len(flat)), pa.int64()), pc.cast(starts, pa.int64()))
    rows = _take_rows(events, flat)
    columns = {
        "match_id": pc.take(matches.column("match_id"), parents),
        "start": pc.take(matches.column("start"), parents),
        "end": pc.take(matches.column("end"), parents),
        "index": index,
        "position": flat,
    }
    if "variables" in matches.column_names:
        columns["variables"] = pc.list_flatten(matches.column("variables").combine_chunks())
    for name in matches.column_names:
        if name not in _MATCH_COLUMNS:  # a measure
            columns[name] = pc.take(matches.column(name), parents)
    # An event column named like a match column is prefixed with `event_` (as
    # often as needed to be unique among every other column name).
    taken = set(columns) | set(rows.column_names)
    for name in rows.column_names:
        out = name
        if name in columns:
            out = f"event_{name}"
            while out in taken:
                out = f"event_{out}"
            taken.add(out)
        columns[out] = rows.column(name)
    return pa.table(columns)


#: The columns of the engine's Arrow output that are not measures.
_MATCH_COLUMNS = {"match_id", "start", "end", "positions", "variables"}


def _take_rows(events: Any, indices: Any) -> Any:
    """Rows `indices` of a pyarrow Table. pyarrow (26) has no `take` for string or
    binary views: such columns are cast to their large non-view types first."""
    import pyarrow as pa

    try:
        return events.take(indices)
    except pa.ArrowNotImplementedError:
        views = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}
        schema = pa.schema([f.with_type(views.get(f.type, f.type)) for f in events.schema], metadata=events.schema.metadata)
        return events.cast(schema).take(indices)


def matches_table(matches: Any, schema: Any) -> Any:
    """A list of :class:`ceql.Match` as a table of ``schema``, the engine's Arrow
    output (``match_id``, ``start``, ``end``, ``positions``, ``variables`` with
    captures, then the measures). A measure column whose type the schema leaves open
    (``null``: an undeclared attribute of input read row by row) takes the type of its
    values; values of two types raise :class:`ceql.CeqlEventError`
    (docs/language.md#s3-5a)."""
    import pyarrow as pa

    columns = [
        list(range(len(matches))),
        [m.start for m in matches],
        [m.end for m in matches],
        [list(m.positions) for m in matches],
    ]
    if "variables" in schema.names:
        columns.append([[list(v) for v in m.variables] for m in matches])
    fields = list(schema)
    for k, f in enumerate(fields[len(columns):]):
        values = [m.measures[f.name] for m in matches]
        if pa.types.is_null(f.type):
            fields[len(columns)] = f.with_type(_measure_type(f.name, values, matches))
        columns.append(values)
    schema = pa.schema(fields)
    return pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, schema)], schema=schema)


def _measure_type(name: str, values: List[Any], matches: Any) -> Any:
    """The Arrow type of measure ``name`` from its values (``null`` if all are None).
    Integers and doubles make a ``double`` column, as an Arrow double column of the
    input would, when every integer is exact as a double (at most 2^53 in magnitude);
    other mixes raise :class:`ceql.CeqlEventError` at the first match that breaks:
    the first of a second kind, or the one holding an integer beyond 2^53."""
    import pyarrow as pa

    types = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.large_string()}
    first: Dict[Any, Any] = {}  # type -> the first match with a value of it
    for v, m in zip(values, matches):
        if v is not None:
            first.setdefault(types[type(v)], m)
    if len(first) <= 1:
        return next(iter(first), pa.null())
    from .errors import CeqlEventError

    if set(first) == {pa.int64(), pa.float64()}:
        beyond = next((m for v, m in zip(values, matches) if type(v) is int and not -(2**53) <= v <= 2**53), None)
        if beyond is None:
            return pa.float64()
        message = (f"measure `{name}` is an integer in one match and a double in another, and this integer is "
                   f"beyond 2^53, which a double would change; declare the attribute's type (CREATE STREAM) to "
                   f"fix the column's type")
        raise CeqlEventError(message, position=beyond.end, field=name, event_type=None, message=message)
    (found, _), (t, m) = list(first.items())[:2]  # in match order: the first kind, then the first other one
    message = (f"measure `{name}` is {found} in an earlier match and {t} here; declare the "
               f"attribute's type (CREATE STREAM) to fix the column's type")
    raise CeqlEventError(message, position=m.end, field=name, event_type=None, message=message)
