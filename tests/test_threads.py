"""Threads (issue 15, items 4 and 13): a compile lets other Python threads run;
a ``Stream`` used from several threads serialises the calls and never loses or
mixes up events; a ``Query`` is shared safely between threads."""

from __future__ import annotations

import sys
import threading
import time

import pytest

import ceql


def _slow_query(min_seconds: float) -> str:
    """A valid query whose compile takes at least ``min_seconds`` here: ten
    sequenced alternatives of ``w`` event types, ``w`` doubled until it does
    (compile time grows with the predicate classes, not with nesting depth)."""
    w = 8
    while True:
        text = "SELECT * FROM S WHERE " + " ; ".join(
            "(" + " OR ".join(f"T{j}" for j in range(w)) + ")" for _ in range(10)) + " WITHIN 10 EVENTS"
        t0 = time.perf_counter()
        ceql.compile(text)
        if time.perf_counter() - t0 >= min_seconds:
            return text
        if w >= 2048:
            pytest.skip("no query of this family compiles slowly enough to observe the GIL")
        w *= 2


def test_other_threads_run_while_a_query_compiles():
    text = _slow_query(0.05)
    stamps = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0002)

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        windows = []
        for _ in range(3):
            t0 = time.perf_counter()
            ceql.compile(text)
            windows.append((t0, time.perf_counter()))
    finally:
        stop.set()
        ticker.join()
        sys.setswitchinterval(old)
    # With the GIL held by the compile, the ticker cannot run inside it (a margin
    # covers the interpreter's switch interval before the compile starts).
    inside = sum(1 for s in stamps for a, b in windows if a + 0.01 < s < b - 0.002)
    total = sum(b - a for a, b in windows)
    assert inside >= 10, f"{inside} ticks during {total:.3f} s of compiling"
