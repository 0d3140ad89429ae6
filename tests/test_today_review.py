"""Adversarial review of today's changes (type_field=, the Stream's retention with a
trailing ``ABSENT(...) FOR d``, the engine's memory fixes, the Ctrl-C interrupt).

Each test fails on the reviewed commit and states the documented behaviour it expects;
expected values come from docs/language.md and hand counting, not from the engine.
See FINDINGS.md for the reasoning.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ceql

PACKAGE_ROOT = str(Path(ceql.__file__).resolve().parent.parent)
TIME = dict(time_field="ts", time_unit="ms")
WAITING = "SELECT * FROM S WHERE A ; C ; ABSENT(B) FOR 1 hour PARTITION BY [k] WITHIN 10 milliseconds"


# --- 1. A snapshot loses the events of a waiting match that are still inside the window ---------

def test_restored_stream_keeps_the_events_of_a_waiting_match_taken_inside_the_window():
    """docs/language.md#s3-3b "Memory": a Stream keeps, aside, the events of the complex
    events that wait, and snapshots include waiting matches. The match (0, 1) waits an
    hour; the snapshot is taken while A and C are still inside the 10 ms window. After
    restore, the window moves on (20 unrelated events 100 ms later); the match, reported
    by close_deadlines, must still give its events."""
    q = ceql.compile(WAITING)
    a = {"type": "A", "k": 0, "ts": 0, "tag": "a"}
    c = {"type": "C", "k": 0, "ts": 5, "tag": "c"}
    s = q.stream(**TIME)
    s.push(a)
    s.push(c)
    assert s.waiting == 1
    restored = ceql.Stream.restore(q, s.snapshot())
    restored.push_many([{"type": "X", "k": 100 + i, "ts": 100 + i} for i in range(20)])
    fired = restored.close_deadlines()
    assert [m.positions for m in fired] == [(0, 1)]
    assert fired[0].events == [a, c]  # LookupError: event at position 0 is no longer retained


def test_restored_stream_keeps_the_events_of_a_waiting_match_fired_by_time():
    """The same through a fire by a later event (an hour after C) and Arrow input: the
    waiting match A C is reported with its events."""
    pa = pytest.importorskip("pyarrow")
    q = ceql.compile(WAITING)
    s = q.stream(**TIME)
    s.push_batch(pa.Table.from_pylist([{"type": "A", "k": 1, "ts": 0, "tag": "a"},
                                       {"type": "C", "k": 1, "ts": 3, "tag": "c"}]))
    restored = ceql.Stream.restore(q, s.snapshot())
    restored.push_batch(pa.table({"type": ["X"] * 50, "k": list(range(2, 52)), "tag": ["x"] * 50,
                                  "ts": list(range(1000, 1050))}))
    fired = restored.push({"type": "X", "k": 99, "ts": 3_600_004, "tag": "late"})
    assert [m.positions for m in fired] == [(0, 1)]
    assert [e["tag"] for e in fired[0].events] == ["a", "c"]


# --- 2. Ctrl-C under max_delay with a trailing absence: IndexError, matches lost -------------------

INTERRUPT_CHILD = textwrap.dedent(
    """
    import signal, sys
    sys.path.insert(0, sys.argv[1])
    import ceql

    signal.signal(signal.SIGALRM, signal.default_int_handler)  # an alarm acts as Ctrl-C
    # The C at t=2000 fires the waiting (0, 1, 2) (deadline 1002 ms) and then tests 2^60
    # valuations of (B AS b)+ for its filter: the alarm interrupts that.
    q = ceql.compile("SELECT * FROM S WHERE (A ; (B AS b)+ ; C AS c FILTER c[v > avg(b.v)]) ; "
                     "ABSENT(D) FOR 1 second WITHIN 10 seconds")
    first = [{"type": "A", "v": 0, "t": 0}, {"type": "B", "v": 0, "t": 1}, {"type": "C", "v": 5, "t": 2}]
    events = first + [{"type": "B", "v": i, "t": 3 + i} for i in range(60)] + [{"type": "C", "v": 1000, "t": 2000}]
    for kw in ({}, {"max_delay": 0}):
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        try:
            q.run(events, time_field="t", time_unit="ms", **kw)
            print("not interrupted")
        except KeyboardInterrupt as e:
            print(type(e).__name__, [m.positions for m in e.matches])
        except BaseException as e:
            print(type(e).__name__, [m.positions for m in getattr(e, "matches", [])])
        signal.setitimer(signal.ITIMER_REAL, 0)
    # The interrupted event's own complex events are dropped: none of them may wait.
    s = q.stream(time_field="t", time_unit="ms")
    s.push_many(events[:3] + events[3:-1])
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        s.push(events[-1])
    except KeyboardInterrupt:
        pass
    signal.setitimer(signal.ITIMER_REAL, 0)
    print("waiting", s.waiting)
    """
)


def test_ctrl_c_with_max_delay_and_a_trailing_absence_keeps_the_matches_before():
    """tests/test_interrupt.py / commit 1c3c390: the push raises the KeyboardInterrupt with
    the matches of the events before. (0, 1, 2) is due before the interrupted C (its
    deadline, 1002 ms, is before C's 2000 ms). Without max_delay that holds; with
    max_delay=0 (same order, nothing reordered) the KeyboardInterrupt is replaced by an
    IndexError from Stream._trim and the match is lost. Root cause: the interrupted
    event's partial complex events go to the deadline queue (only the output buffer is
    truncated), so ``Stream.waiting`` counts tens of thousands of them on the dead stream
    and their positions (the unreleased event's included) reach ``Stream._trim``."""
    out = subprocess.run([sys.executable, "-c", INTERRUPT_CHILD, PACKAGE_ROOT], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    # Before C only (0, 1, 2) waited, and it fired at C: nothing waits after the interrupt.
    assert out.stdout.split("\n")[:3] == ["KeyboardInterrupt [(0, 1, 2)]", "KeyboardInterrupt [(0, 1, 2)]",
                                          "waiting 0"]


# --- 3. The events of fired waiting matches stay pinned long after ----------------------------------

class _Event(dict):
    """A dict that can be weakly referenced (to see whether the stream still holds it)."""


def test_events_of_fired_waiting_matches_are_released():
    """docs/language.md#s3-3b "Memory": a Stream keeps the window's events and, aside, only
    the events of the complex events that *wait*; #s6-7: it keeps the events a future
    match may contain. 1,000 matches wait (10 ms), all fire, then events move the 1 ms
    window far away: no future match can contain any A, so none may be kept. The pinned
    dict was only rebuilt when it doubled (Retained.unpin), so all 1,000 stayed."""
    import gc
    import weakref

    q = ceql.compile("SELECT * FROM S WHERE A ; ABSENT(B) FOR 10 milliseconds PARTITION BY [k] WITHIN 1 millisecond")
    s = q.stream(**TIME)
    refs = []
    for i in range(1000):
        e = _Event(type="A", k=i, ts=i // 100)
        refs.append(weakref.ref(e))
        s.push(e)
    del e
    assert s.waiting == 1000
    assert len(s.push({"type": "X", "k": -1, "ts": 100})) == 1000  # all fired (deadlines < 100 ms)
    assert s.waiting == 0
    # Three more chunks: the stream's chunk lists are compacted once more than half of
    # them are dropped (Retained.trim), so a dropped chunk may stay referenced until then.
    for r in range(3):
        s.push_many([{"type": "X", "k": -1, "ts": 200 + 5000 * r + i} for i in range(5000)])
    assert not s._chunks.pinned
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


# --- 4. The command line's --type-field drops the field as an attribute -----------------------------

def test_cli_type_field_stays_an_attribute(tmp_path):
    """docs/api.md "Input events: the `type` field": ``type_field=`` names another field as
    the type "as ``--type-field`` does on the command line", and "the field is still an
    attribute too: ``FILTER x[event_type = 'SELL']`` reads it". The API finds (0, 1) for
    A ; B FILTER A[kind = 'A'] over A B; the command line (which renames `kind` to
    `type`) finds no match, silently."""
    from ceql import cli

    text = "SELECT * FROM S WHERE A ; B FILTER A[kind = 'A']"
    events = [{"kind": "A", "x": 1}, {"kind": "B", "x": 2}]
    assert [m.positions for m in ceql.compile(text).run(events, type_field="kind")] == [(0, 1)]
    (tmp_path / "q.ceql").write_text(text)
    (tmp_path / "e.csv").write_text("kind,x\nA,1\nB,2\n")
    out = tmp_path / "out.jsonl"
    rc = cli.main(["run", "--query", str(tmp_path / "q.ceql"), "--input", str(tmp_path / "e.csv"),
                   "--type-field", "kind", "--output", str(out), "--quiet"])
    assert rc == 0
    import json

    assert [json.loads(line)["positions"] for line in out.read_text().splitlines()] == [[0, 1]]


# --- 5. After an interrupt, stats() counts the dropped partial output as matches --------------------

STATS_CHILD = textwrap.dedent(
    """
    import signal, sys
    sys.path.insert(0, sys.argv[1])
    import ceql

    signal.signal(signal.SIGALRM, signal.default_int_handler)
    q = ceql.compile("SELECT * FROM S WHERE A ; (B AS b)+ ; C AS c FILTER c[v > avg(b.v)] WITHIN 100 EVENTS")
    first = [{"type": "A", "v": 0}, {"type": "B", "v": 0}, {"type": "C", "v": 5}]
    events = first + [{"type": "B", "v": i} for i in range(60)] + [{"type": "C", "v": 1000}]
    s = q.stream()
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        s.push_many(events)
    except KeyboardInterrupt as e:
        print(len(e.matches), s.stats()["matches"])
    """
)


def test_stats_after_an_interrupt_count_only_the_matches_reported():
    """Commit 1c3c390: "the interrupted event's partial output is dropped"; Stream.stats()
    (still allowed on the interrupted stream) counts "matches". One match, (0, 1, 2), was
    reported; the counter says 114,688 (the dropped valuations of the interrupted C)."""
    out = subprocess.run([sys.executable, "-c", STATS_CHILD, PACKAGE_ROOT], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1"]
