"""``Query.run_arrow_batches``: the streamed form of ``run_arrow`` must give the same
matches (same rows, same match ids) whatever the slice size and the input's
chunking, raise input errors while reading, and accept the same inputs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ceql

pa = pytest.importorskip("pyarrow")

QUERY = "SELECT * FROM S WHERE A AS a ; B+ ; A AS c FILTER a[v > 0] WITHIN 6 EVENTS"

event = st.fixed_dictionaries({"type": st.sampled_from(["A", "B", "X"]), "v": st.integers(0, 2)})


def chunked(events, cuts):
    """The events as a Table of several record batches, cut at `cuts`."""
    schema = pa.schema([("type", pa.string()), ("v", pa.int64())])
    bounds = sorted({c % (len(events) + 1) for c in cuts} | {0, len(events)})
    batches = [pa.RecordBatch.from_pylist(events[a:b], schema=schema) for a, b in zip(bounds, bounds[1:]) if b > a]
    return pa.Table.from_batches(batches, schema=schema)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(event, min_size=1, max_size=60),
    cuts=st.lists(st.integers(0, 60), max_size=4),
    slice_rows=st.integers(1, 12),
)
def test_batches_concatenate_to_run_arrow(events, cuts, slice_rows):
    q = ceql.compile(QUERY)
    table = chunked(events, cuts)
    whole = q.run_arrow(table)
    reader = q.run_arrow_batches(table, slice_rows=slice_rows)
    assert reader.schema == whole.schema
    batches = list(reader)
    assert all(b.num_rows > 0 for b in batches), "slices without matches yield no batch"
    streamed = pa.Table.from_batches(batches, schema=whole.schema)
    assert streamed.to_pylist() == whole.to_pylist()
    assert streamed.column("match_id").to_pylist() == list(range(whole.num_rows))


def test_a_large_output_arrives_in_many_batches_with_the_same_rows():
    q = ceql.compile("SELECT * FROM S WHERE A ; B ; C WITHIN 50 EVENTS")
    events = [{"type": "ABC"[i % 3]} for i in range(3000)]
    table = pa.Table.from_pylist(events)
    batches = list(q.run_arrow_batches(table, slice_rows=100))
    assert len(batches) == 30
    assert pa.Table.from_batches(batches).equals(q.run_arrow(table))


def test_errors_are_raised_while_reading_after_earlier_matches():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 10 seconds")
    good = [{"type": "AB"[i % 2], "t": i} for i in range(8)]
    # The ninth event goes back in time: an error, raised when its slice is read.
    table = pa.Table.from_pylist(good + [{"type": "A", "t": 0}])
    reader = q.run_arrow_batches(table, "t", "s", slice_rows=4)
    delivered = []
    with pytest.raises(ceql.CeqlEventError) as err:
        for batch in reader:
            delivered.append(batch)
    assert err.value.field == "t"
    expected = q.run_arrow(pa.Table.from_pylist(good), "t", "s")
    assert expected.num_rows > 0
    assert pa.Table.from_batches(delivered).equals(expected)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_slice_rows_must_be_a_positive_integer(bad):
    q = ceql.compile(QUERY)
    with pytest.raises(ValueError, match="slice_rows"):
        q.run_arrow_batches(pa.Table.from_pylist([{"type": "A", "v": 1}]), slice_rows=bad)


def test_slice_rows_may_be_a_numpy_integer():
    np = pytest.importorskip("numpy")
    q = ceql.compile(QUERY)
    events = pa.Table.from_pylist([{"type": "A", "v": 1}, {"type": "B", "v": 0}, {"type": "A", "v": 0}])
    assert pa.Table.from_batches(list(q.run_arrow_batches(events, slice_rows=np.int64(2)))).equals(q.run_arrow(events))


def test_empty_input_gives_the_schema_and_no_batches():
    q = ceql.compile(QUERY)
    empty = pa.table({"type": pa.array([], pa.string()), "v": pa.array([], pa.int64())})
    reader = q.run_arrow_batches(empty)
    assert reader.schema == q.run_arrow(empty).schema
    assert list(reader) == []


def test_every_input_form_is_accepted():
    q = ceql.compile(QUERY)
    events = [{"type": "A", "v": 1}, {"type": "B", "v": 0}, {"type": "A", "v": 0}] * 3
    expected = q.run_arrow(pa.Table.from_pylist(events)).to_pylist()
    batch = pa.RecordBatch.from_pylist(events)
    forms = [events, batch, pa.RecordBatchReader.from_batches(batch.schema, [batch])]
    pd = pytest.importorskip("pandas")
    forms.append(pd.DataFrame(events))
    for form in forms:
        got = pa.Table.from_batches(list(q.run_arrow_batches(form, slice_rows=2))).to_pylist()
        assert got == expected, type(form).__name__


def test_join_events_takes_a_streamed_batch():
    q = ceql.compile(QUERY)
    events = pa.Table.from_pylist([{"type": "A", "v": 1}, {"type": "B", "v": 0}, {"type": "A", "v": 0}] * 2)
    (batch,) = list(q.run_arrow_batches(events))
    assert ceql.join_events(batch, events).equals(ceql.join_events(q.run_arrow(events), events))
