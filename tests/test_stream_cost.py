"""``Stream.push`` costs amortised O(1) in the events the stream retains (issue
15 item 5: the view of the retained chunks was rebuilt on every push, so 100,000
pushes without a window took 245 s). Costs are compared as ratios of the same
work at two sizes, best of several rounds, so that a loaded machine does not
decide the outcome."""

from __future__ import annotations

import time

import ceql


def _best_seconds(work, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - t0)
    return best


def _pushes(stream, make, n):
    def work():
        for _ in range(n):
            make(stream)
    return work


def test_push_costs_the_same_with_1k_and_20k_retained_events():
    # No window: every event is retained (W0402), as in the reproducer.
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[x > 5]")
    event = {"type": "A", "x": 1}
    for make in (lambda s: s.push(event), lambda s: s.push_many([event])):
        s = q.stream()
        _pushes(s, make, 1_000)()
        small = _best_seconds(_pushes(s, make, 500))
        _pushes(s, make, 20_000 - s.position)()
        assert s.position >= 20_000
        large = _best_seconds(_pushes(s, make, 500))
        assert large < 3 * small, f"500 pushes: {small:.4f} s at 1k retained, {large:.4f} s at 20k"


def test_matches_of_many_single_pushes_read_their_events_back():
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[x > 5] WITHIN 3000 EVENTS")
    s = q.stream()
    found = []
    for i in range(10_000):
        found += s.push({"type": "A" if i % 1000 == 0 else "B", "x": 6, "i": i})
    # Every (A, later B) pair at most 3000 positions apart (the window is inclusive).
    a_at = range(0, 10_000, 1000)
    assert len(found) == sum(1 for a in a_at for b in range(a + 1, min(a + 3000, 9_999) + 1) if b % 1000)
    for m in found[::97]:
        assert [e["i"] for e in m.events] == list(m.positions)
    restored = ceql.Stream.restore(q, s.snapshot())
    last = restored.push({"type": "B", "x": 0, "i": 10_000})
    assert sorted(m.positions for m in last) == [(7_000, 10_000), (8_000, 10_000), (9_000, 10_000)]
    assert all([e["i"] for e in m.events] == list(m.positions) for m in last)
