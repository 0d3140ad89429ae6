"""Memory soak of the language wave's operators: their state is bounded by the window.

Each query runs an unbounded-looking stream (``CEQL_SOAK_EVENTS`` events, default 5M)
through a bounded window, with 500 keys so that substreams are created and dropped
all the time; resident memory after 1.5M events and at the end must differ by less
than 10%. The state each operator adds, and what bounds it:

* trailing ``ABSENT(...) FOR d`` (docs/language.md#s3-3b): the deadline queue, bounded
  by the matches whose deadline is within ``d`` of the newest event;
* ``ABSENT(...)`` between two events (#s3-3a): a guard on a skip loop, no state;
* ``AND`` (#s3-3c): the product automaton's determinized states and their lists;
* filters between events (#s3-4a): the stored attribute values of the window's events;
* equalities routed by key (#s3-4b): one substream per routing key, dropped when idle;
* the reorder buffer (``max_delay``): the events within the delay of the newest one.
"""

from __future__ import annotations

import gc
import os

import pytest

import ceql

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

TOTAL = int(os.environ.get("CEQL_SOAK_EVENTS", "5000000"))
BATCH = 250_000
#: The first measurement, once the window, the caches and the allocator are warm.
FIRST = 1_500_000

QUERIES = {
    "trailing_absence": (
        "SELECT * FROM S WHERE A1 ; ABSENT(A2) FOR 50 milliseconds PARTITION BY [k] WITHIN 100 milliseconds",
        {},
    ),
    "absence_between": ("SELECT * FROM S WHERE A1 ; ABSENT(A2) ; A3 PARTITION BY [k] WITHIN 100 EVENTS", {}),
    "conjunction": ("SELECT * FROM S WHERE A1 AND A2 AND A3 PARTITION BY [k] WITHIN 100 EVENTS", {}),
    "filter_between_events": (
        "SELECT * FROM S WHERE A1 AS a ; A3 AS c FILTER c[v > a.v] PARTITION BY [k] WITHIN 100 EVENTS",
        {},
    ),
    "routed_equality": ("SELECT * FROM S WHERE A1 AS a ; A2 AS b FILTER b[k = a.k] WITHIN 100 EVENTS", {}),
    "reorder_buffer": (
        "SELECT * FROM S WHERE A1 ; A2 ; A3 PARTITION BY [k] WITHIN 100 milliseconds",
        {"max_delay": "5 milliseconds"},
    ),
}


def rss_bytes() -> int:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def pool(seed: int):
    """A few distinct batches of types, keys and values, reused round-robin (so that the
    test's own allocations do not grow); the time stamps are added per batch."""
    rng = np.random.default_rng(seed)
    types = np.array(["A1", "A2", "A3", "B1", "B2", "B3", "B4", "B5", "B6"])
    return [
        pa.table(
            {
                "type": pa.array(types[rng.integers(0, len(types), BATCH)]).dictionary_encode(),
                "k": pa.array(rng.integers(0, 500, BATCH)),
                "v": pa.array(rng.integers(0, 100, BATCH)),
            }
        )
        for _ in range(4)
    ]


def with_time(base, start: int, jitter):
    """``base`` with ``ts``: one event per millisecond from ``start``, shuffled by up to
    4 ms with ``jitter`` (a reused array of offsets; within a 5 ms ``max_delay``)."""
    ts = np.arange(start, start + BATCH, dtype=np.int64)
    if jitter is not None:
        ts -= jitter
    return base.append_column("ts", pa.array(ts))


@pytest.mark.soak
@pytest.mark.parametrize("name", list(QUERIES))
def test_operator_state_stays_bounded_by_the_window(name):
    text, options = QUERIES[name]
    q = ceql.compile(text)
    s = q.stream(time_field="ts", time_unit="ms", **options)
    bases = pool(11)
    jitter = np.random.default_rng(12).integers(0, 5, BATCH) if "max_delay" in options else None
    matches = 0
    rss_first = None
    # The reorder buffer takes Arrow data in as rows (~50k events/s): fewer events.
    total = TOTAL if "max_delay" not in options else max(2 * FIRST, TOTAL // 2)
    for i, start in enumerate(range(0, total, BATCH)):
        matches += len(s.push_batch(with_time(bases[i % len(bases)], start, jitter)))
        if start + BATCH == FIRST:
            gc.collect()
            rss_first = rss_bytes()
    gc.collect()
    rss_last = rss_bytes()
    stats = s.stats()
    # A reorder buffer still holds the events within its delay of the newest one.
    assert total - 10 <= stats["events"] <= total
    assert matches > 0
    growth = (rss_last - rss_first) / rss_first
    print(f"{name}: rss after {FIRST / 1e6}M: {rss_first / 2**20:.1f} MiB, after {total / 1e6:.1f}M: "
          f"{rss_last / 2**20:.1f} MiB ({growth:+.1%}); {matches} matches; stats {stats}")
    # Growth is what is tested: the allocator may give memory back (a drop is fine).
    assert growth < 0.10, f"{name}: resident memory grew by {growth:.1%}"
