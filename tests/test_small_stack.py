"""Compiling and running in a Python thread with a 256 KiB stack, the stack of
Spark executors' Python workers (issue 15, item 1): a 200-item `;` chain
overflowed it (SIGSEGV). Long chains and deep nesting must compile and run, and
nesting beyond the documented limits must be a ``CeqlSyntaxError`` (E0102), not
a crash. Run in a subprocess, so that a crash fails the test instead of the
test session."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import threading
    import ceql

    def check():
        chain = " ; ".join(f"A{i}" for i in range(200))
        q = ceql.compile("SELECT * FROM S WHERE " + chain)
        assert [m.positions for m in q.run([{"type": f"A{i}"} for i in range(200)])] == [tuple(range(200))]

        long = " ; ".join(["A"] * 900)
        q = ceql.compile("SELECT * FROM S WHERE " + long + " WITHIN 1000 EVENTS")
        assert len(q.run([{"type": "A"}] * 900)) == 1

        nested = "SELECT * FROM S WHERE " + "(" * 250 + "A ; B" + ")" * 250 + " FILTER A[" + "(" * 200 + "x > 1" + ")" * 200 + "]"
        q = ceql.compile(nested)
        assert [m.positions for m in q.run([{"type": "A", "x": 2}, {"type": "B"}])] == [(0, 1)]

        sums = "SELECT * FROM S WHERE A FILTER A[" + " + ".join(["x"] * 60) + " > 60]"
        q = ceql.compile(sums)
        assert [m.positions for m in q.run([{"type": "A", "x": 1}, {"type": "A", "x": 2}])] == [(1,)]

        for text in ("SELECT * FROM S WHERE " + "(" * 5000 + "A" + ")" * 5000,
                     "SELECT * FROM S WHERE " + " ; ".join(["A"] * 10_000),
                     "SELECT * FROM S WHERE " + " OR ".join(["A"] * 10_000),
                     "SELECT * FROM S WHERE A FILTER A[" + " + ".join(["x"] * 100_000) + " > 1]",
                     "SELECT * FROM S WHERE A[" + "(" * 5000 + "x > 1"):
            try:
                ceql.compile(text)
            except ceql.CeqlSyntaxError as e:
                assert e.code == "E0102", (e.code, str(e)[:200])
            else:
                raise AssertionError("compiled: " + text[:60])
        print("ok")

    failure = []

    def guarded():
        try:
            check()
        except BaseException as e:
            failure.append(repr(e))

    threading.stack_size(256 * 1024)
    t = threading.Thread(target=guarded)
    t.start()
    t.join()
    assert not failure, failure
    """
)


def test_compile_and_run_in_a_thread_with_a_256_kib_stack():
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", (proc.returncode, proc.stdout, proc.stderr[-3000:])
