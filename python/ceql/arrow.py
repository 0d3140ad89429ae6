"""Helpers for matches as Arrow tables (``Query.run_arrow``)."""

from __future__ import annotations

from typing import Any


def join_events(matches: Any, events: Any) -> Any:
    """One row per (match, matched event): ``match_id``, ``start``, ``end``,
    ``index`` (0-based position of the event inside the match), ``position`` and
    every column of ``events`` (the Arrow table or batch the matches were computed
    on; positions are its row numbers). ``matches`` is a table from
    ``Query.run_arrow`` or a batch from ``Query.run_arrow_batches``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(matches, pa.RecordBatch):
        matches = pa.Table.from_batches([matches])
    positions = matches.column("positions").combine_chunks()
    parents = pc.list_parent_indices(positions)
    flat = pc.list_flatten(positions)
    # index inside the match = flat offset - offset of the match's first element
    starts = pc.take(pc.subtract(positions.offsets, positions.offsets[0]), parents)
    index = pc.subtract(pa.array(range(len(flat)), pa.int64()), pc.cast(starts, pa.int64()))
    rows = events.take(flat)
    columns = {
        "match_id": pc.take(matches.column("match_id"), parents),
        "start": pc.take(matches.column("start"), parents),
        "end": pc.take(matches.column("end"), parents),
        "index": index,
        "position": flat,
    }
    for name in rows.column_names:
        columns[name if name not in columns else f"event_{name}"] = rows.column(name)
    return pa.table(columns)
