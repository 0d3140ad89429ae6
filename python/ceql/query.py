"""``ceql.compile`` and the compiled :class:`Query`."""

from __future__ import annotations

import operator
from typing import Any, Iterable, Iterator, List, Optional

from . import _ceql
from ._inputs import (
    checked_arrow,
    is_arrow,
    is_pandas,
    narrow_positions,
    pandas_records,
    pandas_to_arrow,
    records_to_arrow,
    refuse_duplicate_columns,
    rereadable_arrow,
    time_unit_nanos,
)
from ._sources import ArrowSource, ListSource, PandasSource
from .arrow import matches_table
from .errors import CeqlError, CeqlEventError, CeqlWarning

Match = _ceql.Match

_LATE = ("error", "drop")


def compile(text: str, schema: Optional[str] = None, *, compat_ignore_strategy: bool = False) -> "Query":
    """Compiles a CEQL query.

    ``schema`` is optional ``CREATE STREAM`` text fixing attribute types (errors are
    then reported at compile time); without it, types come from the data. The query
    text itself may also start with ``CREATE STREAM`` declarations.

    Raises :class:`ceql.CeqlSyntaxError` or a :class:`ceql.CeqlSemanticError`
    subclass with ``code``, ``line`` and ``column``.
    """
    native = _ceql.NativeQuery(text, schema, compat_ignore_strategy)
    return Query(native, text, schema)


class Query:
    """A compiled query. Evaluate it with :meth:`run` (finite input) or
    :meth:`stream` (unbounded input)."""

    def __init__(self, native: "_ceql.NativeQuery", text: str, schema: Optional[str]) -> None:
        self._native = native
        self.text = text
        self.schema = schema

    @property
    def warnings(self) -> List[CeqlWarning]:
        """Warnings of the static checks (``W04xx``)."""
        return [CeqlWarning(*w) for w in self._native.warnings()]

    def describe(self) -> dict:
        """Facts about the compiled automaton: states, transitions, predicates, window..."""
        return dict(self._native.describe())

    def _runtime(self, time_field: Optional[str], time_unit: str, late: str, **kw: Any) -> "_ceql.NativeRuntime":
        if late not in _LATE:
            raise ValueError(f"late must be 'error' or 'drop', not {late!r}")
        budgets = {name: _budget(name, value) for name, value in kw.items()}
        return _ceql.NativeRuntime(
            self._native,
            time_field=time_field,
            time_unit_nanos=time_unit_nanos(time_unit),
            late_drop=late == "drop",
            **budgets,
        )

    def run(
        self,
        events: Any,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
    ) -> List["_ceql.Match"]:
        """Evaluates the query over ``events`` and returns every complex event, in
        order of ``end``.

        ``events`` is an iterable of mappings with a ``"type"`` key (and optionally
        ``"stream"``), a pandas DataFrame, or Arrow data (pyarrow Table/RecordBatch,
        or anything with ``__arrow_c_stream__``) with a ``type`` column. Positions are
        0-based indexes into ``events`` as given.

        ``time_field`` names the time stamp for duration windows (``WITHIN 10
        seconds``); numbers are in ``time_unit`` (``s``, ``ms``, ``us``, ``ns``),
        datetimes and Arrow timestamps carry their unit. Time going backwards raises
        :class:`ceql.CeqlEventError` unless ``late="drop"``.

        ``max_cache_bytes`` / ``max_det_states`` bound the lazy determinization cache
        (defaults 64 MiB / 4096 states); when full it is cleared and rebuilt, so a
        query whose determinization explodes runs slower but within its budget.
        """
        rt = self._runtime(time_field, time_unit, late, max_cache_bytes=max_cache_bytes, max_det_states=max_det_states)
        if is_arrow(events):
            events = rereadable_arrow(events)
            refuse_duplicate_columns(events.schema.names, 0)
            return _pushed(rt, rt.push_arrow, events, ArrowSource(events))
        if is_pandas(events):
            refuse_duplicate_columns(events.columns, 0)
            table = pandas_to_arrow(events)
            if table is not None:
                return _pushed(rt, rt.push_arrow, table, PandasSource(events))
            return _pushed(rt, rt.push_events, pandas_records(events), PandasSource(events))
        if isinstance(events, (list, tuple)):
            return _pushed(rt, rt.push_events, events, ListSource(events))
        from .stream import Stream

        return Stream(self, rt).push_many(events)

    def run_arrow(
        self,
        events: Any,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
        position_type: Optional[str] = None,
    ) -> Any:
        """Like :meth:`run`, but returns the matches as a ``pyarrow.Table`` built in
        Rust without per-match Python objects: ``match_id`` (uint64), ``start``,
        ``end`` and ``positions`` (a large_list), the row numbers of the events.
        Use :func:`ceql.join_events` to attach the events' columns.

        Row numbers are uint32 when the input's length is known and below 2^32 (a
        pyarrow Table or RecordBatch, a polars or pandas DataFrame, a list), and
        uint64 otherwise (a ``RecordBatchReader`` or another Arrow stream).
        ``position_type="uint32"`` or ``"uint64"`` fixes the type; with uint32, an
        input longer than 2^32 rows raises :class:`CeqlEventError` at the row
        that does not fit.

        ``events`` is best Arrow data. A pandas DataFrame or an iterable of mappings
        is converted with pyarrow; events that Arrow cannot type (a field mixing
        value types) are evaluated row by row with :meth:`run` and the table is
        built from its matches.
        """
        import pyarrow as pa

        data, rows, narrow = _arrow_input(events, position_type)
        if data is None:
            return self._row_by_row_table(rows, time_field, time_unit, late, max_cache_bytes, max_det_states, narrow)
        rt = self._runtime(time_field, time_unit, late, max_cache_bytes=max_cache_bytes, max_det_states=max_det_states)
        batch = pa.record_batch(rt.push_arrow_columnar(data, 0, narrow, True))
        return pa.Table.from_batches([batch])

    def run_arrow_batches(
        self,
        events: Any,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
        slice_rows: int = 4096,
        position_type: Optional[str] = None,
    ) -> Any:
        """Like :meth:`run_arrow`, but returns a ``pyarrow.RecordBatchReader`` that
        evaluates the input ``slice_rows`` rows at a time as it is read, and yields
        the matches of each slice that has any as one batch (same columns, and the
        same choice of uint32 or uint64 row numbers; match ids continue across
        batches).

        Memory holds one slice's matches at a time instead of all of them, and a
        batch that the reader's consumer has dropped leaves memory that the next
        batch reuses. For outputs of millions of matches this is faster than
        :meth:`run_arrow` and keeps memory bounded. Errors in the input (a
        :class:`CeqlEventError`, for example) are raised while reading, with the
        matches of the slices before it already delivered. Events that Arrow cannot
        type are evaluated at once, as :meth:`run_arrow` does, and their errors are
        raised by this call.
        """
        import pyarrow as pa

        try:
            rows = operator.index(slice_rows)  # int, numpy integers
        except TypeError:
            rows = 0
        if isinstance(slice_rows, bool) or rows < 1:
            raise ValueError(f"slice_rows must be a positive integer, not {slice_rows!r}")
        data, fallback, narrow = _arrow_input(events, position_type)
        if data is None:
            table = self._row_by_row_table(fallback, time_field, time_unit, late, max_cache_bytes, max_det_states, narrow)
            return pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
        rt = self._runtime(time_field, time_unit, late, max_cache_bytes=max_cache_bytes, max_det_states=max_det_states)
        if isinstance(data, pa.RecordBatch):
            batches: Any = pa.Table.from_batches([data])
        elif isinstance(data, (pa.Table, pa.RecordBatchReader)):
            batches = data
        else:
            batches = pa.table(data)
        # Pushing no rows gives the output schema without moving the stream on.
        schema = pa.record_batch(rt.push_arrow_columnar(batches.schema.empty_table(), 0, narrow, False)).schema
        if isinstance(batches, pa.Table):
            batches = batches.to_batches()

        def matches() -> Iterator[Any]:
            first = 0
            for batch in batches:
                for offset in range(0, batch.num_rows, rows):
                    out = pa.record_batch(rt.push_arrow_columnar(batch.slice(offset, rows), first, narrow, False))
                    if out.num_rows:
                        first += out.num_rows
                        yield out

        return pa.RecordBatchReader.from_batches(schema, matches())

    def _row_by_row_table(self, rows: Any, time_field: Optional[str], time_unit: str, late: str,
                          max_cache_bytes: Optional[int], max_det_states: Optional[int], narrow: bool) -> Any:
        """The ``run_arrow`` table of events Arrow cannot type: evaluated row by row
        with :meth:`run`, in the schema of the engine's own Arrow output."""
        import pyarrow as pa

        matches = self.run(rows, time_field, time_unit, late=late, max_cache_bytes=max_cache_bytes,
                           max_det_states=max_det_states)
        rt = self._runtime(time_field, time_unit, late, max_cache_bytes=max_cache_bytes, max_det_states=max_det_states)
        # Pushing no rows gives the output schema.
        schema = pa.record_batch(rt.push_arrow_columnar(pa.table({"type": pa.array([], pa.string())}), 0, narrow, False)).schema
        return matches_table(matches, schema)

    def stream(
        self,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
    ) -> "Stream":
        """A stateful evaluator for unbounded input; see :class:`ceql.Stream`.
        Parameters as for :meth:`run`."""
        from .stream import Stream

        rt = self._runtime(time_field, time_unit, late, max_cache_bytes=max_cache_bytes, max_det_states=max_det_states)
        return Stream(self, rt)

    def __repr__(self) -> str:
        text = " ".join(self.text.split())
        return f"ceql.compile({text[:60] + ('...' if len(text) > 60 else '')!r})"

    # -- seeing what the engine does (the logic is in ceql/explain.py) ----------
    def explain(self) -> str:
        """What the compiler made of the query, as text: the formula after filter
        push-down, the predicates and their bit index, the automaton's states and
        transitions (event types, filters, ``AS`` variables, output marks, final
        states), the clauses (window, partitioning, strategy, consumption, limit) and
        the warnings. :meth:`ceql.Stream.explain` adds the determinization cache."""
        from . import explain as _explain

        return _explain.explain(self)

    def to_dot(self, stream: Optional["Stream"] = None) -> str:
        """The automaton as Graphviz DOT text (``dot -Tsvg`` draws it); with
        ``stream=`` a :class:`ceql.Stream` of this query, the det-states it has
        materialised so far instead. Rendering needs Graphviz (the ``graphviz`` extra
        and the ``dot`` program): see :func:`ceql.explain.to_svg`."""
        from . import explain as _explain

        return _explain.to_dot(self, stream)

    def _repr_svg_(self) -> Optional[str]:
        """A notebook's picture of the automaton, when Graphviz is available."""
        from . import explain as _explain

        if not _explain.graphviz_available():
            return None
        try:
            return _explain.to_svg(self.to_dot())
        except (ImportError, CeqlError):
            return None

    def _repr_html_(self) -> Optional[str]:
        """A notebook's table of the automaton, when Graphviz is not available."""
        from . import explain as _explain

        return None if _explain.graphviz_available() else _explain.automaton_html(self)


from .stream import Stream  # noqa: E402  (circular: Stream needs Query)


def _budget(name: str, value: Any) -> Optional[int]:
    """A cache budget (``max_cache_bytes``, ``max_det_states``) as an int: None
    (the default) or a positive integer below 2^64; anything else is a
    ``ValueError`` naming the argument (a budget of 0 holds no det-state, so no
    event could be evaluated)."""
    if value is None:
        return None
    try:
        n = operator.index(value)  # int, numpy integers
    except TypeError:
        n = -1
    if isinstance(value, bool) or not 0 < n < 2**64:
        raise ValueError(f"{name} must be None or a positive integer below 2**64, not {value!r}")
    return n


def _pushed(rt: Any, push: Any, data: Any, source: Any) -> List[Any]:
    """``push(data, source)``; a bad event's error gets the matches that ended
    before it (``CeqlEventError.matches``)."""
    try:
        return push(data, source)
    except CeqlEventError as e:
        e.matches = list(rt.take_matches(source))
        raise


def _arrow_input(events: Any, position_type: Optional[str]) -> Any:
    """Arrow data for the columnar paths: Arrow objects as they are, pandas frames
    and iterables of mappings converted with pyarrow. Returns ``(data, None,
    narrow)``, or ``(None, events, narrow)`` when Arrow cannot type the events (a
    column mixing value types, say): the caller then evaluates them row by row.
    ``narrow``: whether the output's row numbers are uint32 (see ``run_arrow``)."""
    data, rows = _arrow_data(events)
    return data, rows, narrow_positions(data if data is not None else rows, position_type)


def _arrow_data(events: Any) -> Any:
    """``(data, None)`` or ``(None, events)``, as for :func:`_arrow_input`."""
    if is_pandas(events):
        refuse_duplicate_columns(events.columns, 0)
        table = pandas_to_arrow(events)
        return (table, None) if table is not None else (None, events)
    if is_arrow(events):
        return checked_arrow(events, 0), None
    rows = list(events)
    table = records_to_arrow(rows)
    return (table, None) if table is not None else (None, rows)
