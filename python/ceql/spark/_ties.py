"""The tie-breaker of the streaming path's reorder buffer: among rows with equal
time stamps the engine releases them in the byte order of a key made of the order
fields and the partition key, so that the order is the batch path's sort (time,
order, key; ascending, nulls first) whatever micro-batches the rows came in.

Each value is encoded so that byte order is value order: a null as ``00``; any
other value as ``01`` then: integers as 9 big-endian bytes offset by 2^64;
doubles as their IEEE bits with the sign flipped (all bits for negatives), -0.0
as 0.0 and every NaN as one, above infinity (Spark's sort); decimals as their
unscaled integers (one scale per column) in 33 bytes offset by 2^255; strings
and bytes with ``00`` escaped as ``00 FF`` and ended by ``00 00``; time stamps,
dates and durations as their integers. Components are prefix-free, so comparing
the concatenation compares the tuples.
"""

from __future__ import annotations

import struct
from typing import Any, Callable, List, Sequence

import pyarrow as pa


def tie_keys(table: pa.Table, columns: Sequence[str]) -> List[bytes]:
    """One key per row of ``table`` over ``columns`` (empty keys without columns)."""
    keys = [b""] * table.num_rows
    for name in columns:
        encode = _encoder(table.schema.field(name).type)
        for i, v in enumerate(_values(table.column(name))):
            keys[i] += b"\x00" if v is None else b"\x01" + encode(v)
    return keys


def check_tie_types(schema: pa.Schema, columns: Sequence[str], names: Sequence[str]) -> None:
    """Refuses, before the stream starts, tie columns whose type :func:`tie_keys`
    cannot encode (a struct, say): each micro-batch would fail in its task.
    ``names`` says what each column is to the user."""
    for column, name in zip(columns, names):
        t = schema.field(column).type
        try:
            _encoder(t)
        except ValueError:
            raise TypeError(
                f"ceql.spark: a stream cannot order events of equal time by {name} of type {t}: order fields and "
                "keys must be numbers, strings, booleans, binary or times in streaming (a batch DataFrame, which "
                "Spark sorts, takes any orderable type)"
            ) from None


def _values(col: Any) -> List[Any]:
    t = col.type
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        col = col.cast(pa.int32())
    elif pa.types.is_timestamp(t) or pa.types.is_date64(t) or pa.types.is_duration(t) or pa.types.is_time64(t):
        col = col.cast(pa.int64())
    elif pa.types.is_dictionary(t):
        col = col.cast(t.value_type)
    return col.to_pylist()


def _encoder(t: pa.DataType) -> Callable[[Any], bytes]:
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_boolean(t):
        return lambda v: b"\x01" if v else b"\x00"
    if pa.types.is_floating(t):
        return _double
    if pa.types.is_decimal(t):
        return _decimal(t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return lambda v: _escaped(v.encode("utf-8"))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return _escaped
    if (pa.types.is_integer(t) or pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_duration(t)
            or pa.types.is_time(t)):
        return lambda v: (int(v) + 2**64).to_bytes(9, "big")
    raise ValueError(f"ceql.spark: cannot order events by a column of type {t} (order fields and keys must be "
                     "numbers, strings, booleans, binary or times)")


def _decimal(scale: int) -> Callable[[Any], bytes]:
    """Decimals of one column (one scale) by their unscaled integers, exactly: as
    doubles, values that differ beyond 2^53 became equal ties."""

    def encode(v: Any) -> bytes:
        sign, digits, exponent = v.as_tuple()
        shift = exponent + scale
        if shift < 0:
            raise ValueError(f"ceql.spark: the decimal {v} has more digits after the point than its column's scale")
        n = int("".join(map(str, digits)) or "0") * 10**shift
        return ((-n if sign else n) + 2**255).to_bytes(33, "big")

    return encode


def _double(v: Any) -> bytes:
    v = float(v)
    if v == 0.0 or v != v:  # -0.0 is 0.0 and every NaN one NaN, as in Spark's sort
        v = abs(v) if v == 0.0 else float("nan")
    (bits,) = struct.unpack(">Q", struct.pack(">d", v))
    bits = bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits >> 63 else bits | 1 << 63
    return bits.to_bytes(8, "big")


def _escaped(b: bytes) -> bytes:
    return b.replace(b"\x00", b"\x00\xff") + b"\x00\x00"
