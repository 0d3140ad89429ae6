"""Memory soak: an unbounded stream through a bounded window must not grow.

20 million events go through ``WITHIN 100 EVENTS`` (with PARTITION BY, so that
partitions are created and evicted all the time, and with matches); resident
memory after 2M and after 20M events must differ by less than 10%.
"""

from __future__ import annotations

import gc
import os

import pytest

import ceql

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

TOTAL = 20_000_000
BATCH = 250_000


def rss_bytes() -> int:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def batches(seed: int):
    rng = np.random.default_rng(seed)
    types = np.array(["A1", "A2", "A3", "B1", "B2", "B3", "B4", "B5", "B6"])
    for _ in range(4):  # a few distinct batches, reused round-robin
        n = BATCH
        yield pa.table(
            {
                "type": pa.array(types[rng.integers(0, len(types), n)]).dictionary_encode(),
                "k": pa.array(rng.integers(0, 500, n)),
                "v": pa.array(rng.integers(0, 100, n)),
            }
        )


@pytest.mark.soak
def test_memory_stays_flat_over_20m_events():
    q = ceql.compile(
        "SELECT * FROM S WHERE A1 ; A2 ; A3 FILTER A1[v < 50] PARTITION BY [k] WITHIN 100 EVENTS"
    )
    s = q.stream()
    pool = list(batches(7))
    matches = 0
    rss_2m = None
    for i in range(TOTAL // BATCH):
        matches += len(s.push_batch(pool[i % len(pool)]))
        if s.position == 2_000_000:
            gc.collect()
            rss_2m = rss_bytes()
    gc.collect()
    rss_20m = rss_bytes()
    stats = s.stats()
    assert s.position == TOTAL
    assert stats["events"] == TOTAL
    assert matches == stats["matches"] > 0
    assert stats["partitions_created"] > stats["partitions"]  # idle partitions were dropped
    growth = (rss_20m - rss_2m) / rss_2m
    print(f"rss after 2M: {rss_2m / 2**20:.1f} MiB, after 20M: {rss_20m / 2**20:.1f} MiB ({growth:+.1%}); "
          f"live tECS nodes {stats['live_nodes']}, partitions {stats['partitions']}")
    assert abs(growth) < 0.10, f"resident memory grew by {growth:.1%}"
