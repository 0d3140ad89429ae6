"""Type stubs of the native module ``ceql._ceql`` (PyO3 bindings of ceql-engine)."""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

__version__: str

class Match:
    """A complex event: interval ``[start, end]`` and the positions of its events."""

    def __init__(self, start: int, end: int, positions: Sequence[int], source: Optional[Any] = None) -> None: ...
    @property
    def start(self) -> int:
        """First position of the interval."""
    @property
    def end(self) -> int:
        """Last position of the interval (where the match was reported)."""
    @property
    def positions(self) -> Tuple[int, ...]:
        """Positions of the matched events, ascending."""
    @property
    def deadline(self) -> Optional[int]:
        """For a query ending with ``ABSENT(...) FOR d``: the deadline that ended the match
        (the time stamp of its last event plus ``d``, in nanoseconds); ``None`` otherwise."""
    @property
    def events(self) -> List[Dict[str, Any]]:
        """The matched events' data, in position order."""
    @property
    def captures(self) -> Dict[str, Tuple[int, ...]]:
        """With ``captures=True``: the positions each variable captured."""
    @property
    def variables(self) -> Tuple[Tuple[str, ...], ...]:
        """With ``captures=True``: the variables of each position."""
    def events_of(self, name: str) -> List[Dict[str, Any]]:
        """With ``captures=True``: the events variable ``name`` captured."""
    @property
    def measures(self) -> Dict[str, Any]:
        """The measures of the ``SELECT`` list, ``{name: value}`` (empty without)."""
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class NativeQuery:
    """A compiled query."""

    def __init__(self, text: str, schema: Optional[str] = None, compat_ignore_strategy: bool = False) -> None: ...
    @property
    def text(self) -> str: ...
    def warnings(self) -> List[Tuple[str, str, int, int, int, str]]: ...
    def describe(self) -> Dict[str, Any]: ...
    def explain(self) -> str: ...
    def to_dot(self) -> str: ...
    def normalized_formula(self) -> str: ...
    def automaton(self) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]: ...
    def measure_names(self) -> List[str]: ...

class NativeRuntime:
    """One evaluation of a query over an unbounded input."""

    def __init__(
        self,
        query: NativeQuery,
        time_field: Optional[str] = None,
        time_unit_nanos: int = 1,
        late_drop: bool = False,
        max_cache_bytes: Optional[int] = None,
        max_det_states: Optional[int] = None,
        max_state_bytes: Optional[int] = None,
        max_delay: Optional[int] = None,
        captures: bool = False,
        type_field: Optional[str] = None,
    ) -> None: ...
    @property
    def captures(self) -> bool: ...
    @property
    def type_field(self) -> str: ...
    def attribute_names(self) -> List[str]: ...
    def next_position(self) -> int: ...
    def horizon(self) -> int: ...
    def push_events(self, events: Iterable[Any], source: Optional[Any] = None, first_tag: int = 0) -> List[Match]: ...
    def reorders(self) -> bool: ...
    def take_fates(self) -> List[Tuple[int, bool]]: ...
    def held_tags(self) -> List[int]: ...
    def flush(self, source: Optional[Any] = None) -> List[Match]: ...
    def push_arrow_delayed(
        self, data: Optional[Any], first_tag: int, ties: Optional[List[bytes]] = None, watermark_ns: Optional[int] = None
    ) -> "ArrowBatch": ...
    def push_arrow(self, data: Any, source: Optional[Any] = None) -> List[Match]: ...
    def take_matches(self, source: Optional[Any] = None) -> List[Match]:
        """The matches a failed push left behind (those that ended before the bad
        event), as for a successful push; empties the buffer."""
    def push_arrow_columnar(self, data: Any, first_id: int, narrow: bool, whole: bool) -> "ArrowBatch": ...
    def stats(self) -> Dict[str, Any]: ...
    def explain_cache(self) -> str: ...
    def det_states_dot(self) -> str: ...
    def advance_watermark(self, time: Any, source: Optional[Any] = None, take: bool = False) -> List[Match]: ...
    def close_deadlines(self, source: Optional[Any] = None) -> List[Match]: ...
    def take_fired_arrow(self, close: bool = False, first_id: int = 0, narrow: bool = False) -> "ArrowBatch":
        """The matches a watermark fired (and with ``close`` every waiting one) as an
        Arrow batch (the columns of ``push_arrow_columnar``, ids from ``first_id``,
        uint32 positions when ``narrow``): the Spark glue's output, and the end of
        ``run_arrow(close_deadlines=True)``."""
    def waiting_deadlines(self) -> int: ...
    def next_deadline(self) -> Optional[int]: ...
    def time_scale(self) -> int: ...
    def is_idle(self) -> bool: ...
    def snapshot(self) -> bytes: ...
    @staticmethod
    def restore(query: NativeQuery, data: bytes) -> "NativeRuntime": ...

class ArrowBatch:
    """A record batch exported through the Arrow PyCapsule interface (once)."""

    def __arrow_c_array__(self, requested_schema: Optional[Any] = None) -> Tuple[Any, Any]: ...
    def __len__(self) -> int: ...

def empty_output(
    narrow: bool, captures: bool = False, query: Optional[NativeQuery] = None, events: Optional[Any] = None
) -> ArrowBatch:
    """An empty batch in the layout of ``push_arrow_columnar``'s output (uint32 row
    numbers when ``narrow``, the measure columns of ``query`` typed from the Arrow
    data ``events``), for its schema."""

def match_id_row_hashes(data: Any, names: Tuple[str, str]) -> ArrowBatch:
    """The row hashes ``r0, r1`` of ``match_id`` (Spark's ``xxhash64`` of the columns
    of ``data``, in order, and of ``CAST(1 AS BIGINT)`` then them) as a batch of two
    int64 columns named ``names``; ``TypeError`` for a column type it does not hash."""

def match_id_lanes(
    seeds: Tuple[int, int], rows: Any, base: int, matches: Any, labels: Optional[Any] = None
) -> ArrowBatch:
    """``h0, h1`` (uint64) of every complex event of ``matches`` (``start``, ``end``,
    ``positions``), from the row hashes ``rows`` (two 64-bit columns) of stream
    positions ``base, base + 1, ...``, and with captures the ``c0, c1`` of every data
    row (``labels``)."""

def match_id_hex(lanes: Any) -> ArrowBatch:
    """The ``match_id`` text of the lanes ``lanes`` (two 64-bit columns ``h0, h1``):
    a batch with one string column ``match_id``, 32 lower-case hex digits each."""
