"""The command's standard output and standard error, including closed ones.

A program started with a closed standard stream (``ceql run ... >&-``) gets
``sys.stdout`` (or ``sys.stderr``) ``None``, and ``print(..., file=None)`` then
writes to standard *output*: a diagnostic would be mixed into the matches. So
:func:`guard_standard_streams` replaces a closed stream with
:class:`ClosedStream`, whose writes fail with an ``OSError`` that the command
reports like any other file it cannot write (exit 1), and keeps the descriptor
number taken (by ``/dev/null``) so that no file opened later becomes it.
Diagnostics (:func:`tell`) to a closed or broken standard error are lost; the
exit status still tells.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, Iterable


class ClosedStream:
    """Stands for a standard stream that was closed when the command started:
    writing fails with ``OSError(EBADF)``; flushing has nothing to do (so the
    interpreter's final flush is quiet)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def write(self, text: str) -> int:
        """Fails: the stream is closed."""
        raise OSError(errno.EBADF, f"{self.name} is closed")

    def flush(self) -> None:
        """Nothing is buffered."""

    def fileno(self) -> int:
        """Fails: the stream has no descriptor."""
        raise OSError(errno.EBADF, f"{self.name} is closed")

    def isatty(self) -> bool:
        """A closed stream is no terminal."""
        return False


def guard_standard_streams() -> None:
    """Replaces a closed ``sys.stdout`` or ``sys.stderr`` (``None``) with a
    :class:`ClosedStream`, its descriptor held by ``/dev/null``."""
    for fd, attr, name in ((1, "stdout", "standard output"), (2, "stderr", "standard error")):
        if getattr(sys, attr) is not None:
            continue
        setattr(sys, attr, ClosedStream(name))
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def tell(text: str) -> None:
    """Writes a diagnostic (an error line, a warning) to standard error; it is lost
    when standard error is closed or broken."""
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def progress_stream_open() -> bool:
    """Whether standard error can show a progress bar."""
    return not isinstance(sys.stderr, ClosedStream)


def write_lines(stream: Any, lines: Iterable[str]) -> None:
    """Writes ``lines`` to ``stream`` (a standard stream) and flushes it; an
    ``OSError`` (a closed stream, a reader that went away) propagates."""
    stream.write("".join(line + "\n" for line in lines))
    stream.flush()


def stream_name(stream: Any) -> str:
    """``standard output`` or ``standard error``."""
    return "standard error" if stream is sys.stderr else "standard output"
