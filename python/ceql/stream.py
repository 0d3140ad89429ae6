"""``Stream``: evaluation over unbounded input, one event or batch at a time."""

from __future__ import annotations

import functools
import operator
import pickle
import struct
import threading
import zlib
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Optional, Tuple, TypeVar

from . import _ceql
from ._inputs import Kind, Pushable, classify, for_push
from ._options import reserved_fields
from ._sources import DeferredSource, ListSource, Retained
from .errors import CeqlError, CeqlSnapshotError

if TYPE_CHECKING:
    from .query import Query

_MAGIC = b"CEQLPY"
# Version 2 ends with a CRC-32 of everything before it, so that damaged bytes are
# refused before anything is decoded; version 3 adds the events the reorder buffer
# holds (``max_delay``) to the pickled payload; version 4 the events kept aside for
# complex events waiting for a deadline (before the window's horizon).
_VERSION = 4
_CHUNK = 4096
T = TypeVar("T")


def _serialised(method: Callable[..., T]) -> Callable[..., T]:
    """Runs a :class:`Stream` method under the stream's lock; a call from inside
    another call of the same stream (same thread) is refused."""

    @functools.wraps(method)
    def serialised(self: "Stream", *args: Any, **kwargs: Any) -> T:
        with self._lock:
            if self._busy:
                raise CeqlError(
                    f"Stream.{method.__name__} was called while another call of the same stream was running in "
                    "this thread (from the events iterator given to push_many, say)", code="STREAM")
            self._busy = True
            try:
                return method(self, *args, **kwargs)
            finally:
                self._busy = False

    return serialised


def _attach_matches(error: BaseException, matches: List[Any]) -> None:
    """Gives ``error``, raised by the iterator of :meth:`Stream.push_many`, the
    matches of the events pulled before it (in ``matches``), when the exception
    takes attributes."""
    try:
        error.matches = list(matches)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pass


def _give_matches(error: BaseException, take: Callable[[], Any]) -> None:
    """Gives ``error`` the matches that ended before it, which ``take`` hands out
    from the native buffer. Any exception raised while a push read its events (a
    bad event's, a budget's, a mapping whose ``__getitem__`` fails, an interrupt)
    gets them: the events before it were processed, so their matches must reach
    the caller. When building them runs out of memory, ``matches`` is empty and a
    note says so (the error is not replaced by a bare ``MemoryError``)."""
    try:
        matches = list(take())
    except MemoryError:
        matches = []
        error.add_note("ceql: the matches that ended before this error were dropped: "
                       "not enough memory to build them")
    _attach_matches(error, matches)


def _check_not_reused(chunk: List[Any], pulled: int, matches: List[Any], before: Any = None) -> None:
    """Refuses a chunk pulled from an iterator that yielded one ``dict`` twice in a
    row (a reader refilling one buffer): by the time the chunk is read, both places
    have the fields of its last use (``pulled``: the events of the call before the
    chunk; ``before``: the last event of the previous chunk). A C-speed pass,
    about 11 ns per event; an object reused at other distances is not looked for
    (a set of every id costs three times that)."""
    if not any(map(operator.is_, chunk, islice(chunk, 1, None))) and not (chunk and chunk[0] is before):
        return
    pairs = [(-1, before)] + list(enumerate(chunk))
    for (_, previous), (i, event) in zip(pairs, pairs[1:]):
        if event is previous and isinstance(event, dict):
            error = CeqlError(
                f"Stream.push_many: the iterator yielded the same dict object as its events {pulled + i - 1} and "
                f"{pulled + i} (counting from 0 in this call). ceql reads an iterator's events in chunks, after it "
                "has moved on, so a dict refilled for the next event would be read with that event's fields. "
                "Yield a new dict per event (dict(event), say). No event of this chunk was pushed.", code="STREAM")
            _attach_matches(error, matches)
            raise error


class Stream:
    """Stateful evaluator: :meth:`push` events as they arrive and get the complex
    events that end at them.

    A stream can be shared between threads: its calls are serialised (one runs at
    a time, in the order the threads get the lock), so no event is lost and each
    call's matches and their ``events`` are its own. A call made from inside one
    of the same stream's calls (by the iterator given to :meth:`push_many`, say)
    raises :class:`ceql.CeqlError`.

    The stream keeps the data of the events that future matches may still include
    (those inside the window), so that ``Match.events`` works; without ``WITHIN``
    it keeps everything. :meth:`snapshot` / :meth:`restore` persist the state:
    restoring and continuing gives the complex events an uninterrupted stream gives,
    with the same ends; those that end at one position may come in another order
    (it follows the ids the restored determinization cache gives its det-states).

    With ``max_delay`` (see :meth:`ceql.Query.stream`) the stream holds each event
    until the watermark passes it and evaluates the events in time order
    (docs/language.md#s3-7a): a push returns the matches of the events it
    released, which may be earlier ones; :meth:`flush` releases everything.
    """

    def __init__(self, query: "Query" = None, native: "_ceql.NativeRuntime" = None) -> None:  # type: ignore[assignment]
        if query is None or native is None:
            raise TypeError("a Stream is made by a query: ceql.compile(text).stream(...)")
        self.query = query
        self._native = native
        self._chunks = Retained(_CHUNK)
        self._lock = threading.RLock()
        self._busy = False
        #: With a reorder buffer: the events it holds, by tag, and the next tag.
        self._reorders = native.reorders()
        #: The fields that must hold text: the type field and ``stream``.
        self._reserved = reserved_fields(native.type_field)
        #: A trailing ``ABSENT(...) FOR d``: the events of the complex events waiting
        #: for their deadline are kept aside, the chunks follow the window.
        self._deadline = native.has_deadline()
        if self._deadline:
            native.record_deferred_positions(True)
        self._held: dict = {}
        #: Events pulled so far by the running push_many (for its messages), and
        #: the last of them (a dict yielded again at the next chunk is refused too).
        self._pulled = 0
        self._last_pulled: Any = None
        self._next_tag = 0

    def __reduce__(self) -> Any:
        raise TypeError("a ceql.Stream cannot be pickled: save its state with Stream.snapshot() and bring it back "
                        "with ceql.Stream.restore(query, data)")

    # -- input -------------------------------------------------------------
    @_serialised
    def push(self, event: Any) -> List["_ceql.Match"]:
        """Pushes one event (a mapping with ``"type"``); returns the matches ending
        at it (with ``max_delay``: of the events it released). Amortised O(1) in
        the events retained.

        The event is read at once, and retained as it is (no copy) for
        ``Match.events``: a dict refilled for the next event changes the
        ``events`` of the matches that hold it; push a copy (``dict(buf)``) to
        keep them."""
        if self._reorders:
            return self._push_delayed([event])
        start = self._native.next_position()
        self._chunks.append_event(start, event)
        try:
            matches = self._native.push_events((event,), self._chunks.view())
        except BaseException as e:
            self._failed_push(start, e)
            raise
        self._trim()
        return matches

    @_serialised
    def push_many(self, events: Iterable[Any]) -> List["_ceql.Match"]:
        """Pushes events in order; returns the matches, in order of ``end``.

        If an event is bad, the :class:`ceql.CeqlEventError` carries the matches
        that ended before it in ``matches`` (the events before it were processed);
        so does any other exception raised while an event is read (a mapping whose
        ``__getitem__`` fails, a ``KeyboardInterrupt``), which is re-raised as it is.

        If iterating over ``events`` raises (a generator reading a socket that
        fails, say), every event pulled before the exception is processed first
        (the stream's :attr:`position` then counts them all), and the exception is
        re-raised with the matches of the call in its ``matches`` attribute, as for
        a bad event: nothing pulled is lost, and the stream can go on. (Should one of
        those events be bad, its ``CeqlEventError`` is raised instead, with the
        iterator's exception as its ``__context__``.)

        An iterator's events are read in chunks, after it has moved on, and are
        retained as they are (no copy): it must yield a new object per event. A
        ``dict`` yielded twice in a row (a reader refilling one buffer) raises
        :class:`ceql.CeqlError` (code ``STREAM``) before its chunk is pushed, with
        the matches of the events before that chunk in ``matches``. Lists, Arrow
        data and frames are read at the call; ``Match.events`` returns the very
        objects pushed."""
        kind = classify(events)
        if kind is not Kind.ITERABLE:
            return self._push_batch(events, kind)
        out: List[Any] = []
        chunk: List[Any] = []
        self._pulled = 0
        self._last_pulled = None
        iterator = iter(events)
        while True:
            try:
                ev = next(iterator)
            except StopIteration:
                break
            except BaseException as failure:
                if chunk:
                    try:
                        self._push_pulled(chunk, out)
                    except BaseException as error:
                        error.__context__ = error.__context__ or failure  # exceptions from Rust come unchained
                        raise
                _attach_matches(failure, out)
                raise
            chunk.append(ev)
            if len(chunk) == _CHUNK:
                self._push_pulled(chunk, out)
                chunk = []
        if chunk:
            self._push_pulled(chunk, out)
        return out

    def _push_pulled(self, chunk: List[Any], out: List[Any]) -> None:
        """Pushes ``chunk``, events pulled by :meth:`push_many`, and appends their
        matches to ``out``; a bad event's error gets ``out`` before its own matches."""
        _check_not_reused(chunk, self._pulled, out, self._last_pulled)
        self._pulled += len(chunk)
        self._last_pulled = chunk[-1] if chunk else None
        try:
            out.extend(self._push_list(chunk))
        except BaseException as e:
            _attach_matches(e, out + list(getattr(e, "matches", None) or []))
            raise

    @_serialised
    def push_batch(self, batch: Any) -> List["_ceql.Match"]:
        """Pushes Arrow data (pyarrow Table/RecordBatch, polars DataFrame, anything with
        ``__arrow_c_stream__``) or a pandas DataFrame, row by row, without per-row
        Python objects. Errors as for :meth:`push_many`."""
        return self._push_batch(batch, classify(batch))

    def _push_batch(self, batch: Any, kind: Kind) -> List["_ceql.Match"]:
        """Pushes ``batch``, of any kind but :attr:`Kind.ITERABLE`, at once."""
        if kind is Kind.SEQUENCE:
            # The stream retains its own list: the caller may change theirs later.
            return self._push_list(list(batch))
        start = self._native.next_position()
        if self._reorders:
            # The reorder buffer owns its events: Arrow data goes in as rows.
            pushable = for_push(batch, kind, start, self._reserved)
            rows = pushable.rows if pushable.table is None else pushable.source().events_at(
                range(pushable.table.num_rows))
            return self._push_delayed(list(rows))
        return self._push(start, for_push(batch, kind, start, self._reserved))

    def _push_list(self, events: List[Any]) -> List["_ceql.Match"]:
        if self._reorders:
            return self._push_delayed(events)
        start = self._native.next_position()
        return self._push(start, Pushable(rows=events))

    def _push(self, start: int, pushable: Pushable) -> List["_ceql.Match"]:
        """Pushes events whose first gets position ``start``; their data is retained
        for ``Match.events``."""
        self._chunks.append(start, pushable.source(offset=start))
        try:
            matches = pushable.push(self._native, self._chunks.view())
        except BaseException as e:
            self._failed_push(start, e)
            raise
        self._trim()
        return matches

    # -- the reorder buffer (max_delay) -------------------------------------------
    def _push_delayed(self, events: List[Any]) -> List["_ceql.Match"]:
        """Pushes ``events`` through the reorder buffer: each is held under a tag
        until the engine releases it, and retained at the position it gets then."""
        first = self._next_tag
        self._next_tag += len(events)
        self._held.update(zip(range(first, first + len(events)), events))
        return self._delayed(lambda source: self._native.push_events(events, source, first))

    def _delayed(self, call: Callable[[Any], List[Any]]) -> List["_ceql.Match"]:
        """Runs ``call`` (a native push, watermark or flush that may release held
        events) and retains the events it released."""
        source = DeferredSource()
        start = self._native.next_position()
        try:
            matches = call(source)
        except BaseException as e:
            self._settle(start, source, failed=True)
            _give_matches(e, lambda: self._native.take_matches(source))
            raise
        self._settle(start, source)
        return matches

    def _settle(self, start: int, source: DeferredSource, failed: bool = False) -> None:
        """Moves the events the engine released from the held ones to the retained
        chunks, at their positions, and forgets those it dropped."""
        position = start
        for tag, released in self._native.take_fates():
            event = self._held.pop(tag)
            if released:
                self._chunks.append_event(position, event)
                position += 1
        if failed:  # the events after a bad one never reached the buffer
            kept = set(self._native.held_tags())
            self._held = {tag: e for tag, e in self._held.items() if tag in kept}
        source.view = self._chunks.view()
        self._trim()

    @_serialised
    def flush(self) -> List["_ceql.Match"]:
        """Releases every event the reorder buffer holds (``max_delay``) and returns
        their matches; the watermark becomes the largest time stamp seen, so an
        event that arrives later with an earlier time stamp is late. Without
        ``max_delay`` nothing is held: returns ``[]``."""
        if not self._reorders:
            return []
        return self._delayed(lambda source: self._native.flush(source))

    @_serialised
    def process(self, batch: Any) -> List["_ceql.Match"]:
        """Pushes a batch (Arrow data or a pandas DataFrame) that must continue the
        stream in time order: an event earlier than one already seen raises
        :class:`ceql.CeqlEventError` (unless the stream was made with ``late="drop"``)."""
        return self._push_batch(batch, classify(batch))

    # -- event time ------------------------------------------------------------
    @_serialised
    def advance_watermark(self, time: Any) -> List["_ceql.Match"]:
        """Declares that no event earlier than ``time`` will arrive (same unit as the
        time field, or a datetime). State whose window has passed is released; a
        later event earlier than ``time`` is late. Without ``max_delay``, only for
        time-based windows. With ``max_delay``, the watermark becomes the larger
        of ``time`` and the buffer's own (largest time stamp seen minus
        ``max_delay``), the held events at or before it are evaluated, and their
        matches are returned.

        Also returns the matches of a trailing ``ABSENT(...) FOR d`` whose
        deadline is before ``time`` (docs/language.md#s3-3b)."""
        if self._reorders:
            return self._delayed(lambda source: self._native.advance_watermark(time, source, take=True))
        matches = self._native.advance_watermark(time, self._chunks.view(), take=True)
        self._trim()
        return matches
    @_serialised
    def close_deadlines(self) -> List["_ceql.Match"]:
        """Ends the input for a trailing ``ABSENT(...) FOR d``: returns every match
        still waiting for its deadline, as if time had passed them all with no
        further event (docs/language.md#s3-3b). With ``max_delay``, the held
        events are released first (as :meth:`flush` does). The stream can go on;
        empty for other queries."""
        matches = self._delayed(lambda source: self._native.flush(source)) if self._reorders else []
        matches += self._native.close_deadlines(self._chunks.view())
        self._trim()
        return matches

    @property
    @_serialised
    def waiting(self) -> int:
        """Matches of a trailing ``ABSENT(...) FOR d`` waiting for their deadline."""
        return self._native.waiting_deadlines()

    @_serialised
    def next_deadline(self) -> Optional[int]:
        """The earliest time (in the time field's unit, rounded up) at which some
        partial match leaves the window and the stream may become idle, or ``None``."""
        d = self._native.next_deadline()
        if d is None:
            return None
        scale = self._native.time_scale()
        return -((-d) // scale)

    @_serialised
    def is_idle(self) -> bool:
        """True when no partial match is alive and no strategy state is held: the
        stream can be dropped and recreated without changing any result (positions
        aside)."""
        return self._native.is_idle()

    # -- retention -----------------------------------------------------------
    def _trim(self) -> None:
        """Drops the events no future match can contain: those before the window's
        horizon, except the events of complex events waiting for a deadline, kept
        aside until the engine's horizon (theirs included) passes them."""
        if self._deadline:
            self._chunks.pin(self._native.take_deferred_positions())
            self._chunks.unpin(self._native.horizon())
            self._chunks.trim(self._native.window_horizon())
        else:
            self._chunks.trim(self._native.horizon())

    def _failed_push(self, start: int, error: BaseException) -> None:
        """After a push that failed part-way: the last chunk keeps only the events
        the engine processed (they have positions, and later matches may use them),
        and the error gets the matches that ended before it (:func:`_give_matches`)."""
        self._chunks.keep_first(start, self._native.next_position() - start)
        _give_matches(error, lambda: self._native.take_matches(self._chunks.view()))

    def _retained(self) -> Tuple[int, List[Any], List[Tuple[int, Any]]]:
        """(first position, events from it on, [(position, event)] kept aside before
        it for complex events waiting for a deadline), as plain Python objects."""
        horizon = self._native.horizon()
        first = self._native.window_horizon() if self._deadline else horizon
        end = self._native.next_position()
        positions = list(range(first, end))
        events = self._chunks.view().events_at(positions) if positions else []
        # Every event kept aside, those still inside the window too: after a restore the
        # window moves on, and they must stay.
        pinned = sorted((p, e) for p, e in self._chunks.pinned.items() if p >= horizon)
        return first, events, pinned

    # -- state -----------------------------------------------------------------
    @property
    @_serialised
    def position(self) -> int:
        """Position the next event will get (= events pushed so far)."""
        return self._native.next_position()

    @_serialised
    def stats(self) -> dict:
        """Counters: events, matches, late/unkeyed events, partitions, cache
        (det-states, hits, misses, clears, mode), tECS nodes and bytes. With
        ``max_delay`` also the reorder buffer's: ``reorder_held`` (now),
        ``reorder_max_held``, ``reorder_released``, ``reorder_reordered`` (events
        that arrived behind a later time stamp) and ``reorder_late`` (late events
        dropped on arrival, also counted in ``late_dropped``)."""
        return dict(self._native.stats())

    @_serialised
    def snapshot(self) -> bytes:
        """The stream's state as bytes (versioned format). It contains the engine
        state and the retained event data (pickled), so only restore snapshots you
        produced yourself. A retained event that cannot be pickled (a value nested
        beyond Python's recursion limit, a function) raises
        :class:`ceql.CeqlSnapshotError`."""
        native = self._native.snapshot()
        first, events, pinned = self._retained()
        held = [(tag, self._held[tag]) for tag in self._native.held_tags()]
        try:
            payload = pickle.dumps((first, events, held, self._next_tag, pinned), protocol=4)
        except (RecursionError, pickle.PicklingError, TypeError, AttributeError) as e:
            message = f"cannot take a snapshot: the events the stream keeps cannot be pickled ({type(e).__name__}: {e})"
            raise CeqlSnapshotError(message, code="SNAPSHOT") from None
        body = _MAGIC + struct.pack("<HQ", _VERSION, len(native)) + native + payload
        return body + struct.pack("<I", zlib.crc32(body))

    @classmethod
    def restore(cls, query: "Query", data: bytes) -> "Stream":
        """Rebuilds a stream of ``query`` from :meth:`snapshot` bytes."""
        try:
            data = bytes(data)
        except TypeError:
            raise CeqlSnapshotError(f"a snapshot is bytes, not {type(data).__name__}", code="SNAPSHOT") from None
        header = len(_MAGIC) + 10
        if len(data) < header + 4 or data[: len(_MAGIC)] != _MAGIC:
            raise CeqlSnapshotError("not a ceql stream snapshot", code="SNAPSHOT")
        version, n = struct.unpack("<HQ", data[len(_MAGIC) : header])
        if version not in (2, 3, _VERSION):
            raise CeqlSnapshotError(f"snapshot format version {version} is not supported", code="SNAPSHOT")
        body, (crc,) = data[:-4], struct.unpack("<I", data[-4:])
        if zlib.crc32(body) != crc or header + n > len(body):
            raise CeqlSnapshotError("the snapshot is damaged (checksum mismatch)", code="SNAPSHOT")
        try:
            native = _ceql.NativeRuntime.restore(query._native, body[header : header + n])
        except ValueError as e:
            raise CeqlSnapshotError(str(e), code="SNAPSHOT") from None
        try:
            first, events, *rest = pickle.loads(body[header + n :])
            held, next_tag = rest[:2] if version >= 3 else ([], 0)
            pinned = dict(rest[2]) if version >= 4 else {}
        except Exception as e:  # a payload this version did not write
            raise CeqlSnapshotError(f"the snapshot's event data cannot be read: {e}", code="SNAPSHOT") from None
        if not _matches_engine(native, first, events, held):
            # The engine would report positions (or release held events) whose events
            # the stream does not hold.
            raise CeqlSnapshotError("the snapshot's events do not match its evaluation state", code="SNAPSHOT")
        stream = cls(query, native)
        stream._chunks.append(first, ListSource(events, offset=first))
        stream._chunks.set_pins(pinned)
        stream._held = dict(held)
        stream._next_tag = next_tag
        return stream

    # -- seeing what the engine does (the logic is in ceql/explain.py) ------------
    def explain(self) -> str:
        """:meth:`ceql.Query.explain` of the stream's query, followed by its
        determinization cache: det-states interned now and built since the start,
        classes, hits, misses, clears and the mode."""
        from . import explain as _explain

        return _explain.stream_explain(self)

    @_serialised
    def _cache_text(self) -> str:
        return str(self._native.explain_cache())

    @_serialised
    def _det_states_dot(self) -> str:
        return str(self._native.det_states_dot())

    def __repr__(self) -> str:
        with self._lock:
            position = "(busy)" if self._busy else self._native.next_position()
        return f"<ceql.Stream position={position} of {self.query!r}>"


def _matches_engine(native: Any, first: Any, events: Any, held: Any) -> bool:
    """Whether a restored snapshot's pickled events are those its engine state
    needs: the retained ones from the horizon to the next position, and the events
    the reorder buffer holds, by tag."""
    try:
        return (isinstance(first, int) and first <= native.window_horizon()
                and first + len(events) == native.next_position()
                and sorted(tag for tag, _ in held) == sorted(native.held_tags()))
    except (TypeError, ValueError):
        return False
