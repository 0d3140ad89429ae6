"""The reorder buffer of docs/language.md#s3-7a, written from its text: which arriving
events are late, and the order in which the others reach the evaluation. Independent
of the engine: no heap, no incremental release, just the definitions.

* The watermark ``W`` after some arrivals is the largest of ``t(e) - max_delay`` over
  the events ``e`` that arrived (a late event cannot raise it: ``t < W``), of the values
  given by the caller's watermark operations, and, after a flush, of the time stamps
  seen; ``-inf`` before any.
* An event is late when its time stamp is below the watermark at its arrival (the
  watermark of the arrivals and operations before it), or when it has none.
* The evaluation reads the events that are not late, sorted by (time stamp, arrival):
  a stable sort of the arrival order by time stamp.

That last point is the contract: the buffer only decides *which* events are read; the
order is always the sorted one (the release schedule is the engine's business and
cannot change it).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

#: One input operation: ("event", e), ("watermark", t_ns) or ("flush",).
Op = Tuple[Any, ...]


def reorder(ops: Sequence[Op], max_delay_ns: int,
            time_of: Callable[[Any], Optional[int]]) -> Tuple[List[Any], List[Any]]:
    """(the events in the order the evaluation reads them, the late events in
    arrival order) for the operations ``ops``; ``time_of(e)`` is the time stamp of
    event ``e`` in nanoseconds, or ``None``."""
    watermark = None
    max_seen = None
    on_time: List[Tuple[int, int, Any]] = []
    late: List[Any] = []
    for op in ops:
        if op[0] == "watermark":
            watermark = op[1] if watermark is None else max(watermark, op[1])
            continue
        if op[0] == "flush":
            if max_seen is not None:
                watermark = max_seen if watermark is None else max(watermark, max_seen)
            continue
        event = op[1]
        t = time_of(event)
        if t is None or (watermark is not None and t < watermark):
            late.append(event)
            continue
        on_time.append((t, len(on_time), event))
        max_seen = t if max_seen is None else max(max_seen, t)
        candidate = max_seen - max_delay_ns
        watermark = candidate if watermark is None else max(watermark, candidate)
    on_time.sort(key=lambda x: (x[0], x[1]))
    return [e for _, _, e in on_time], late


def within_bound(times: Sequence[int], max_delay_ns: int) -> bool:
    """Whether an arrival order with these time stamps is shuffled within the bound:
    no event arrives more than ``max_delay_ns`` behind the largest time stamp before it."""
    top = None
    for t in times:
        if top is not None and t < top - max_delay_ns:
            return False
        top = t if top is None else max(top, t)
    return True
