"""``ceql.compile`` and the compiled :class:`Query`."""

from __future__ import annotations

import operator
import re
from typing import Any, Iterator, List, Optional

from . import _ceql
from ._inputs import Kind, classify, for_columns, for_push, narrow_positions, record_batches
from ._options import RunOptions, reserved_fields
from ._sources import PandasSource
from .arrow import matches_table
from .errors import CeqlError, CeqlWarning

#: String literals and quoted names (kept) and comments (dropped by ``Query.__repr__``), docs/language.md#s2-1.
_COMMENT = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`|--[^\n]*|/\*.*?(?:\*/|\Z)", re.S)

Match = _ceql.Match


def compile(text: str, schema: Optional[str] = None, *, compat_ignore_strategy: bool = False) -> "Query":
    """Compiles a CEQL query.

    ``schema`` is optional ``CREATE STREAM`` text fixing attribute types (errors are
    then reported at compile time); without it, types come from the data. The query
    text itself may also start with ``CREATE STREAM`` declarations.

    Raises :class:`ceql.CeqlSyntaxError` or a :class:`ceql.CeqlSemanticError`
    subclass with ``code``, ``line`` and ``column``. A leading byte-order mark (text
    read from a file an editor saved with one) is not part of the query.
    """
    if isinstance(text, str):
        text = text.removeprefix("\ufeff")
    if isinstance(schema, str):
        schema = schema.removeprefix("\ufeff")
    native = _ceql.NativeQuery(text, schema, compat_ignore_strategy)
    return Query(native, text, schema, compat_ignore_strategy)


def _summary(text: str) -> str:
    """``text`` on one line: comments dropped, each run of white space outside string
    literals and quoted names made one space, the literals kept as written."""
    out: List[str] = []
    code: List[str] = []

    def flush() -> None:
        if code:
            out.append(re.sub(r"\s+", " ", "".join(code)))
            code.clear()

    at = 0
    for m in _COMMENT.finditer(text):
        code.append(text[at:m.start()])
        if m.group()[0] in "'\"`":
            flush()
            out.append(m.group())
        else:
            code.append(" ")
        at = m.end()
    code.append(text[at:])
    flush()
    return "".join(out).strip()


def _compile_again(text: str, schema: Optional[str], compat_ignore_strategy: bool) -> "Query":
    """Unpickles a :class:`Query`."""
    return compile(text, schema, compat_ignore_strategy=compat_ignore_strategy)


class Query:
    """A compiled query. Evaluate it with :meth:`run` (finite input) or
    :meth:`stream` (unbounded input)."""

    def __init__(self, native: "_ceql.NativeQuery", text: str, schema: Optional[str],
                 compat_ignore_strategy: bool = False) -> None:
        self._native = native
        self.text = text
        self.schema = schema
        self._compat_ignore_strategy = compat_ignore_strategy

    def __reduce__(self) -> Any:
        """A query pickles as its text and compiles again when unpickled (to
        another process or a Spark executor, say); a stream's state goes with
        :meth:`Stream.snapshot` instead."""
        return (_compile_again, (self.text, self.schema, self._compat_ignore_strategy))

    @property
    def warnings(self) -> List[CeqlWarning]:
        """Warnings of the static checks (``W04xx``)."""
        return [CeqlWarning(*w) for w in self._native.warnings()]

    @property
    def measure_names(self) -> List[str]:
        """The names of the measures of the ``SELECT`` list (``count(b) AS n``), in order:
        the keys of :attr:`Match.measures` and the measure columns of :meth:`run_arrow`
        (docs/language.md#s3-5a)."""
        return list(self._native.measure_names())

    def describe(self) -> dict:
        """Facts about the compiled query: its automaton's size (``states``,
        ``transitions``, ``predicates``), its clauses (``window``, ``partition_by``,
        ``consume``, ``limit``, ``strategy``...), and what distribution layers ask:
        ``key_independent``, ``routed_by``, ``relevant_types`` (the event types that
        can change the result, docs/language.md#s5-7)."""
        return dict(self._native.describe())

    def run(
        self,
        events: Any,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
        max_state_bytes: Optional[int] = None,
        max_delay: Any = None,
        close_deadlines: bool = False,
        captures: bool = False,
        type_field: str = "type",
    ) -> List["_ceql.Match"]:
        """Evaluates the query over ``events`` and returns every complex event, in
        order of ``end`` (for a trailing ``ABSENT(...) FOR d``: in order of deadline).

        ``events`` is an iterable of mappings with a ``"type"`` key (and optionally
        ``"stream"``), a pandas DataFrame, or Arrow data (pyarrow Table/RecordBatch,
        or anything with ``__arrow_c_stream__``) with a ``type`` column. Positions are
        0-based indexes into ``events`` as given. ``type_field`` names another field
        as the event type (``type_field="event_type"``), with no copy of the data.

        ``time_field`` names the time stamp for duration windows (``WITHIN 10
        seconds``); numbers are in ``time_unit`` (``s``, ``ms``, ``us``, ``ns``),
        datetimes and Arrow timestamps carry their unit. Under a duration window, time
        going backwards raises :class:`ceql.CeqlEventError` unless ``late="drop"``
        (other windows read no time stamps, unless ``max_delay`` orders by them).

        ``max_cache_bytes`` / ``max_det_states`` bound the lazy determinization cache
        (defaults 64 MiB / 4096 states), the det-states that live runs are in
        included. When it is full it is cleared and rebuilt from the det-states
        still in use, so a query with many det-states runs slower but within its
        budget; when the det-states in use alone exceed it (a query whose
        determinization explodes), the evaluation raises
        :class:`ceql.CeqlMemoryError`, whose message names the construct of the
        query that multiplies them and the limit to raise.

        ``max_state_bytes`` bounds the whole state of the evaluation: the
        determinization cache, the tECS nodes of partial matches, and the
        partitions (with the NEXT/LAST/MAX strategy state they keep). The default,
        ``None``, is half of the memory the process may use (the least of the
        physical memory, the cgroup's limit and the address space left under
        ``ulimit -v``). An evaluation that outgrows it raises
        :class:`ceql.CeqlMemoryError`, whose message names the part that
        dominates, instead of being killed by the kernel. Like a bad event's
        error, it carries the matches that ended before it in ``matches``.

        Every budget is ``None`` or a positive integer; anything else raises a
        ``ValueError`` naming the argument.

        ``captures=True`` reports which variable captured which event
        (docs/language.md#s3-2a): every match is then a *valuation*, with
        :attr:`Match.captures` (``{variable: positions}``), :attr:`Match.variables`
        (the variables of each position) and :meth:`Match.events_of`. Variables are
        the event types and ``AS`` names of the query (and ``S>T`` where written),
        restricted to the ``SELECT`` list. Two valuations of one complex event are
        two matches: ``(A AS x) OR (A AS y)`` over one ``A`` gives
        ``{"A": (0,), "x": (0,)}`` and ``{"A": (0,), "y": (0,)}``.

        ``max_delay`` (seconds, a ``datetime.timedelta`` or text such as ``"10
        seconds"``) evaluates input that is out of time order by at most that
        much as if it were sorted by time stamp (docs/language.md#s3-7a): it
        needs ``time_field`` (or a declared ``primary_time``); positions are then
        those of the sorted stream, and events later than the bound are late
        (``late=``). Everything is released at the end of ``events``.

        A query ending with ``ABSENT(...) FOR d`` reports a match once its deadline
        has passed inside the input (an event with a later time stamp);
        ``close_deadlines=True`` also reports the matches whose deadline is after
        the last event, as if the input ended with time passing them all
        (docs/language.md#s3-3b).
        """
        options = RunOptions(time_field, time_unit, late, max_cache_bytes, max_det_states, max_state_bytes,
                             max_delay=max_delay, captures=captures, type_field=type_field)
        if options.max_delay is not None:
            stream = Stream(self, options.runtime(self))
            matches = stream.push_many(events)
            matches += stream.flush()
            if close_deadlines:
                matches += stream.close_deadlines()
            return matches
        return self._run(events, options, close_deadlines)

    def _run(self, events: Any, options: RunOptions, close_deadlines: bool = False) -> List["_ceql.Match"]:
        """:meth:`run` with its options made: a lazy iterable goes through a
        :class:`Stream` chunk by chunk, anything else is pushed at once."""
        rt = options.runtime(self)
        kind = classify(events)
        if kind is Kind.ITERABLE:
            stream = Stream(self, rt)
            matches = stream.push_many(events)
            return matches + stream.close_deadlines() if close_deadlines else matches
        pushable = for_push(events, kind, 0, reserved_fields(options.type_field))
        # Match.events of a frame reads the frame's own rows.
        source = PandasSource(events) if kind is Kind.PANDAS else pushable.source()
        try:
            matches = pushable.push(rt, source)
        except BaseException as e:
            # The matches that ended before the bad event (or the one over a budget,
            # or one whose mapping failed to read).
            _give_matches(e, lambda: rt.take_matches(source))
            raise
        return matches + list(rt.close_deadlines(source)) if close_deadlines else matches

    def run_arrow(
        self,
        events: Any,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
        max_state_bytes: Optional[int] = None,
        max_delay: Any = None,
        close_deadlines: bool = False,
        captures: bool = False,
        type_field: str = "type",
        position_type: Optional[str] = None,
    ) -> Any:
        """Like :meth:`run`, but returns the matches as a ``pyarrow.Table`` built in
        Rust without per-match Python objects: ``match_id`` (uint64), ``start``,
        ``end`` and ``positions`` (a large_list), the row numbers of the events.
        Use :func:`ceql.join_events` to attach the events' columns. The other
        parameters are those of :meth:`run`.

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

        With ``captures=True`` the table has one more column, ``variables``
        (``large_list<large_list<dictionary<int32, string>>>``), parallel to
        ``positions``: the names of the variables that captured each position.

        A query with measures (``SELECT a, count(b) AS n``) has one more column per
        measure, named after it, typed from the declarations or, without them, from
        the input's column (docs/language.md#s3-5a).

        ``close_deadlines=True`` is that of :meth:`run`: the matches of a trailing
        absence whose deadline is after the last event come last. ``max_delay`` is
        refused with a ``ValueError``: the row numbers of this table index the input
        as given, so sort it by time instead (``table.sort_by(time_field)``, a
        stable sort: ties keep their order, as with ``max_delay``).
        """
        import pyarrow as pa

        refuse_max_delay(max_delay, "run_arrow")
        options = RunOptions(time_field, time_unit, late, max_cache_bytes, max_det_states, max_state_bytes,
                             captures=captures, type_field=type_field)
        data, rows = for_columns(events, reserved_fields(options.type_field))
        narrow = narrow_positions(data if data is not None else rows, position_type)
        if data is None:
            return self._row_by_row_table(rows, options, narrow, close_deadlines)
        rt = options.runtime(self)
        batch = pa.record_batch(rt.push_arrow_columnar(data, 0, narrow, True))
        fired = pa.record_batch(rt.take_fired_arrow(True, batch.num_rows, narrow)) if close_deadlines else None
        if fired is None or not fired.num_rows:
            return pa.Table.from_batches([batch])
        return pa.Table.from_batches([batch, _as_schema(fired, batch.schema)])

    def run_arrow_batches(
        self,
        events: Any,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
        max_state_bytes: Optional[int] = None,
        max_delay: Any = None,
        close_deadlines: bool = False,
        captures: bool = False,
        type_field: str = "type",
        slice_rows: int = 4096,
        position_type: Optional[str] = None,
    ) -> Any:
        """Like :meth:`run_arrow`, but returns a ``pyarrow.RecordBatchReader`` that
        evaluates the input ``slice_rows`` rows at a time as it is read, and yields
        the matches of each slice that has any as one batch (same columns, and the
        same choice of uint32 or uint64 row numbers; match ids continue across
        batches). The other parameters are those of :meth:`run`.

        Memory holds one slice's matches at a time instead of all of them, and a
        batch that the reader's consumer has dropped leaves memory that the next
        batch reuses. For outputs of millions of matches this is faster than
        :meth:`run_arrow` and keeps memory bounded. Errors in the input (a
        :class:`CeqlEventError`, for example) are raised while reading, with the
        matches of the slices before it already delivered; so is a
        :class:`CeqlMemoryError` of ``max_state_bytes``. Events that Arrow cannot
        type are evaluated at once, as :meth:`run_arrow` does, and their errors are
        raised by this call. ``close_deadlines`` and ``max_delay`` are those of
        :meth:`run_arrow`.
        """
        import pyarrow as pa

        refuse_max_delay(max_delay, "run_arrow_batches")

        try:
            step = operator.index(slice_rows)  # int, numpy integers
        except TypeError:
            step = 0
        if isinstance(slice_rows, bool) or step < 1:
            raise ValueError(f"slice_rows must be a positive integer, not {slice_rows!r}")
        options = RunOptions(time_field, time_unit, late, max_cache_bytes, max_det_states, max_state_bytes,
                             captures=captures, type_field=type_field)
        data, rows = for_columns(events, reserved_fields(options.type_field))
        narrow = narrow_positions(data if data is not None else rows, position_type)
        if data is None:
            table = self._row_by_row_table(rows, options, narrow, close_deadlines)
            return pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
        rt = options.runtime(self)
        batches = record_batches(data)
        schema = _output_schema(narrow, options.captures, self._native, _schema_of(data, batches))

        def matches() -> Iterator[Any]:
            first = 0
            for batch in batches:
                for offset in range(0, batch.num_rows, step):
                    out = pa.record_batch(rt.push_arrow_columnar(batch.slice(offset, step), first, narrow, False))
                    if out.num_rows:
                        first += out.num_rows
                        yield out
            if close_deadlines:
                fired = pa.record_batch(rt.take_fired_arrow(True, first, narrow))
                if fired.num_rows:
                    yield _as_schema(fired, schema)

        return pa.RecordBatchReader.from_batches(schema, matches())

    def _row_by_row_table(self, rows: Any, options: RunOptions, narrow: bool, close_deadlines: bool = False) -> Any:
        """The ``run_arrow`` table of events Arrow cannot type: evaluated row by row
        with :meth:`run`, in the schema of the engine's own Arrow output."""
        found = self._run(rows, options, close_deadlines)
        return matches_table(found, _output_schema(narrow, options.captures, self._native))

    def stream(
        self,
        time_field: Optional[str] = None,
        time_unit: str = "ns",
        *,
        late: str = "error",
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
        max_state_bytes: Optional[int] = None,
        max_delay: Any = None,
        captures: bool = False,
        type_field: str = "type",
    ) -> "Stream":
        """A stateful evaluator for unbounded input; see :class:`ceql.Stream`.
        Parameters as for :meth:`run`; the budgets bound the stream's state at
        any time (the events a ``max_delay`` buffer holds included). The options,
        budgets included, are kept in its snapshots.

        With ``max_delay`` the stream holds each event until the watermark (the
        largest time stamp seen minus ``max_delay``, or a later time given to
        :meth:`Stream.advance_watermark`) passes it, and evaluates events in
        (time stamp, arrival) order; :meth:`Stream.flush` releases everything.
        ``captures=True`` reports each match's captures, as for :meth:`run`."""
        options = RunOptions(time_field, time_unit, late, max_cache_bytes, max_det_states, max_state_bytes,
                             max_delay=max_delay, captures=captures, type_field=type_field)
        return Stream(self, options.runtime(self))

    def __repr__(self) -> str:
        # The query's own words: the comments that often open a query file go
        # (``Query.text`` has it whole).
        text = _summary(self.text) or " ".join(self.text.split())
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


from .stream import Stream, _give_matches  # noqa: E402  (circular: Stream needs Query)


def _output_schema(narrow: bool, captures: bool = False, native: Any = None, events_schema: Any = None) -> Any:
    """The schema of the engine's Arrow output (uint32 row numbers when ``narrow``,
    a ``variables`` column with ``captures``, the measure columns of the query
    ``native`` typed from the input's ``events_schema``), read from an empty batch
    the binding builds without evaluating anything."""
    import pyarrow as pa

    events = events_schema.empty_table() if events_schema is not None else None
    return pa.record_batch(_ceql.empty_output(narrow, captures, native, events)).schema


def _schema_of(data: Any, batches: Any) -> Any:
    """The Arrow schema of the input ``data`` (read as ``batches``), or ``None``."""
    import pyarrow as pa

    if isinstance(batches, pa.RecordBatchReader):
        return batches.schema
    if isinstance(batches, list) and batches:
        return batches[0].schema
    return getattr(data, "schema", None)


def refuse_max_delay(max_delay: Any, runner: str) -> None:
    """The Arrow runners number the input's rows as given, which a reorder buffer
    would renumber: they take sorted input instead."""
    if max_delay is not None:
        raise ValueError(
            f"{runner} does not take max_delay: its row numbers index the input as given. Sort the input by "
            "time first (pyarrow: table.sort_by(time_field), a stable sort), or use run(..., max_delay=...)"
        )


def _as_schema(batch: Any, schema: Any) -> Any:
    """``batch`` in ``schema`` (the closed deadlines' batch, whose `variables` column
    may be typed differently when it is empty)."""
    return batch if batch.schema == schema else batch.cast(schema)
