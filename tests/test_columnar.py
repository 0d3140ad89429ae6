"""Column-wise predicate evaluation (Arrow input) must agree with row-wise
evaluation (the same events as dicts): same matches, same errors."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ceql
from conftest import as_triples

pa = pytest.importorskip("pyarrow")

PREDICATES = [
    "v > 1", "v <= 2", "v = 2", "v != 1", "1 < v", "v IN {1, 3}", "v NOT IN {..1}", "v IN RANGE(1, 2)",
    "f > 1.5", "f = 2", "f IN {0.5, 2}", "s = 'ab'", "s != 'b'", "s LIKE 'a'", "s IN {'a', 'b'}",
    "b = TRUE", "b", "NOT b", "v > 1 AND s = 'a'", "v > 1 OR f < 1", "NOT (v = 2 OR s = 'b')",
    "v + 1 > 2", "v * f > 2", "-v < -1", "w > 0", "v > f",
    # Type mismatches found only on data: both paths must raise at the same event.
    "v = 'a'", "s > 1", "b = 1", "s IN {1, 2}",
]

COLUMN_TYPES = {
    "v": [pa.int64(), pa.int32(), pa.int8(), pa.float64(), pa.uint16()],
    "f": [pa.float64(), pa.float32(), pa.int64()],
    "s": [pa.string(), pa.large_string(), pa.dictionary(pa.int16(), pa.string()), pa.string_view(),
          pa.dictionary(pa.uint32(), pa.string_view())],
    "b": [pa.bool_()],
}

event = st.fixed_dictionaries({
    "type": st.sampled_from(["A", "B", "X"]),
    "v": st.one_of(st.none(), st.integers(0, 3)),
    "f": st.one_of(st.none(), st.sampled_from([0.5, 1.0, 2.0, 3.5, float("nan")])),
    "s": st.one_of(st.none(), st.sampled_from(["a", "b", "ab", ""])),
    "b": st.one_of(st.none(), st.booleans()),
})


def as_table(events, types):
    cols = {"type": pa.array([e["type"] for e in events], pa.string())}
    for name, t in types.items():
        values = [e[name] for e in events]
        if pa.types.is_integer(t):
            values = [None if v is None or v != v else int(v) for v in values]
        cols[name] = pa.array(values, type=t) if not pa.types.is_dictionary(t) else pa.array(values, pa.string()).dictionary_encode()
    return pa.table(cols)


def outcome(fn):
    try:
        return ("ok", as_triples(fn()))
    except ceql.CeqlEventError as e:
        return ("error", e.position)


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    pred=st.sampled_from(PREDICATES),
    events=st.lists(event, max_size=12),
    types=st.fixed_dictionaries({k: st.sampled_from(v) for k, v in COLUMN_TYPES.items()}),
    window=st.sampled_from(["", " WITHIN 3 EVENTS"]),
)
def test_arrow_and_dict_inputs_agree(pred, events, types, window):
    q = ceql.compile(f"SELECT * FROM S WHERE A ; B FILTER A[{pred}] AND B[{pred}]{window}")
    table = as_table(events, types)
    dicts = table.to_pylist()  # the same values, as Python objects
    assert outcome(lambda: q.run(table)) == outcome(lambda: q.run(dicts))


KEY_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    names=st.lists(st.one_of(st.none(), st.sampled_from(["A", "B", "X"])), max_size=14),
    key=st.sampled_from(KEY_TYPES),
    values=st.sampled_from([pa.string(), pa.large_string(), pa.string_view()]),
    skip=st.integers(0, 3),
)
def test_dictionary_type_columns_agree_with_plain_strings(names, key, values, skip):
    """Every dictionary key type and value type (polars exports a categorical as
    string-view values), NULL types (an error at the same position) and sliced
    input (offset keys and validity) read like a plain string column."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[v > 0] WITHIN 4 EVENTS")
    dictionary = ["B", "X", "A"]
    keys = pa.array([None if n is None else dictionary.index(n) for n in names], type=key)
    v = pa.array([i % 3 for i in range(len(names))], pa.int64())
    encoded = pa.table({"type": pa.DictionaryArray.from_arrays(keys, pa.array(dictionary, values)), "v": v}).slice(skip)
    plain = pa.table({"type": pa.array(names, pa.string()), "v": v}).slice(skip)
    assert outcome(lambda: q.run(encoded)) == outcome(lambda: q.run(plain))
    assert arrow_outcome(q, encoded) == arrow_outcome(q, plain)


def arrow_outcome(q, table):
    try:
        return ("ok", q.run_arrow(table).to_pylist())
    except ceql.CeqlEventError as e:
        return ("error", e.position, e.field)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    times=st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=12),
    unit=st.sampled_from(["s", "ms", "us", "ns"]),
    late=st.sampled_from(["error", "drop"]),
    skip=st.integers(0, 2),
)
def test_timestamp_columns_agree_with_integer_time(times, unit, late, skip):
    """A timestamp column of any unit, with NULLs and an offset, gives the same
    matches and errors as the same instants as integers."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 2 seconds")
    per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    ticks = [None if t is None else t * per_second // 2 for t in times]  # half-second steps
    ticks = [None if t is None else max(t, max((u for u in ticks[:i] if u is not None), default=0))
             for i, t in enumerate(ticks)]  # ordered by time
    names = pa.array(["A" if i % 2 == 0 else "B" for i in range(len(times))])
    stamped = pa.table({"type": names, "t": pa.array(ticks, pa.timestamp(unit))}).slice(skip)
    numbers = pa.table({"type": names, "t": pa.array(ticks, pa.int64())}).slice(skip)
    assert outcome(lambda: q.run(stamped, time_field="t", late=late)) == outcome(
        lambda: q.run(numbers, time_field="t", time_unit=unit, late=late)
    )


def test_many_and_look_alike_type_names_resolve_like_dicts():
    """Type names that share their length, first and last bytes, and more distinct
    names than the per-batch memo keeps, read the same from plain strings, string
    views and dictionaries as from dicts."""
    named = [f"Reading{i:03d}ofSensor" for i in range(300)] + ["A", "B", "Ab", "AB"]
    q = ceql.compile("SELECT * FROM S WHERE Reading007ofSensor ; (Reading070ofSensor OR AB) WITHIN 40 EVENTS")
    rows = [named[(i * 7919) % len(named)] for i in range(3000)] + ["Reading007ofSensor", "AB"]
    expected = as_triples(q.run([{"type": t} for t in rows]))
    assert expected  # the stream has matches
    plain = pa.array(rows, pa.string())
    for column in (plain, plain.cast(pa.large_string()), plain.cast(pa.string_view()), plain.dictionary_encode()):
        assert as_triples(q.run(pa.table({"type": column}))) == expected
