"""Row numbers in the Arrow output are uint32 when the input's length is known
(and below 2^32), uint64 otherwise or when asked: the same matches either way."""

from __future__ import annotations

import random

import pytest

import ceql

pa = pytest.importorskip("pyarrow")

QUERY = "SELECT * FROM S WHERE A ; B+ ; C WITHIN 8 EVENTS"
WIDE = pa.schema([
    pa.field("match_id", pa.uint64(), False),
    pa.field("start", pa.uint64(), False),
    pa.field("end", pa.uint64(), False),
    pa.field("positions", pa.large_list(pa.field("item", pa.uint64(), False)), False),
])


def position_type(table):
    return table.schema.field("start").type


def events(n=400, seed=3):
    rng = random.Random(seed)
    return pa.table({"type": [rng.choice("ABCX") for _ in range(n)], "v": [rng.randrange(5) for _ in range(n)]})


def reader(table):
    return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=64))


@pytest.mark.parametrize("kind", ["table", "record_batch", "pandas", "dicts", "polars"])
def test_inputs_of_known_length_give_uint32_row_numbers(kind):
    table = events()
    data = {
        "table": lambda: table,
        "record_batch": lambda: table.combine_chunks().to_batches()[0],
        "pandas": lambda: pytest.importorskip("pandas") and table.to_pandas(),
        "dicts": lambda: table.to_pylist(),
        "polars": lambda: pytest.importorskip("polars").from_arrow(table),
    }[kind]()
    q = ceql.compile(QUERY)
    out = q.run_arrow(data)
    assert out.num_rows > 0
    assert out.schema.field("positions").type == pa.large_list(pa.field("item", pa.uint32(), False))
    assert position_type(out) == pa.uint32() and out.schema.field("end").type == pa.uint32()
    assert out.schema.field("match_id").type == pa.uint64()
    assert out.cast(WIDE).equals(q.run_arrow(table, position_type="uint64"))


def test_a_reader_gives_uint64_row_numbers_unless_asked_for_uint32():
    table = events()
    q = ceql.compile(QUERY)
    wide = q.run_arrow(reader(table))
    assert wide.schema.equals(WIDE)
    narrow = q.run_arrow(reader(table), position_type="uint32")
    assert position_type(narrow) == pa.uint32()
    assert narrow.cast(WIDE).equals(wide)
    assert wide.equals(q.run_arrow(table, position_type="uint64"))


@pytest.mark.parametrize("source", ["table", "reader"])
def test_every_streamed_batch_has_the_readers_schema(source):
    table = events(2000, seed=11)
    q = ceql.compile(QUERY)
    out = q.run_arrow_batches(table if source == "table" else reader(table), slice_rows=100)
    expected = pa.uint32() if source == "table" else pa.uint64()
    assert out.schema.field("start").type == expected
    batches = list(out)
    assert len(batches) > 1 and all(b.schema.equals(out.schema) for b in batches)
    assert pa.Table.from_batches(batches, out.schema).cast(WIDE).equals(q.run_arrow(table).cast(WIDE))


def test_row_by_row_fallback_follows_the_same_rule():
    # `v` mixes value types, so Arrow cannot type it: evaluated row by row.
    rows = [{"type": "A", "v": 1}, {"type": "B", "v": "x"}, {"type": "C", "v": 2.5}]
    q = ceql.compile("SELECT * FROM S WHERE A ; B ; C")
    narrow, wide = q.run_arrow(rows), q.run_arrow(rows, position_type="uint64")
    assert position_type(narrow) == pa.uint32() and wide.schema.equals(WIDE)
    assert narrow.to_pylist() == wide.to_pylist() == [{"match_id": 0, "start": 0, "end": 2, "positions": [0, 1, 2]}]
    assert position_type(q.run_arrow_batches(rows).read_all()) == pa.uint32()


def test_join_events_reads_uint32_row_numbers():
    table = events()
    q = ceql.compile(QUERY)
    narrow = ceql.join_events(q.run_arrow(table), table)
    wide = ceql.join_events(q.run_arrow(table, position_type="uint64"), table)
    assert narrow.num_rows > 0
    assert narrow.select(["type", "v"]).equals(wide.select(["type", "v"]))
    assert narrow.column("match_id").equals(wide.column("match_id"))


@pytest.mark.parametrize("bad", ["int32", "UINT32", 32, True])
def test_an_unknown_position_type_is_refused(bad):
    q = ceql.compile(QUERY)
    with pytest.raises(ValueError, match="position_type"):
        q.run_arrow(events(), position_type=bad)
    with pytest.raises(ValueError, match="position_type"):
        q.run_arrow_batches(events(), position_type=bad)
