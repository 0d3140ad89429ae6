"""Shared helpers for the engine tests."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Set, Tuple

import pytest

Triple = Tuple[int, int, Tuple[int, ...]]


def as_triples(matches: Iterable) -> List[Triple]:
    """(start, end, positions) of engine matches, in emitted order."""
    return [(m.start, m.end, tuple(m.positions)) for m in matches]


def check_against(emitted: List[Triple], expected: Iterable[Triple], limit=None) -> None:
    """Asserts that the engine output equals the expected set: no duplicates, in
    order of end, and (under LIMIT n) min(n, |O_j|) events per end drawn from O_j."""
    dupes = [t for t, c in Counter(emitted).items() if c > 1]
    assert not dupes, f"duplicate complex events: {dupes}"
    ends = [e for _, e, _ in emitted]
    assert ends == sorted(ends), "matches must be reported in order of end"
    expected = list(expected)
    if limit is None:
        assert sorted(emitted) == sorted(expected)
        return
    by_end: Dict[int, Set[Triple]] = defaultdict(set)
    for t in expected:
        by_end[t[1]].add(t)
    got: Dict[int, Set[Triple]] = defaultdict(set)
    for t in emitted:
        got[t[1]].add(t)
    for end in set(by_end) | set(got):
        assert got[end] <= by_end[end], f"at end {end}: {got[end] - by_end[end]} not in the expected set"
        assert len(got[end]) == min(limit, len(by_end[end])), f"at end {end}: LIMIT {limit} not respected"


@pytest.fixture
def triples():
    return as_triples
