"""``max_state_bytes``: the budget of an evaluation's whole state (determinization
cache, tECS nodes, partitions), an option of ``run``, ``run_arrow``,
``run_arrow_batches`` and ``stream``. Outgrowing it raises ``CeqlMemoryError``
naming the cause; the default (half of the memory the process may use) lets an
ordinary evaluation through."""

from __future__ import annotations

import pytest

import ceql
from conftest import as_triples

pytest.importorskip("pyarrow")

# Without WITHIN, every key's partition stays: the state grows with the keys.
QUERY = "SELECT * FROM S WHERE A ; B PARTITION BY [k]"
KEYS = 20_000
EVENTS = [{"type": "A", "k": i} for i in range(KEYS)] + [{"type": "B", "k": i} for i in range(KEYS)]
# One match per key: its A at position k, its B at position KEYS + k.
EXPECTED = sorted((k, KEYS + k, (k, KEYS + k)) for k in range(KEYS))
# Far below what 20,000 partitions hold (over 52 bytes each), far above an empty state.
TINY = 1 << 20


def _evaluations(q, **options):
    """Each entry point, evaluating EVENTS to the end: name -> call."""
    return {
        "run": lambda: q.run(EVENTS, **options),
        "run_arrow": lambda: q.run_arrow(EVENTS, **options),
        "run_arrow_batches": lambda: q.run_arrow_batches(EVENTS, **options).read_all(),
        "stream": lambda: q.stream(**options).push_many(iter(EVENTS)),
    }


@pytest.mark.parametrize("entry", ["run", "run_arrow", "run_arrow_batches", "stream"])
def test_a_tiny_state_budget_on_many_partitions_raises_a_memory_error_naming_them(entry):
    q = ceql.compile(QUERY)
    with pytest.raises(ceql.CeqlMemoryError) as err:
        _evaluations(q, max_state_bytes=TINY)[entry]()
    e = err.value
    assert isinstance(e, MemoryError) and e.code == "MEMORY"
    assert "max_state_bytes" in str(e) and "partitions" in str(e)
    assert 0 < e.position < KEYS  # while the keys' partitions are being made, before any B


def test_the_default_state_budget_lets_many_partitions_through():
    q = ceql.compile(QUERY)
    assert sorted(as_triples(q.run(EVENTS))) == EXPECTED
    assert sorted(as_triples(q.run(EVENTS, max_state_bytes=None))) == EXPECTED
    table = q.run_arrow(EVENTS)
    assert sorted(zip(table["start"].to_pylist(), table["end"].to_pylist(),
                      map(tuple, table["positions"].to_pylist()))) == EXPECTED
    assert q.run_arrow_batches(EVENTS).read_all().num_rows == KEYS
    assert sorted(as_triples(q.stream().push_many(iter(EVENTS)))) == EXPECTED


def test_a_restored_stream_keeps_its_state_budget():
    """Snapshots carry the options (format 5 includes max_state_bytes)."""
    q = ceql.compile(QUERY)
    for budget, fails in ((TINY, True), (None, False)):
        s = q.stream(max_state_bytes=budget)
        assert s.push_many(EVENTS[:100]) == []
        restored = ceql.Stream.restore(q, s.snapshot())
        if fails:
            with pytest.raises(ceql.CeqlMemoryError, match="max_state_bytes"):
                restored.push_many(EVENTS[100:])
        else:
            assert sorted(as_triples(restored.push_many(EVENTS[100:]))) == EXPECTED


@pytest.mark.parametrize("bad", [-1, 0, 2**64, 1.5, "10", True])
def test_the_state_budget_must_be_a_positive_integer(bad):
    q = ceql.compile(QUERY)
    for entry, call in _evaluations(q, max_state_bytes=bad).items():
        with pytest.raises(ValueError, match="max_state_bytes must be None or a positive integer") as err:
            call()
        assert not isinstance(err.value, (OverflowError, ceql.CeqlError)), entry
