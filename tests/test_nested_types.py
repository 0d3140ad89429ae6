"""Arrow columns whose types nest deeper than 64 levels are refused with
``CeqlEventError`` naming the column, on every Arrow entry point. Before, the Arrow
C data import recursed once per level and 200 levels overflowed a 256 KiB thread's
stack (SIGSEGV). Run in a child process, so that a regression cannot take the test
runner with it."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_deeply_nested_arrow_columns_are_refused_on_a_small_stack():
    code = textwrap.dedent(
        """
        import threading
        import pyarrow as pa
        import ceql

        def nested(levels):
            t, v = pa.int64(), 1
            for _ in range(levels):
                t, v = pa.list_(t), [v]
            return pa.table({"type": ["A", "B"], "payload": pa.array([v, v], type=t)})

        q = ceql.compile("SELECT * FROM S WHERE A ; B")
        deep, shallow = nested(200), nested(10)
        calls = {
            "run": lambda t: q.run(t),
            "run_arrow": lambda t: q.run_arrow(t).num_rows,
            "run_arrow_batches": lambda t: sum(b.num_rows for b in q.run_arrow_batches(t)),
            "push_batch": lambda t: q.stream().push_batch(t),
        }
        out = []

        def work():
            for name, call in calls.items():
                try:
                    call(deep)
                    out.append(f"{name}: accepted")
                except ceql.CeqlEventError as e:
                    out.append(f"{name}: {e.field}: {e.message}")
                # 10 levels stay accepted, with the one match A ; B.
                result = call(shallow)
                out.append(f"{name} shallow: {len(result) if isinstance(result, list) else result}")

        threading.stack_size(256 << 10)
        t = threading.Thread(target=work)
        t.start()
        t.join()
        print("\\n".join(out))
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    lines = r.stdout.strip().splitlines()
    refused = "payload: the column's type nests more than 64 levels deep"
    assert lines == [
        f"run: {refused}", "run shallow: 1",
        f"run_arrow: {refused}", "run_arrow shallow: 1",
        f"run_arrow_batches: {refused}", "run_arrow_batches shallow: 1",
        f"push_batch: {refused}", "push_batch shallow: 1",
    ], r.stdout
