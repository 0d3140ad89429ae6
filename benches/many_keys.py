"""The engine alone on the Spark benchmark's stream shape: N events (one per ms),
KEYS keys drawn at random, ``HOT ; COLD ... PARTITION BY [sensor] WITHIN 5 seconds``.
With many keys almost every event creates and drops a partition.

    python benches/many_keys.py            # N=1000000 KEYS=100000 REPEAT=3: seconds per run_arrow
    N=200000 REPEAT=1 valgrind --tool=callgrind --toggle-collect='*push_arrow_columnar*' \\
        "$(python -c 'import sys; print(sys.executable)')" benches/many_keys.py   # instruction counts
"""

import os
import time

import numpy as np
import pyarrow as pa

import ceql

QUERY = (
    "SELECT * FROM S WHERE HOT ; COLD FILTER HOT[temp > 40] AND COLD[temp < 10] "
    "PARTITION BY [sensor] WITHIN 5 seconds"
)


def stream(n: int, keys: int) -> pa.Table:
    rng = np.random.default_rng(1)
    kind = rng.integers(0, 10, n)
    types = np.where(kind < 3, "HOT", np.where(kind < 5, "WARM", np.where(kind < 8, "COLD", "OTHER")))
    temp = np.where(types == "HOT", 45.0, np.where(types == "COLD", 5.0, 20.0))
    ts = (1_709_251_200_000_000 + np.arange(n) * 1000).astype("datetime64[us]")
    return pa.table({"type": types, "ts": ts, "sensor": rng.integers(0, keys, n), "temp": temp})


def main() -> None:
    n = int(os.environ.get("N", "1000000"))
    keys = int(os.environ.get("KEYS", "100000"))
    table = stream(n, keys)
    query = ceql.compile(QUERY)
    for _ in range(int(os.environ.get("REPEAT", "3"))):
        t0 = time.perf_counter()
        out = query.run_arrow(table, time_field="ts")
        print(f"{n:,} events, {keys:,} keys: {out.num_rows:,} matches in {time.perf_counter() - t0:.3f} s", flush=True)


if __name__ == "__main__":
    main()
