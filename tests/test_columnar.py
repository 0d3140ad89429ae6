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
    "s": [pa.string(), pa.large_string(), pa.dictionary(pa.int16(), pa.string()), pa.string_view()],
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
