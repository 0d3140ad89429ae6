"""Complex events on a timeline (needs matplotlib: ``pip install 'ceql[plot]'``).

>>> import ceql, ceql.plot
>>> events = [{"type": t} for t in "AABXC"]
>>> matches = ceql.compile("SELECT * FROM S WHERE A ; B ; C").run(events)
>>> fig = ceql.plot.timeline(matches, events)          # a matplotlib Figure
>>> ceql.plot.save_timeline(matches, events, "matches.png")

The input events are drawn as one lane per event type (per partition and type with
``partition_by=``), and each complex event as a line linking its events, so that a match reads
left to right through the lanes of its events. Large inputs stay legible: beyond
``max_events`` the events are drawn as a density per lane, beyond ``max_matches`` an evenly
spaced sample of the matches is drawn, and the figure says so; a strip below the lanes counts
every match by the position (or time) where it ended.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any, Dict, List, Optional, Tuple

__all__ = ["timeline", "save_timeline", "COLOR_BY"]

#: Accepted values of ``color_by``: one colour per complex event, or per event type. Colouring
#: by variable will be added with named captures.
COLOR_BY = ("match", "type", "variable")

_EXTRA = "ceql.plot needs matplotlib, an optional extra: pip install 'ceql[plot]'"


def _matplotlib() -> Any:
    """The matplotlib modules used here, or an ImportError naming the extra."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib import collections, colormaps, dates, figure, ticker
    except ImportError as e:  # pragma: no cover - exercised with matplotlib hidden
        raise ImportError(_EXTRA, name="matplotlib") from e
    return collections, colormaps, dates, figure, ticker


def _column(events: Any, name: str) -> List[Any]:
    """The values of field ``name`` of every event, in input order (None where absent)."""
    if hasattr(events, "column_names") and hasattr(events, "column"):  # pyarrow Table / RecordBatch
        if name not in events.column_names:
            return [None] * events.num_rows
        return events.column(name).to_pylist()
    if hasattr(events, "columns") and hasattr(events, "iloc"):  # pandas DataFrame
        if name not in events.columns:
            return [None] * len(events)
        # The engine reads a pandas NaN as a missing value (docs/language.md#s1-1).
        return [None if isinstance(v, float) and v != v else v for v in events[name].tolist()]
    if hasattr(events, "__arrow_c_stream__"):  # polars and other Arrow producers
        import pyarrow as pa

        return _column(pa.table(events), name)
    return [e.get(name) if hasattr(e, "get") else None for e in events]


def _matches(matches: Any) -> List[Tuple[int, int, Tuple[int, ...]]]:
    """(start, end, positions) of ``ceql.Match`` objects or of a ``run_arrow`` table."""
    if hasattr(matches, "column_names") and hasattr(matches, "column"):
        starts = matches.column("start").to_pylist()
        ends = matches.column("end").to_pylist()
        positions = matches.column("positions").to_pylist()
        return [(s, e, tuple(p)) for s, e, p in zip(starts, ends, positions)]
    return [(m.start, m.end, tuple(m.positions)) for m in matches]


def _variables(matches: Any) -> List[Tuple[Tuple[str, ...], ...]]:
    """Per match, the names (types and ``AS`` names) that captured each of its
    positions, in the order of ``positions``: matches of ``captures=True`` only."""
    if hasattr(matches, "column_names") and hasattr(matches, "column"):
        if "variables" not in matches.column_names:
            raise ValueError("color_by='variable' needs the matches of run_arrow(..., captures=True)")
        return [tuple(tuple(names) for names in per) for per in matches.column("variables").to_pylist()]
    try:
        return [tuple(m.variables) for m in matches]
    except ValueError as e:  # a Match computed without captures
        raise ValueError("color_by='variable' needs the matches of run(..., captures=True)") from e


def _variable_label(names: Tuple[str, ...], event_type: Optional[str]) -> str:
    """What a captured event is coloured by: its ``AS`` names, or its type name when
    nothing else captured it (the lane already shows the type)."""
    own = [n for n in names if n != event_type]
    return " / ".join(own or names)


def _coordinates(times: List[Any], dates_mod: Any) -> Tuple[List[float], bool]:
    """Numbers for the x axis: time values as given, datetimes as matplotlib date numbers."""
    import datetime as dt

    first = next((t for t in times if t is not None), None)
    if isinstance(first, (dt.datetime, dt.date)) or hasattr(first, "to_pydatetime"):
        return [math.nan if t is None else float(dates_mod.date2num(t)) for t in times], True
    return [math.nan if t is None else float(t) for t in times], False


def _lane_key(value: Any) -> Any:
    """A partition value as the engine tells partitions apart (without declarations):
    by kind too, so ``1``, ``1.0``, ``True`` and ``"1"`` are four lanes, though Python
    finds the first three equal; ``-0.0`` is ``0.0`` and every NaN one value."""
    if value is None:
        return None
    if isinstance(value, float):
        return ("float", "nan") if value != value else ("float", value + 0.0)
    kind = type(value).__name__
    try:
        hash(value)
    except TypeError:
        return (kind, repr(value))
    return (kind, value)


def _text(key: Any) -> str:
    """The value of a lane key as its label shows it."""
    kind, value = key
    return "nan" if (kind, value) == ("float", "nan") else str(value)


def _order(key: Any) -> Tuple[int, Any, str]:
    """Sort key of lane keys: numbers by value, then everything else as text."""
    if key is None:
        return (2, "", "")
    kind, value = key
    if kind in ("int", "float") and value != "nan":
        return (0, value, kind)
    return (1, _text(key), kind)


def _sample(n: int, k: int) -> List[int]:
    """``k`` indices out of ``range(n)``, evenly spaced, first and last included."""
    if n <= k:
        return list(range(n))
    if k == 1:
        return [n - 1]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def timeline(
    matches: Any,
    events: Any,
    *,
    time_field: Optional[str] = None,
    type_field: str = "type",
    partition_by: Optional[str] = None,
    color_by: str = "match",
    max_events: int = 2000,
    max_matches: int = 150,
    max_lanes: int = 24,
    xlim: Optional[Tuple[float, float]] = None,
    title: Optional[str] = None,
    figsize: Optional[Tuple[float, float]] = None,
) -> Any:
    """Draws complex events over the input events; returns a ``matplotlib.figure.Figure``.

    ``matches`` are the ``ceql.Match`` objects of ``Query.run`` (or a ``Query.run_arrow``
    table); ``events`` is the input they were computed on (a list of dicts, a pandas
    DataFrame, or Arrow data), so that positions index it.

    * x axis: the position, or the field ``time_field`` of each event (numbers or datetimes).
    * One lane per event type (field ``type_field``); with ``partition_by`` (an attribute
      name), one lane per partition value and type, grouped by partition. At most
      ``max_lanes`` lanes are drawn: the partitions with the most matched events first.
    * Each complex event is a line through its events, offset slightly within the lanes so
      that matches sharing events stay apart. ``color_by="match"`` gives each match its own
      colour; ``color_by="type"`` colours the matched events by type, and
      ``color_by="variable"`` by the variables that captured them (their ``AS``
      names, else their type), for matches of ``captures=True`` (the lines are grey).
    * More than ``max_events`` events are drawn as a density per lane; more than
      ``max_matches`` matches as an evenly spaced sample (by end). A note under the plot says
      what was sampled or aggregated, and a strip counts every match by where it ended.
    * ``xlim=(lo, hi)`` draws only that range of the x axis (positions, or times as numbers or
      datetimes): the events in it and the matches that end in it.

    Raises ``ImportError`` naming the ``plot`` extra when matplotlib is missing, and
    ``ValueError`` for an unknown ``color_by``, ``color_by="variable"`` without
    captures, a ``partition_by`` or ``time_field`` that no event has, a reversed
    ``xlim``, or a position outside ``events``.
    """
    if color_by not in COLOR_BY:
        raise ValueError(f"color_by must be one of {', '.join(map(repr, COLOR_BY))}, not {color_by!r}")
    if xlim is not None and not xlim[0] <= xlim[1]:
        raise ValueError(f"xlim=(lo, hi) needs lo <= hi, not {xlim!r}")
    collections, colormaps, dates_mod, figure_mod, ticker = _matplotlib()
    import numpy as np

    found = _matches(matches)
    captured = _variables(matches) if color_by == "variable" else None
    found_all = found  # before xlim keeps the matches that end in view
    types = [None if t is None else str(t) for t in _column(events, type_field)]
    n = len(types)
    for option, field in (("type_field", type_field), ("partition_by", partition_by), ("time_field", time_field)):
        if field and n and all(v is None for v in _column(events, field)):
            raise ValueError(f"{option}={field!r}: no event has a value for that field")
    for s, e, ps in found:
        if e >= n or s < 0 or any(p >= n for p in ps):
            raise ValueError(f"a match refers to position {e}, beyond the {n} events given: pass the input it was computed on")
    keys = [_lane_key(v) for v in _column(events, partition_by)] if partition_by else [None] * n
    if time_field:
        x, is_date = _coordinates(_column(events, time_field), dates_mod)
    else:
        x, is_date = [float(p) for p in range(n)], False

    # Lanes: (partition, type). With too many, keep the partitions with most matched events.
    matched_count: Dict[Any, int] = {}
    for _, _, ps in found:
        for p in ps:
            matched_count[keys[p]] = matched_count.get(keys[p], 0) + 1
    partitions = sorted({k for k in keys}, key=_order)
    type_names = sorted({t for t in types if t is not None})
    lanes_of_partition = {k: sorted({types[p] for p in range(n) if keys[p] == k and types[p] is not None}) for k in partitions} if partition_by else {None: type_names}
    notes: List[str] = []
    if partition_by:
        partitions = [k for k in partitions if k is not None]
        total_parts = len(partitions)
        candidates = [k for k in partitions if matched_count.get(k)] or partitions
        chosen: List[Any] = []
        lanes_used = 0
        for k in sorted(candidates, key=lambda k: (-matched_count.get(k, 0), _order(k))):
            if lanes_used + len(lanes_of_partition[k]) > max_lanes:
                continue
            chosen.append(k)
            lanes_used += len(lanes_of_partition[k])
        partitions = sorted(chosen, key=_order)
        if len(partitions) < total_parts:
            notes.append(f"{len(partitions)} of {total_parts:,} partitions of {partition_by} shown (those with the most matched events)")
    lane_index: Dict[Tuple[Any, str], int] = {}
    labels: List[str] = []
    # Two lanes whose values print alike (1 and "1"): the text one is quoted.
    printed = [_text(k) for k in partitions] if partition_by else []
    clashes = {t for t in printed if printed.count(t) > 1}
    for k in (partitions if partition_by else [None]):
        shown = "" if k is None else (repr(k[1]) if k[0] == "str" and _text(k) in clashes else _text(k))
        for t in lanes_of_partition[k]:
            lane_index[(k, t)] = len(labels)
            labels.append(f"{partition_by}={shown} · {t}" if partition_by else t)

    lo, hi = (-math.inf, math.inf)
    if xlim is not None:
        lo, hi = (_coordinates([xlim[0], xlim[1]], dates_mod)[0] if is_date else (float(xlim[0]), float(xlim[1])))
        found = [m for m in found if lo <= x[m[1]] <= hi]

    def lane(p: int) -> Optional[int]:
        if not lo <= x[p] <= hi:
            return None
        return lane_index.get((keys[p], types[p]))

    # Figure: the lanes on top, the strip of match ends below.
    height = figsize[1] if figsize else min(2.0 + 0.32 * max(len(labels), 3), 11.0)
    fig = figure_mod.Figure(figsize=figsize or (12.0, height + 1.6), layout="constrained")
    ax, strip = fig.subplots(2, 1, sharex=True, height_ratios=[max(len(labels), 3), 1.6])
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.grid(axis="y", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)

    # Input events: markers, or a density per lane.
    visible = [p for p in range(n) if lane(p) is not None and not math.isnan(x[p])]
    if len(visible) <= max_events:
        ax.scatter([x[p] for p in visible], [lane(p) for p in visible], s=120, marker="|", color="0.6",
                   linewidths=1.0, label="input events", zorder=1)
        events_note = None
    else:
        bins = 300
        xs = np.array([x[p] for p in visible])
        edges = np.linspace(xs.min(), xs.max() if xs.max() > xs.min() else xs.min() + 1, bins + 1)
        # Row 2l is lane l (a band of height 0.7), odd rows are the gaps between lanes.
        counts = np.zeros((2 * len(labels) - 1, bins))
        idx = np.clip(np.searchsorted(edges, xs, side="right") - 1, 0, bins - 1)
        np.add.at(counts, (2 * np.array([lane(p) for p in visible]), idx), 1)
        y_edges = np.ravel([[lane_y - 0.35, lane_y + 0.35] for lane_y in range(len(labels))])
        ax.pcolormesh(edges, y_edges, np.ma.masked_equal(counts, 0), cmap="Greys", vmin=0,
                      vmax=max(counts.max(), 1) * 2.5, shading="flat", zorder=0, label="input events (density)")
        events_note = f"{len(visible):,} events of the lanes shown drawn as a density ({bins} bins per lane)"

    # Complex events: a sample when there are many.
    order = sorted(range(len(found)), key=lambda i: (found[i][1], found[i][0], found[i][2]))
    shown = [order[i] for i in _sample(len(order), max_matches)]
    drawn_notes = []
    if len(shown) < len(found):
        drawn_notes.append(f"{len(shown):,} of {len(found):,} matches drawn (evenly spaced by end)")
    if events_note:
        drawn_notes.append(events_note)
    notes = drawn_notes + notes

    # color_by="variable": per match (by the identity of its tuple, which xlim keeps),
    # the label of each position; one event may be captured by other names in another match.
    variable_of: Dict[int, Dict[int, str]] = {}
    if captured is not None:
        for m, names in zip(found_all, captured):
            variable_of[id(m)] = {p: _variable_label(ns, types[p]) for p, ns in zip(m[2], names)}
    variable_names = sorted({v for labels in variable_of.values() for v in labels.values()})
    variable_cmap = colormaps["tab10"] if len(variable_names) <= 10 else colormaps["tab20"]
    variable_colour = {v: variable_cmap(i % variable_cmap.N) for i, v in enumerate(variable_names)}
    cmap = colormaps["tab10"] if color_by == "match" and len(shown) <= 10 else colormaps["turbo"]
    type_cmap = colormaps["tab10"] if len(type_names) <= 10 else colormaps["tab20"]
    type_colour = {t: type_cmap(i % type_cmap.N) for i, t in enumerate(type_names)}
    segments, seg_colours, points, point_colours = [], [], [], []
    hidden = 0
    for rank, i in enumerate(shown):
        s, e, ps = found[i]
        in_view = [p for p in ps if lane(p) is not None and not math.isnan(x[p])]
        if not in_view:
            hidden += 1
            continue
        offset = ((rank * 0.618) % 1.0 - 0.5) * 0.6
        colour = cmap(rank / max(len(shown) - 1, 1)) if color_by == "match" else (0.35, 0.35, 0.35, 0.6)
        pts = [(x[p], lane(p) + offset) for p in in_view]
        if len(pts) > 1:
            segments.append(pts)
            seg_colours.append(colour)
        for p, pt in zip(in_view, pts):
            points.append(pt)
            point_colours.append(colour if color_by == "match" else type_colour[types[p]] if color_by == "type"
                                 else variable_colour[variable_of[id(found[i])][p]])
    if hidden:
        notes.append(f"{hidden} drawn matches have no event in the lanes shown")
    alpha = 0.85 if len(shown) <= 30 else 0.45
    ax.add_collection(collections.LineCollection(segments, colors=seg_colours, linewidths=1.1, alpha=alpha,
                                                 zorder=2, label="matches"))
    if points:
        ax.scatter([p[0] for p in points], [p[1] for p in points], s=14, c=point_colours, zorder=3,
                   edgecolors="none", label="matched events")
    if color_by == "type":
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], marker="o", linestyle="", color=type_colour[t], label=t) for t in type_names]
        ax.legend(handles=handles, title="event type", loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    if color_by == "variable":
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], marker="o", linestyle="", color=variable_colour[v], label=v) for v in variable_names]
        ax.legend(handles=handles, title="variable", loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")

    # Strip: every match, counted by where it ends.
    end_x = [x[e] for _, e, _ in found if not math.isnan(x[e])]
    if end_x:
        span = max(end_x) - min(end_x)
        if not is_date and all(v.is_integer() for v in end_x) and span <= 120:
            bins = np.arange(min(end_x), max(end_x) + 2) - 0.5  # one bar per position
        else:
            bins = 120
        strip.hist(end_x, bins=bins, color="0.35")
    strip.yaxis.set_major_locator(ticker.MaxNLocator(integer=True, nbins=3))
    strip.set_ylabel("matches\nending", fontsize="small")
    strip.set_xlabel(time_field or "position")
    if is_date:
        strip.xaxis_date()
    ax.set_title(title or f"{len(found):,} match{'' if len(found) == 1 else 'es'} over {n:,} event{'' if n == 1 else 's'}")
    if xlim is not None:
        ax.set_xlim(lo, hi)
    if notes:
        # Wrapped to the figure's width (about 13 small characters per inch), so that a
        # long note is never cut at the figure's edges.
        text = textwrap.fill("Note: " + "; ".join(notes) + ".", width=max(40, int(fig.get_figwidth() * 13)))
        fig.supxlabel(text, fontsize="small", color="0.25")
    return fig


def save_timeline(matches: Any, events: Any, path: str, *, dpi: int = 120, **options: Any) -> str:
    """Draws :func:`timeline` and writes it to ``path`` (PNG, or any format matplotlib infers
    from the extension); returns ``path``. Needs no display: for scripts and the CLI."""
    fig = timeline(matches, events, **options)
    fig.savefig(path, dpi=dpi)
    return path
