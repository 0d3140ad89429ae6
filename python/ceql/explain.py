"""What the engine made of a query, for people: text, Graphviz pictures and HTML tables.

>>> import ceql
>>> q = ceql.compile("SELECT * FROM S WHERE A AS x ; B FILTER x[v > 1]")
>>> print(q.explain())                      # doctest: +ELLIPSIS
Query
  SELECT * FROM S WHERE A AS x ; B FILTER x[v > 1]
<BLANKLINE>
Formula after filter push-down (reference §5.2)
  A[v > 1] AS x ; B
...
>>> q.to_dot().startswith("digraph automaton {")
True

:meth:`ceql.Query.explain` and :meth:`ceql.Query.to_dot` need nothing beyond ceql.
Rendering the DOT text as SVG (:func:`to_svg`, ``ceql explain --format svg``, and the
picture a notebook shows for a :class:`ceql.Query`) needs Graphviz: the ``dot`` program
(a system package: ``apt-get install graphviz``, ``brew install graphviz``, ...) and the
``graphviz`` extra (``pip install 'ceql[graphviz]'``, the Python package that runs
``dot`` and reports its errors). Without them a notebook shows an HTML table of the
automaton instead (:func:`automaton_html`).
"""

from __future__ import annotations

import html
import shutil
from typing import TYPE_CHECKING, Any, Optional

from .errors import CeqlError

if TYPE_CHECKING:
    from .query import Query
    from .stream import Stream

__all__ = ["explain", "stream_explain", "to_dot", "to_svg", "automaton_html", "graphviz_available", "EXTRA_HINT"]

#: How to get what SVG rendering needs (quoted by every error about it).
EXTRA_HINT = ("Graphviz: the `dot` program (apt-get install graphviz, brew install graphviz, or "
              "https://graphviz.org/download/) and the graphviz extra (pip install 'ceql[graphviz]')")


def explain(query: "Query") -> str:
    """The text of :meth:`ceql.Query.explain`."""
    return str(query._native.explain())


def stream_explain(stream: "Stream") -> str:
    """The text of :meth:`ceql.Stream.explain`: the query's, then the determinization
    cache's counters (``cache`` is the stream's own text, taken under its lock)."""
    return explain(stream.query) + "\n" + stream._cache_text()


def to_dot(query: "Query", stream: Optional["Stream"] = None) -> str:
    """The text of :meth:`ceql.Query.to_dot`: the automaton of ``query``, or with
    ``stream`` (a :class:`ceql.Stream` of this query) the det-states it has
    materialised so far."""
    if stream is None:
        return str(query._native.to_dot())
    from .stream import Stream

    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be a ceql.Stream, not {type(stream).__name__}")
    if stream.query is not query:
        raise ValueError("stream= must be a Stream of this query (query.stream())")
    return stream._det_states_dot()


def _graphviz() -> Any:
    """The ``graphviz`` module, or an ImportError naming the extra."""
    try:
        import graphviz
    except ImportError as e:
        raise ImportError(f"rendering SVG needs {EXTRA_HINT}; the graphviz Python package is missing",
                          name="graphviz") from e
    return graphviz


def graphviz_available() -> bool:
    """Whether SVG can be rendered here: the ``graphviz`` package and ``dot`` on PATH."""
    try:
        _graphviz()
    except ImportError:
        return False
    return shutil.which("dot") is not None


def to_svg(dot: str) -> str:
    """Renders DOT text as SVG with Graphviz's ``dot``.

    Raises ``ImportError`` naming the ``graphviz`` extra when the Python package is
    missing, and :class:`ceql.CeqlError` (code ``GRAPHVIZ``) when the ``dot`` program
    is missing or fails."""
    graphviz = _graphviz()
    try:
        # quiet: dot's own messages are in the error raised, not printed too.
        return str(graphviz.Source(dot).pipe(format="svg", encoding="utf-8", quiet=True))
    except graphviz.ExecutableNotFound:
        raise CeqlError(f"rendering SVG needs {EXTRA_HINT}; `dot` was not found on PATH", code="GRAPHVIZ") from None
    except graphviz.CalledProcessError as e:
        detail = (e.stderr or b"").decode("utf-8", "replace").strip() if isinstance(e.stderr, bytes) else str(e.stderr or "")
        raise CeqlError(f"Graphviz's dot failed: {detail or e}", code="GRAPHVIZ") from None


def automaton_html(query: "Query") -> str:
    """The automaton of ``query`` as an HTML table: one row per transition, grouped
    by state, with what it reads, the ``AS`` variables it binds and its output mark;
    initial and final states are named. The formula after filter push-down heads it."""
    states, transitions = query._native.automaton()
    esc = html.escape
    rows = []
    for s in states:
        role = "initial" if s["initial"] else ("final" if s["final"] else "")
        outgoing = [t for t in transitions if t["source"] == s["id"]]
        cells = outgoing or [None]
        for k, t in enumerate(cells):
            state_cell = (f'<td rowspan="{len(cells)}"><b>q{s["id"]}</b>'
                          + (f' <i>{role}</i>' if role else "") + "</td>") if k == 0 else ""
            if t is None:
                rows.append(f"<tr>{state_cell}<td></td><td></td><td></td><td></td></tr>")
                continue
            mark = "•" if t["output"] else "∘"
            rows.append(
                f"<tr>{state_cell}<td>q{t['target']}</td><td><code>{esc(t['reads'])}</code></td>"
                f"<td>{esc(', '.join(t['variables']))}</td><td style=\"text-align:center\">{mark}</td></tr>"
            )
    formula = esc(str(query._native.normalized_formula()))
    head = ("<tr><th>state</th><th>to</th><th>reads</th><th>AS</th>"
            "<th title=\"• the event read joins the complex event\">output</th></tr>")
    return (
        f'<div class="ceql-automaton"><p><code>{formula}</code><br>'
        f"{len(states)} states, {len(transitions)} transitions "
        f"(• the event read joins the complex event, ∘ not)</p>"
        f'<table style="border-collapse:collapse"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'
    )
