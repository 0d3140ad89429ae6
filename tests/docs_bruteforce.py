"""An independent, deliberately naive evaluator for the one query shape the tutorials run on
large inputs, written from docs/language.md#s3-3 and #s3-7 to #s3-10 (no automata, no engine):

    SELECT [ALL] * WHERE s1 ; s2 ; ... ; sk  [PARTITION BY [a]]  WITHIN n [c] | duration
    [CONSUME BY NONE | ANY | PARTITION]

where every step ``s_m`` is one event (a type set and unary filters), so a match is a tuple
of positions ``i1 < ... < ik``, all in the same partition, each satisfying its step, with
``w(ik) − w(i1) ≤ n`` (inclusive window, docs/language.md#s3-7) and ``i1`` after the partition's last reset
(docs/language.md#s3-9 to #s3-10). The brute-force oracle of tests/oracle is exact for every query but too slow for
the 20,000-event stock sample; this one handles exactly this shape, fast enough, so that the
numbers the tutorials show are checked against the semantics and not only against the engine.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from typing import Callable, Dict, List, Optional, Sequence, Tuple

Row = dict
Step = Callable[[Row], bool]


def _partitions(rows: Sequence[Row], key: Optional[str]) -> Dict[object, List[int]]:
    parts: Dict[object, List[int]] = defaultdict(list)
    for p, r in enumerate(rows):
        if key is None:
            parts[None].append(p)
        elif r.get(key) is not None:
            parts[(type(r[key]), r[key])].append(p)
    return parts


def count_matches(rows: Sequence[Row], steps: Sequence[Step], coord: Sequence[int], n: int,
                  key: Optional[str] = None) -> int:
    """Number of complex events under CONSUME BY NONE: for every first event, scan forward
    through its partition while the window allows, counting partial tuples by length."""
    k = len(steps)
    total = 0
    for positions in _partitions(rows, key).values():
        for a, i1 in enumerate(positions):
            if not steps[0](rows[i1]):
                continue
            partial = [0] * (k + 1)
            partial[1] = 1
            for p in positions[a + 1:]:
                if coord[p] - coord[i1] > n:
                    break
                r = rows[p]
                for m in range(k - 1, 0, -1):  # longest first: p extends tuples that end before it
                    if partial[m] and steps[m](r):
                        if m + 1 == k:
                            total += partial[m]
                        else:
                            partial[m + 1] += partial[m]
    return total


def matches(rows: Sequence[Row], steps: Sequence[Step], coord: Sequence[int], n: int,
            key: Optional[str] = None, consume: str = "NONE") -> List[Tuple[int, int, Tuple[int, ...]]]:
    """Every complex event ``(start, end, positions)``, in order of end: for each position,
    the tuples that end there (enumerated backwards), then the CONSUME BY reset."""
    k = len(steps)
    parts = _partitions(rows, key)
    part_of = {p: pk for pk, ps in parts.items() for p in ps}
    reset: Dict[object, int] = defaultdict(lambda: -1)
    global_reset = -1
    out: List[Tuple[int, int, Tuple[int, ...]]] = []

    def back(positions, m, before, j, low, acc):
        # choose the position of step m (0-based) among positions[low:before]
        for b in range(before - 1, low - 1, -1):
            p = positions[b]
            if coord[j] - coord[p] > n:
                break
            if steps[m](rows[p]):
                if m == 0:
                    yield (p,) + acc
                else:
                    yield from back(positions, m - 1, b, j, low, (p,) + acc)

    for j, r in enumerate(rows):
        if j not in part_of or not steps[k - 1](r):
            continue
        pk = part_of[j]
        positions = parts[pk]
        here = bisect_left(positions, j)
        floor = max(reset[pk], global_reset)
        low = bisect_left(positions, floor + 1)
        found = sorted(back(positions, k - 2, here, j, low, (j,)) if k > 1 else [(j,)])
        out.extend((t[0], j, t) for t in found)
        if found and consume == "ANY":
            global_reset = j
        elif found and consume == "PARTITION":
            reset[pk] = j
    return out
