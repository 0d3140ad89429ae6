"""``ceql run``'s output: complex events as JSON lines, written as they are found.

Each line is ``{"start": s, "end": e, "positions": [...], "events": [...]}``
(``events`` omitted with ``--no-events``); with ``--captures``, a ``"captures"``
object ``{variable: [positions]}`` follows ``positions``; a query with measures
(``SELECT a, count(b) AS n``) adds a ``"measures"`` object ``{name: value}`` after them. The output is strict JSON: a float
that JSON cannot write (NaN, infinities) is written as the string ``"NaN"``,
``"Infinity"`` or ``"-Infinity"`` (the mapping of proto3's JSON format), dates
and times in ISO 8601, other values as their ``str``.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import sys
from typing import Any, Dict, List, Sequence

from ._cli_input import FileError

_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def json_value(v: Any) -> Any:
    """``v`` with every float JSON cannot write replaced by its name (recursively
    through lists and dicts)."""
    if type(v) is float:
        return v if math.isfinite(v) else _NON_FINITE.get(v, "NaN")
    if isinstance(v, dict):
        return {k: json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    return v


def _default(v: Any) -> Any:
    """Values json does not know: ISO 8601 for dates and times, else ``str``. A time
    stamp without a zone is UTC (the command line reads every ISO 8601 time as UTC
    instants, docs/language.md#s1-4) and is written with ``Z``, so that a reader that
    takes zone-less times as local ones does not shift it."""
    if isinstance(v, _dt.datetime) and v.tzinfo is None:  # pandas' Timestamp too
        return v.isoformat() + "Z"
    if type(v).__name__ == "datetime64":
        return str(v) + "Z"
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


def _dumps(v: Any) -> str:
    return json.dumps(json_value(v), default=_default, allow_nan=False)


class MatchWriter:
    """Writes the complex events of each push to ``target`` (a path, or ``-`` for
    standard output) before the next push, so that memory holds one push's
    output at most. Write errors (a full disk, a closed pipe, a file that
    refuses writes) become :class:`FileError`."""

    def __init__(self, target: str, with_events: bool, captures: bool = False) -> None:
        self.name = "standard output" if target == "-" else target
        self.with_events = with_events
        self.captures = captures
        try:
            self.file = sys.stdout if target == "-" else open(target, "w", encoding="utf-8")
        except OSError as e:
            raise FileError(f"cannot write {target}: {e}") from None

    def write(self, matches: Sequence[Any], source: Any) -> None:
        """Writes ``matches``; ``source.events_at(positions)`` gives the events'
        data, fetched once per push for all the matches that share them."""
        if not matches:
            return
        events: Dict[int, str] = {}
        if self.with_events:
            wanted = sorted({p for m in matches for p in m.positions})
            events = {p: _dumps(e) for p, e in zip(wanted, source.events_at(wanted))}
        lines: List[str] = []
        for m in matches:
            positions = ", ".join(map(str, m.positions))
            line = f'{{"start": {m.start}, "end": {m.end}, "positions": [{positions}]'
            if self.captures:
                line += ', "captures": ' + json.dumps({v: list(ps) for v, ps in m.captures.items()})
            measures = m.measures
            if measures:
                line += ', "measures": ' + _dumps(measures)
            if self.with_events:
                line += ', "events": [' + ", ".join(events[p] for p in m.positions) + "]"
            lines.append(line + "}\n")
        self._guard(lambda: self.file.write("".join(lines)))

    def close(self) -> None:
        """Flushes, and closes a file (standard output stays open)."""
        self._guard(self.file.flush)
        if self.file is not sys.stdout:
            self._guard(self.file.close)

    def abandon(self) -> None:
        """Closes a file after an error, ignoring further write errors."""
        try:
            self.close()
        except FileError:
            pass

    def _guard(self, op: Any) -> None:
        try:
            op()
        except BrokenPipeError:
            raise FileError(f"cannot write {self.name}: the reader closed the pipe") from None
        except OSError as e:
            raise FileError(f"cannot write {self.name}: {e}") from None
