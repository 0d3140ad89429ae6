"""``ceql.spark._ties``: the byte keys that break ties of time in the engine's reorder
buffer sort like Spark's ascending, nulls-first sort of the order fields and keys."""

from __future__ import annotations

import datetime as dt
import itertools
import random
import struct

import pytest

pa = pytest.importorskip("pyarrow")
from ceql.spark._ties import tie_keys  # noqa: E402


def _spark_order(values):
    """Ascending, nulls first, column by column (Spark's sort of the batch path)."""
    return sorted(range(len(values)), key=lambda i: [(v is not None, v) if v is not None else (False, 0)
                                                     for v in values[i]])


COLUMNS = {
    "i": (pa.int64(), [None, -2**63, -1, 0, 1, 2**63 - 1, 7]),
    "u": (pa.uint64(), [None, 0, 1, 2**64 - 1]),
    "f": (pa.float64(), [None, float("-inf"), -2.5, -0.5, 0.0, 1e-300, 3.0, float("inf")]),
    "s": (pa.string(), [None, "", "a", "a\x00", "a\x00b", "ab", "b", "é"]),
    "b": (pa.bool_(), [None, False, True]),
    "t": (pa.timestamp("us", tz="UTC"), [None, dt.datetime(1969, 12, 31, tzinfo=dt.timezone.utc),
                                         dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)]),
}


@pytest.mark.parametrize("names", [("i",), ("u",), ("f",), ("s",), ("b",), ("t",), ("s", "i"), ("i", "s", "f"),
                                   ("b", "t", "u")])
def test_byte_order_is_the_spark_sort_order(names):
    rnd = random.Random(7)
    rows = [tuple(rnd.choice(COLUMNS[n][1]) for n in names) for _ in range(200)]
    rows += list(itertools.product(*(COLUMNS[n][1] for n in names)))[:300]
    table = pa.table({n: pa.array([r[k] for r in rows], COLUMNS[n][0]) for k, n in enumerate(names)})
    keys = tie_keys(table, list(names))
    by_key = sorted(range(len(rows)), key=lambda i: (keys[i], i))
    expected = _spark_order(rows)  # stable, as the keys' sort by (key, index)
    assert [rows[i] for i in by_key] == [rows[i] for i in expected]
    # Equal tuples, equal keys; different tuples, different keys.
    for a, b in itertools.combinations(range(0, len(rows), 7), 2):
        assert (keys[a] == keys[b]) == (rows[a] == rows[b])


def test_no_columns_give_empty_keys_and_unsupported_types_are_refused():
    table = pa.table({"x": pa.array([[1], [2]])})
    assert tie_keys(table, []) == [b"", b""]
    with pytest.raises(ValueError, match="cannot order events"):
        tie_keys(table, ["x"])


def test_decimals_differing_beyond_a_double_are_ordered_exactly():
    """Decimals were encoded as doubles: 2^60 and 2^60 + 1 became one tie value, so a
    stream read them in arrival order (or refused them as duplicates) while the batch
    path sorted them."""
    from decimal import Decimal

    big = Decimal(2**60)
    values = [big + 1, None, big, Decimal(-(2**70)), Decimal(0), big - 1]
    keys = tie_keys(pa.table({"d": pa.array(values, pa.decimal128(38, 0))}), ["d"])
    assert sorted(range(len(values)), key=keys.__getitem__) == [1, 3, 4, 5, 2, 0]
    cents = [Decimal("1.51"), Decimal("-0.01"), Decimal("1.50"), Decimal("0.00")]
    keys = tie_keys(pa.table({"d": pa.array(cents, pa.decimal128(5, 2))}), ["d"])
    assert sorted(range(len(cents)), key=keys.__getitem__) == [1, 3, 2, 0]


def test_minus_zero_and_every_nan_are_one_value_as_in_spark_sort():
    """Spark's sort puts -0.0 with 0.0 and every NaN together above infinity: two
    events with those order values at one time are duplicates in batch, so the
    stream, which checks equal tie keys, must see them equal too."""
    nan2 = struct.unpack(">d", struct.pack(">Q", 0xFFF8_0000_0000_0001))[0]
    values = [-0.0, 0.0, float("nan"), nan2, float("inf")]
    keys = tie_keys(pa.table({"f": pa.array(values, pa.float64())}), ["f"])
    assert keys[0] == keys[1] and keys[2] == keys[3]
    assert keys[1] < keys[4] < keys[2]
