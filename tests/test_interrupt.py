"""Ctrl-C stops an evaluation whose filters between events enumerate exponentially many
valuations of one event (docs/language.md#s3-4a): the engine polls Python's signal
handlers while it tests valuations, the push raises ``KeyboardInterrupt`` with the
matches before that event, and the stream, half updated, refuses to go on."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import ceql

# The ceql under test (the installed package in CI, python/ of the checkout locally).
PACKAGE_ROOT = str(Path(ceql.__file__).resolve().parent.parent)

CHILD = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    sys.path.insert(0, sys.argv[1])
    import ceql

    # 2^80 valuations of (B AS b)+ for the C; the average is read, so nothing is pruned.
    q = ceql.compile("SELECT * FROM S WHERE A ; (B AS b)+ ; C AS c FILTER c[v > avg(b.v)] WITHIN 100 EVENTS")
    first = [{"type": "A", "v": 0}, {"type": "B", "v": 0}, {"type": "C", "v": 5}]
    events = first + [{"type": "B", "v": i} for i in range(80)] + [{"type": "C", "v": 1000}]
    s = q.stream()
    subprocess.Popen(["sh", "-c", f"sleep 1; kill -INT {os.getpid()}"])
    t = time.monotonic()
    try:
        s.push_many(events)
        print("not interrupted")
    except KeyboardInterrupt as e:
        print("interrupted", time.monotonic() - t < 20, [m.positions for m in e.matches])
    for call in (lambda: s.push({"type": "A", "v": 1}), s.snapshot, s.close_deadlines):
        try:
            call()
            print("went on")
        except ValueError as e:
            print("refused", "cannot continue" in str(e))
    """
)


def test_ctrl_c_stops_an_exponential_enumeration():
    out = subprocess.run([sys.executable, "-c", CHILD, PACKAGE_ROOT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # The A B C at positions 0-2 matched (5 > avg(0)) before the interrupted event.
    assert out.stdout.split("\n")[:4] == ["interrupted True [(0, 1, 2)]", "refused True", "refused True",
                                          "refused True"]
