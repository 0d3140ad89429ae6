"""Snapshots: a restored stream continues exactly like the uninterrupted one, and
damaged snapshot bytes are refused with a typed error."""

from __future__ import annotations

import random

import pytest

import ceql

STRATEGIES = ["ALL", "NEXT", "LAST", "MAX", "STRICT"]


def _triples(matches):
    return [(m.start, m.end, tuple(m.positions)) for m in matches]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("window", ["WITHIN 2 seconds", "WITHIN 2 [ts]", "WITHIN 3 EVENTS"])
def test_restored_stream_keeps_the_strategy_state_of_expired_partitions(strategy, window):
    """A partition whose runs all left the window keeps its strategy state
    (strategy before window, reference 3.6); a snapshot must keep it too. Every
    cut point of a seeded stream over two keys."""
    q = ceql.compile(f"SELECT {strategy} * FROM S WHERE A+ ; C PARTITION BY [k] {window}")
    kw = dict(time_field="ts", time_unit="s") if "seconds" in window else {}
    rng = random.Random(f"{strategy} {window}")
    ts, events = 0, []
    for _ in range(24):
        ts += rng.choice([0, 1, 3, 6])
        events.append({"type": rng.choice("AAC"), "k": rng.randint(0, 1), "ts": ts})
    whole = _triples(q.stream(**kw).push_many(events))
    for cut in range(len(events) + 1):
        s = q.stream(**kw)
        first = _triples(s.push_many(events[:cut]))
        restored = ceql.Stream.restore(q, s.snapshot())
        assert first + _triples(restored.push_many(events[cut:])) == whole, cut


def test_the_reviewers_case_of_an_expired_next_partition():
    q = ceql.compile("SELECT NEXT * FROM S WHERE A+ ; C PARTITION BY [k] WITHIN 2 seconds")
    s = q.stream(time_field="ts", time_unit="s")
    s.push_many([{"type": "A", "k": 0, "ts": 3}, {"type": "A", "k": 1, "ts": 9}])
    restored = ceql.Stream.restore(q, s.snapshot())
    rest = [{"type": "A", "k": 0, "ts": 9}, {"type": "C", "k": 0, "ts": 10}]
    assert _triples(restored.push_many(rest)) == _triples(s.push_many(rest)) == []


def test_damaged_snapshots_are_refused_with_a_typed_error():
    q = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C WITHIN 5 EVENTS")
    s = q.stream()
    s.push_many([{"type": t} for t in "ABBAB"])
    data = s.snapshot()
    rng = random.Random(7)
    damaged = [data[:-3], data[:20], b"", data + b"x"]
    for _ in range(300):
        b = bytearray(data)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        damaged.append(bytes(b))
    for bad in damaged:
        with pytest.raises(ceql.CeqlSnapshotError):
            ceql.Stream.restore(q, bad)
    for wrong in ("text", 3.5, None):
        with pytest.raises(ceql.CeqlSnapshotError):
            ceql.Stream.restore(q, wrong)
    restored = ceql.Stream.restore(q, bytearray(data))
    assert _triples(restored.push_many([{"type": "C"}])) == _triples(s.push_many([{"type": "C"}]))
