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


# -- a Stream shared by threads (item 13) -------------------------------------------

# Keyed by thread, without a window (an EVENTS window would count the other
# threads' events, V50): each thread's complex events depend on its own events
# only, whatever the interleaving, so a single-threaded run of them is the truth
# (LAST: one complex event per end, so the output stays linear).
SHARED = "SELECT LAST * FROM S WHERE A ; B+ ; C PARTITION BY [tid]"
THREADS = 8


def _thread_events(tid: int, n: int = 240):
    kinds = "ABBCAB" "CBXC"
    return [{"type": kinds[(i * 7 + tid) % len(kinds)], "tid": tid, "seq": i} for i in range(n)]


def _seqs(matches, events=None):
    """Each match as the `seq` of its events (read back through Match.events)."""
    return [tuple(e["seq"] for e in m.events) for m in matches]


def _pusher(stream, events, out, errors, barrier):
    import pyarrow as pa

    def run():
        try:
            barrier.wait()
            got = []
            i = 0
            step = 0
            while i < len(events):
                size = 1 + (step * 5 + events[0]["tid"]) % 7
                chunk = events[i:i + size]
                how = step % 4
                if how == 0:
                    for e in chunk:
                        got += _seqs(s_push(e))
                elif how == 1:
                    got += _seqs(stream.push_many(chunk))
                elif how == 2:
                    got += _seqs(stream.push_many(iter(chunk)))
                else:
                    got += _seqs(stream.push_batch(pa.Table.from_pylist(chunk)))
                i += size
                step += 1
            out.extend(got)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    s_push = stream.push
    return run


def test_threads_pushing_into_one_stream_lose_and_mix_nothing():
    q = ceql.compile(SHARED)
    per_thread = {t: _thread_events(t) for t in range(THREADS)}
    truth = {t: _seqs(q.run(evs)) for t, evs in per_thread.items()}
    assert all(truth.values()), "each thread's events have matches"
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for _ in range(3):
            s = q.stream()
            outs = {t: [] for t in per_thread}
            errors = []
            barrier = threading.Barrier(THREADS + 1)
            threads = [threading.Thread(target=_pusher(s, per_thread[t], outs[t], errors, barrier))
                       for t in per_thread]
            for th in threads:
                th.start()
            barrier.wait()
            while any(th.is_alive() for th in threads):
                s.stats()  # reads interleaved with the pushes
                s.snapshot()
            for th in threads:
                th.join()
            assert not errors, errors
            assert outs == truth
            assert s.position == sum(map(len, per_thread.values()))
            assert s.stats()["matches"] == sum(map(len, truth.values()))
    finally:
        sys.setswitchinterval(old)


def test_a_stream_used_from_inside_its_own_call_is_a_clear_error():
    q = ceql.compile("SELECT * FROM S WHERE A ; B")
    s = q.stream()

    def events():
        yield {"type": "A"}
        s.push({"type": "B"})
        yield {"type": "B"}

    with pytest.raises(ceql.CeqlError, match="another call of the same stream"):
        s.push_many(events())
    # The refused call raised inside the iterator: the A pulled before it is
    # processed (push_many keeps every pulled event), the B never was.
    assert s.position == 1 and "position=1" in repr(s)
    assert sorted(m.positions for m in s.push_many([{"type": "A"}, {"type": "B"}])) == [(0, 2), (1, 2)]


# -- a Query shared by threads -------------------------------------------------------

def test_one_query_evaluated_by_many_threads_at_once():
    import pyarrow as pa

    q = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C PARTITION BY [tid] WITHIN 12 EVENTS")
    inputs = {t: _thread_events(t, 400) for t in range(THREADS)}
    ways = {
        "run": lambda evs: [m.positions for m in q.run(evs)],
        "run_arrow": lambda evs: [tuple(p) for p in q.run_arrow(pa.Table.from_pylist(evs)).column("positions").to_pylist()],
        "stream": lambda evs: [m.positions for m in q.stream().push_many(iter(evs))],
        "events": lambda evs: _seqs(q.run(evs)),
    }
    truth = {(t, w): f(inputs[t]) for t in inputs for w, f in ways.items()}
    results, errors = {}, []
    barrier = threading.Barrier(len(truth))

    def work(t, w):
        try:
            barrier.wait()
            for _ in range(5):
                results[(t, w)] = ways[w](inputs[t])
                assert results[(t, w)] == truth[(t, w)]
        except BaseException as e:
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=work, args=key) for key in truth]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert results == truth
