"""Output rows: the columns of a complex event and its deterministic ``match_id``."""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence

import pyarrow as pa

#: Output columns besides the partition key columns, in order.
MATCH_ID, START, END, KIND, EVENTS = "match_id", "start_time", "end_time", "kind", "events"

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def canon(v: Any) -> str:
    """A canonical text of a value, stable across processes and versions."""
    t = type(v)
    if t is int:
        return f"i{v}"
    if t is str:
        return f"s{len(v)}:{v}"
    if v is None:
        return "N"
    if isinstance(v, bool):
        return "b1" if v else "b0"
    if isinstance(v, int):
        return f"i{int(v)}"
    if isinstance(v, float):
        return "f" + v.hex()
    if isinstance(v, str):
        return f"s{len(v)}:{v}"
    if isinstance(v, (bytes, bytearray)):
        return "y" + bytes(v).hex()
    if isinstance(v, _dt.datetime):
        aware = v if v.tzinfo is not None else v.replace(tzinfo=_dt.timezone.utc)
        d = aware - _EPOCH
        return f"t{(d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds}"
    if isinstance(v, _dt.date):
        return "d" + v.isoformat()
    if isinstance(v, decimal.Decimal):
        return "D" + str(v)
    if type(v).__name__ == "Timestamp":  # pandas
        return canon(v.to_pydatetime())
    if hasattr(v, "item"):  # numpy scalar
        return canon(v.item())
    return "o" + repr(v)


def canon_row(values: Sequence[Any]) -> str:
    """Canonical text of one event's order values."""
    return "\x1f".join([canon(v) for v in values])


def _digest(query_hash: bytes, kind: str, key: Sequence[Any], rows: Sequence[str]) -> str:
    text = kind + "\x1e" + "\x1f".join([canon(v) for v in key]) + "\x1e" + "\x1d".join(rows)
    return hashlib.sha256(query_hash + text.encode()).hexdigest()[:32]


def match_id(query_hash: bytes, key: Sequence[Any], orders: Sequence[Sequence[Any]], kind: str = "match") -> str:
    """Hash of the query, the key and the order values of the events that make the
    complex event (its first and last event, then its data events), so that a
    replayed micro-batch, another partitioning or another run give the same id."""
    return _digest(query_hash, kind, key, [canon_row(o) for o in orders])


@dataclass(frozen=True)
class OutputLayout:
    """How output rows are made from the rows fed to the engine."""

    query_hash: bytes
    key_hidden: List[str]  # hidden key columns of the input rows
    key_names: List[str]  # their names in the output
    time_field: str
    order_fields: List[str]
    input_columns: List[str]  # user columns, the fields of `events`
    schema: pa.Schema  # Arrow schema of the output
    with_kind: bool

    def empty(self) -> pa.Table:
        return self.schema.empty_table()

    def _orders(self, table: pa.Table, idx: List[int]) -> List[tuple]:
        if not idx:
            return []
        t = table.select(self.order_fields).take(idx)
        cols = [c.to_pylist() for c in t.columns]
        return list(zip(*cols))

    def matches(self, retained: pa.Table, base: int, matches: Sequence[Any]) -> pa.Table:
        """Output rows of engine matches; positions index ``retained`` from ``base``."""
        if not matches:
            return self.empty()
        starts: List[int] = []
        ends: List[int] = []
        flat: List[int] = []
        offsets = [0]
        for m in matches:
            starts.append(m.start - base)
            ends.append(m.end - base)
            flat.extend(p - base for p in m.positions)
            offsets.append(len(flat))
        if min(starts) < 0:
            raise RuntimeError("ceql.spark: a match starts at a row that is no longer retained")
        keys = retained.select(self.key_hidden).take(ends) if self.key_hidden else None
        key_values = list(zip(*[c.to_pylist() for c in keys.columns])) if keys is not None else [()] * len(matches)
        # Canonical order values once per row, however many matches contain it.
        needed = sorted(set(starts) | set(ends) | set(flat))
        texts = dict(zip(needed, (canon_row(o) for o in self._orders(retained, needed))))
        qh = self.query_hash
        ids = []
        for i in range(len(matches)):
            rows = [texts[starts[i]], texts[ends[i]]]
            rows.extend(texts[j] for j in flat[offsets[i] : offsets[i + 1]])
            ids.append(_digest(qh, "match", key_values[i], rows))
        events_rows = retained.select(self.input_columns).take(flat)
        return self._assemble(
            keys,
            ids,
            retained.column(self.time_field).take(starts),
            retained.column(self.time_field).take(ends),
            events_rows,
            offsets,
            "match",
        )

    def late(self, rows: pa.Table) -> pa.Table:
        """One output row of kind ``late`` per late event (``late="emit"``)."""
        if rows.num_rows == 0:
            return self.empty()
        n = rows.num_rows
        keys = rows.select(self.key_hidden) if self.key_hidden else None
        key_values = list(zip(*[c.to_pylist() for c in keys.columns])) if keys is not None else [()] * n
        orders = self._orders(rows, list(range(n)))
        ids = [match_id(self.query_hash, key_values[i], [orders[i]], kind="late") for i in range(n)]
        t = rows.column(self.time_field)
        return self._assemble(keys, ids, t, t, rows.select(self.input_columns), list(range(n + 1)), "late")

    def _assemble(self, keys: Optional[pa.Table], ids: List[str], start: Any, end: Any, events: pa.Table, offsets: List[int], kind: str) -> pa.Table:
        n = len(ids)
        cols: List[Any] = []
        if keys is not None:
            cols.extend(keys.column(i).combine_chunks() for i in range(keys.num_columns))
        cols.append(pa.array(ids, type=pa.string()))
        cols.append(_array(start))
        cols.append(_array(end))
        if self.with_kind:
            cols.append(pa.array([kind] * n, type=pa.string()))
        ev_field = self.schema.field(EVENTS)
        struct_type = ev_field.type.value_type
        ev = events.combine_chunks()
        if ev.num_rows:
            struct = pa.StructArray.from_arrays(
                [ev.column(i).combine_chunks().cast(struct_type.field(i).type) for i in range(ev.num_columns)],
                fields=list(struct_type),
            )
        else:
            struct = pa.array([], type=struct_type)
        cols.append(pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), struct, type=ev_field.type))
        arrays = [c.cast(f.type) if c.type != f.type else c for c, f in zip(cols, self.schema)]
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _array(x: Any) -> pa.Array:
    return x.combine_chunks() if isinstance(x, pa.ChunkedArray) else x
