"""``ceql run --plot PATH``: the matches the timeline draws, kept in bounded memory.

``ceql.plot.timeline`` draws at most ``max_matches`` (150) complex events, an evenly
spaced sample by end, and a strip that counts the matches by where they end. ``ceql
run`` streams its matches (it never holds all of them), so for the picture it keeps
an evenly spaced sample too: every match while there are at most
:data:`PLOT_MATCHES`, then every second, fourth... match (each kept one is only its
start, end and positions, not its events). Up to :data:`PLOT_MATCHES` matches the
picture is exactly ``ceql.plot.timeline``'s; beyond, its lines and its strip are
drawn from the sample, and the title says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, NamedTuple, Optional, Tuple

#: Most complex events ``ceql run --plot`` keeps for the picture.
PLOT_MATCHES = 20_000

_EXTRA = "--plot needs matplotlib, an optional extra: pip install 'ceql[plot]'"


class Span(NamedTuple):
    """What the timeline reads of a complex event."""

    start: int
    end: int
    positions: Tuple[int, ...]


class PlotSample:
    """Every ``stride``-th complex event seen, ``stride`` doubling whenever more than
    ``cap`` are kept: an evenly spaced sample of at most ``cap`` matches (at least
    ``cap // 2`` once the stream has more)."""

    def __init__(self, cap: int = PLOT_MATCHES) -> None:
        self.cap = cap
        self.stride = 1
        self.seen = 0
        self.kept: List[Span] = []

    def add(self, matches: Any) -> None:
        for m in matches:
            if self.seen % self.stride == 0:
                self.kept.append(Span(m.start, m.end, tuple(m.positions)))
                if len(self.kept) > self.cap:
                    self.kept = self.kept[::2]
                    self.stride *= 2
            self.seen += 1


def check_matplotlib(path: Optional[str] = None) -> Optional[str]:
    """None when matplotlib can be imported (and can write ``path``'s format), else
    the message: the extra to install, or the file name to give. Checked before the
    run, not after it."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        return _EXTRA
    if path is None:
        return None
    suffix = Path(path).suffix.lstrip(".").lower()
    kinds = FigureCanvasBase.get_supported_filetypes()
    if suffix not in kinds:
        named = f"`.{suffix}` is not an image format matplotlib writes" if suffix else "it has no extension"
        return f"--plot {path}: {named}; end the file name with .png, .svg or .pdf"
    return None


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st..."""
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def save(sample: PlotSample, events: Any, path: str, name: str, partition_by: Optional[str],
         type_field: str = "type") -> None:
    """Draws the sample over ``events`` (the whole input, as read, its type in
    ``type_field``) into ``path``."""
    from .plot import save_timeline

    n = events.num_rows if hasattr(events, "num_rows") else len(events)
    title = f"{name}: {sample.seen:,} matches over {n:,} events"
    if sample.stride > 1:
        title += f" (drawn from every {_ordinal(sample.stride)} match: {len(sample.kept):,})"
    save_timeline(sample.kept, events, path, partition_by=partition_by, title=title, type_field=type_field)


def partition_lanes(events: Any, groups: List[List[str]]) -> Tuple[Any, Optional[str]]:
    """The events and the field naming each event's partition, for the plot's lanes.
    A key of one attribute is that field; otherwise (``PARTITION BY [w, k]``, read from
    whichever of ``w`` and ``k`` an event has, or several groups) a column is added
    holding the key as the engine reads it, as text: each group's first value that is
    not NULL, the groups joined by ``, ``."""
    if not groups:
        return events, None
    if len(groups) == 1 and len(groups[0]) == 1:
        return events, groups[0][0]
    from .plot import _column

    name = ", ".join(" | ".join(g) for g in groups)
    keys = [_key(list(v), groups) for v in zip(*[_column(events, a) for g in groups for a in g])]
    if isinstance(events, list):
        return [dict(r, **{name: k}) for r, k in zip(events, keys)], name
    import pyarrow as pa

    return events.append_column(name, pa.array(keys, pa.string())), name


def _key(values: List[Any], groups: List[List[str]]) -> Optional[str]:
    """The text of one event's key: ``values`` holds every group's attributes in
    order; None when a group has no value (the event has no partition)."""
    parts, i = [], 0
    for g in groups:
        present = [v for v in values[i:i + len(g)] if v is not None]
        i += len(g)
        if not present:
            return None
        value = present[0]
        # A text that reads like a number or a boolean is quoted: the engine keys
        # 1 and "1" apart, and so must the lanes.
        parts.append(repr(value) if isinstance(value, str) and _reads_as_other(value) else str(value))
    return ", ".join(parts)


def _reads_as_other(text: str) -> bool:
    """Whether ``text`` prints like a value of another kind (``1``, ``2.5``, ``True``)."""
    try:
        float(text)
        return True
    except ValueError:
        return text in ("True", "False", "None")
