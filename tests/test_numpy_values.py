"""numpy and pandas scalars in events: each is read as the Python value it
stands for (same value, same type), or refused with a ``CeqlEventError`` naming
the field, on every input path; none is silently changed (issue 15, items 9-10)."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import ceql

# Partition keys are equal only when their values and types are (docs/language.md#s3-8):
# an A keyed by the numpy value and a B keyed by its Python equivalent match
# exactly when the numpy value was read as that Python value.
KEYED = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 10 EVENTS")

EXACT = [
    (np.int8(-3), -3),
    (np.int16(300), 300),
    (np.int32(-70_000), -70_000),
    (np.int64(2**63 - 1), 2**63 - 1),
    (np.uint8(255), 255),
    (np.uint16(65_535), 65_535),
    (np.uint32(2**32 - 1), 2**32 - 1),
    (np.uint64(2**63 - 1), 2**63 - 1),
    (np.float16(2.5), 2.5),
    (np.float32(0.1), float(np.float32(0.1))),
    (np.float64(0.1), 0.1),
    (np.longdouble(0.5), 0.5),
    (np.bool_(True), True),
    (np.bool_(False), False),
    (np.str_("x"), "x"),
    (np.datetime64("2020-01-01T00:00:01", "s"), dt.datetime(2020, 1, 1, 0, 0, 1)),
    (np.datetime64("2020-01", "M"), dt.datetime(2020, 1, 1)),
    (np.datetime64("2021", "Y"), dt.datetime(2021, 1, 1)),
    (np.datetime64("1700-03-01", "D"), dt.datetime(1700, 3, 1)),
    (np.datetime64(5_000, "ps"), pd.Timestamp(5)),
    (np.timedelta64(3, "ms"), dt.timedelta(milliseconds=3)),
    (np.timedelta64(2, "W"), dt.timedelta(weeks=2)),
    (pd.Timestamp("2020-01-01 00:00:00.000000001"), pd.Timestamp("2020-01-01") + pd.Timedelta(1)),
]

REFUSED = [
    np.datetime64("1500-01-01"),  # numpy's astype('[ns]') wraps it to 2084
    np.datetime64("2300-01-01T00:00:00", "s"),
    np.datetime64(10**17, "Y"),
    pd.Timestamp("1500-01-01"),
    np.uint64(2**63),
    np.uint64(2**64 - 1),  # read as a double, it would share a key with 2**64 - 2
    np.longdouble("0.1"),  # no double equals it
    np.complex128(1 + 2j),
    np.timedelta64(1, "M"),  # a month has no fixed length
    np.bytes_(b"x"),
    decimal.Decimal("0.1"),  # as in Arrow, where a decimal column is refused
]


def _keys(matches):
    return [tuple(e["k"] for e in m.events) for m in matches]


@pytest.mark.parametrize("value, same", EXACT, ids=lambda v: f"{type(v).__name__}")
def test_numpy_and_pandas_scalars_are_read_as_their_python_value(value, same):
    assert [m.positions for m in KEYED.run([{"type": "A", "k": value}, {"type": "B", "k": same}])] == [(0, 1)]
    s = KEYED.stream()
    s.push({"type": "A", "k": value})
    assert [m.positions for m in s.push({"type": "B", "k": same})] == [(0, 1)]
    if isinstance(same, (bool, int, float)) and not isinstance(value, (np.datetime64, np.timedelta64)):
        other = not same if isinstance(same, bool) else float(same) if isinstance(same, int) else same + 1
        assert KEYED.run([{"type": "A", "k": value}, {"type": "B", "k": other}]) == [], "a key of another value or type"


@pytest.mark.parametrize("value", REFUSED, ids=lambda v: f"{type(v).__name__}-{v}")
def test_values_without_an_exact_engine_value_are_refused_naming_the_field(value):
    events = [{"type": "B", "k": 1}, {"type": "A", "k": value}, {"type": "B", "k": value}]
    with pytest.raises(ceql.CeqlEventError) as err:
        KEYED.run(events)
    assert (err.value.position, err.value.field) == (1, "k")
    s = KEYED.stream()
    s.push(events[0])
    with pytest.raises(ceql.CeqlEventError) as err:
        s.push(events[1])
    assert (err.value.position, err.value.field) == (1, "k") and s.position == 1
    frame = pd.DataFrame({"type": ["B", "A", "B"], "k": pd.Series([1, value, value], dtype=object)})
    with pytest.raises(ceql.CeqlEventError) as err:
        KEYED.run(frame)
    assert (err.value.position, err.value.field) == (1, "k")
    with pytest.raises(ceql.CeqlEventError) as err:
        KEYED.run_arrow(events)
    assert (err.value.position, err.value.field) == (1, "k")


def test_unsigned_keys_near_2_64_never_share_a_partition():
    events = [{"type": "A", "k": np.uint64(2**64 - 1)}, {"type": "B", "k": np.uint64(2**64 - 2)}]
    for run in (KEYED.run, KEYED.run_arrow, lambda e: KEYED.stream().push_many(e)):
        with pytest.raises(ceql.CeqlEventError) as err:
            run(events)
        assert (err.value.position, err.value.field) == (0, "k")
    table = pa.table({"type": ["A", "B"], "k": pa.array([2**64 - 1, 2**64 - 2], pa.uint64())})
    with pytest.raises(ceql.CeqlEventError) as err:
        KEYED.run(table)
    assert (err.value.position, err.value.field) == (0, "k")


def test_a_time_stamp_before_1677_is_refused_not_wrapped():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 5 seconds")
    for ts in (np.datetime64("1500-01-01"), np.datetime64("1500-01-01T00:00:00.000", "ms")):
        events = [{"type": "A", "ts": ts}, {"type": "B", "ts": ts}]
        with pytest.raises(ceql.CeqlEventError) as err:
            q.run(events, time_field="ts")
        assert (err.value.position, err.value.field) == (0, "ts")
    s = q.stream(time_field="ts")
    with pytest.raises(ValueError, match="out of range"):
        s.advance_watermark(np.datetime64("1500-01-01"))
