"""Exceptions raised by ceql.

Query errors carry the code of the reference (``E0100`` ...), the 1-based line and
column of the offending token, and ``str()`` is the rendered diagnostic with its
caret snippet::

    error[E0201]: unknown event type `SEL`
     --> query:2:7
      |
    2 | WHERE SEL AS s ; BUY AS b
      |       ^^^ not declared in any stream of FROM (declared: BUY, SELL)
"""

from __future__ import annotations

from typing import Optional

__all__ = [
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
]


class CeqlError(Exception):
    """Base class of every ceql error.

    Attributes: ``code`` (e.g. ``"E0201"``), ``line``, ``column``, ``end_column``
    (1-based, columns in characters; ``None`` when not about query text) and
    ``message`` (the one-line summary).
    """

    def __init__(
        self,
        rendered: str,
        *,
        code: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        end_column: Optional[int] = None,
        message: Optional[str] = None,
        origin: str = "query",
    ) -> None:
        super().__init__(rendered)
        self.code = code
        self.line = line
        self.column = column
        self.end_column = end_column
        self.message = message if message is not None else rendered
        self.origin = origin

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class CeqlSyntaxError(CeqlError):
    """The query text does not parse, or a literal is invalid (``E01xx``)."""


class CeqlSemanticError(CeqlError):
    """The query parses but is rejected by the static checks (``E02xx``-``E05xx``)."""


class CeqlNameError(CeqlSemanticError):
    """Unknown or clashing stream, event type, variable or attribute (``E02xx``)."""


class CeqlTypeError(CeqlSemanticError):
    """Operands of incompatible types, or a filter on an unbindable variable (``E03xx``)."""


class CeqlUnsupportedError(CeqlSemanticError):
    """A construct of a later phase that this version does not implement (``E05xx``)."""


class CeqlEventError(CeqlError, TypeError, ValueError):
    """A malformed event: names its ``position`` in the input and the ``field``.

    Raised for an event without ``type``, a value of the wrong type for its
    declaration or for the comparison the query makes, a missing or backwards
    time stamp under a time window, and similar data errors.
    """

    def __init__(self, rendered: str, *, position: int, field: str, event_type: Optional[str], message: str) -> None:
        super().__init__(rendered, code="EVENT", message=message)
        self.position = position
        self.field = field
        self.event_type = event_type
        #: The complex events of the same call that ended before the bad event
        #: (``Query.run`` and the ``Stream`` pushes fill it): they are not lost.
        self.matches: list = []


class CeqlMemoryError(CeqlError, MemoryError):
    """Something did not fit in its memory budget; the message names what and the
    limit to raise.

    * The complex events completed by an event (the output): the event was
      processed (``position`` names it); bound the output with ``WITHIN``,
      ``LIMIT``, ``CONSUME BY`` or a strategy, or use ``Stream`` and smaller batches.
    * The evaluation state (``max_cache_bytes``/``max_det_states`` for the live
      det-states, ``max_state_bytes`` for everything): the event at ``position`` was
      not processed, and every later call raises again while the state does not
      fit its budget. With ``max_delay`` nothing is lost either: an arriving event
      that did not fit was not taken in, and a held one due for release stays held
      (``position`` is then the position the next released event gets).
    * Compiling (code ``E0103``): the system refused the compile thread's stack;
      ``position`` is ``None``.

    ``matches``: the matches that ended before the error in the call that raised
    it (``[]`` when there were none, or none were collected)."""

    def __init__(self, rendered: str, *, position: Optional[int], message: str, code: str = "MEMORY") -> None:
        super().__init__(rendered, code=code, message=message)
        self.position = position
        self.matches: list = []


class CeqlInternalError(CeqlError):
    """A bug in ceql (a Rust panic, caught at the boundary). Please report it."""


class CeqlSnapshotError(CeqlError, ValueError):
    """Snapshot bytes that cannot be restored (wrong format, version or query, or
    damaged), or a snapshot that cannot be taken (retained events that cannot be pickled)."""


class CeqlWarning:
    """A warning of the static checks (``W04xx``); ``str()`` is the rendered snippet.

    Attributes: ``code`` (``"W0402"``...), ``message`` (one line), ``line`` and
    ``column`` (1-based) and ``end_column`` of the span it points at, and ``rendered``
    (the snippet with its caret, as ``str()`` gives it)."""

    __slots__ = ("code", "rendered", "line", "column", "end_column", "message")

    def __init__(self, code: str, rendered: str, line: int, column: int, end_column: int, message: str) -> None:
        self.code = code
        self.rendered = rendered
        self.line = line
        self.column = column
        self.end_column = end_column
        self.message = message

    def __str__(self) -> str:
        return self.rendered

    def __repr__(self) -> str:
        return f"CeqlWarning({self.code!r}, {self.message!r}, line={self.line}, column={self.column})"


_BY_PREFIX = {
    "E01": CeqlSyntaxError,
    "E02": CeqlNameError,
    "E03": CeqlTypeError,
    "E05": CeqlUnsupportedError,
}


def _compile_error(code: str, rendered: str, line: int, column: int, end_column: int, message: str, origin: str) -> CeqlError:
    if code == "E0103":
        return CeqlMemoryError(rendered, position=None, message=message, code=code)
    cls = _BY_PREFIX.get(code[:3], CeqlSemanticError)
    return cls(rendered, code=code, line=line, column=column, end_column=end_column, message=message, origin=origin)


def _event_error(position: int, field: str, event_type: Optional[str], message: str, rendered: str) -> CeqlEventError:
    return CeqlEventError(rendered, position=position, field=field, event_type=event_type, message=message)


def _memory_error(position: int, field: str, event_type: Optional[str], message: str, rendered: str) -> CeqlMemoryError:
    return CeqlMemoryError(rendered, position=position, message=message)


def _internal_error(what: str) -> CeqlInternalError:
    return CeqlInternalError(f"internal error in ceql (please report it): {what}", code="INTERNAL")
