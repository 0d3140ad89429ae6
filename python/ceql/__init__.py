"""ceql: complex event recognition with CEQL.

Implements the CORE algorithm: the query is compiled into a complex event
automaton, determinized lazily, and evaluated with a timed enumerable compact set
that takes constant time per event, whatever the window or the number of partial
matches; matches are enumerated with output-linear delay.

>>> import ceql
>>> q = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C WITHIN 10 EVENTS")
>>> [m.positions for m in q.run([{"type": t} for t in "ABBC"])]
[(0, 1, 2, 3), (0, 1, 3), (0, 2, 3)]
"""

from ._ceql import Match, __version__
from .errors import (
    CeqlError,
    CeqlEventError,
    CeqlInternalError,
    CeqlMemoryError,
    CeqlNameError,
    CeqlSemanticError,
    CeqlSnapshotError,
    CeqlSyntaxError,
    CeqlTypeError,
    CeqlUnsupportedError,
    CeqlWarning,
)
from .arrow import join_events
from .query import Query, compile
from .stream import Stream

__all__ = [
    "compile",
    "join_events",
    "Query",
    "Stream",
    "Match",
    "CeqlError",
    "CeqlSyntaxError",
    "CeqlSemanticError",
    "CeqlNameError",
    "CeqlTypeError",
    "CeqlUnsupportedError",
    "CeqlEventError",
    "CeqlInternalError",
    "CeqlMemoryError",
    "CeqlSnapshotError",
    "CeqlWarning",
    "__version__",
]
