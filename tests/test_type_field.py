"""``type_field=`` in the Python API (docs/api.md, "Input events: the `type` field"):
the event type read from another field gives what renaming that field to ``type``
gives, on every input path, in streams and across snapshots; a bad type field is an
error naming it."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import ceql

QUERIES = [
    "SELECT * FROM S WHERE A ; B+ ; C FILTER A[x > 2] WITHIN 6 EVENTS",
    "SELECT * FROM S WHERE A AS a ; B AS b FILTER b[x > a.x] PARTITION BY [g] WITHIN 5 seconds",
    "SELECT a, AVG(b.x) AS m FROM S WHERE A AS a ; B+ AS b ; C WITHIN 4 seconds",
    "SELECT * FROM S WHERE A ; ABSENT(B) ; C WITHIN 8 EVENTS",
    "SELECT * FROM S WHERE A ; C CONSUME BY ANY",
]


def _events(seed: int, n: int = 60) -> list:
    """Events of types A, B, C with an int ``x``, a key ``g`` and a time ``t`` in
    seconds; the type under ``type``."""
    rng = random.Random(seed)
    return [{"type": rng.choice("ABC"), "x": rng.randint(0, 5), "g": rng.randint(0, 1), "t": i // 2}
            for i in range(n)]


def _renamed(events: list, name: str) -> list:
    return [{(name if k == "type" else k): v for k, v in e.items()} for e in events]


def _key(matches: list) -> list:
    return sorted((m.start, m.end, m.positions, tuple(sorted(m.measures.items()))) for m in matches)


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_input_path_reads_the_type_field_as_the_type(text, seed):
    """Dicts, a pyarrow Table, a pandas frame, polars, run_arrow, a stream pushed one
    event at a time: each equals the run of the same events with the field named
    ``type``."""
    import pandas as pd
    import polars as pl

    q = ceql.compile(text)
    plain = _events(seed)
    expected = _key(q.run(plain, time_field="t", time_unit="s", close_deadlines=True))
    kind = _renamed(plain, "kind")
    opts = dict(time_field="t", time_unit="s", type_field="kind", close_deadlines=True)
    assert _key(q.run(kind, **opts)) == expected
    assert _key(q.run(iter(kind), **opts)) == expected
    assert _key(q.run(pa.Table.from_pylist(kind), **opts)) == expected
    assert _key(q.run(pd.DataFrame(kind), **opts)) == expected
    assert _key(q.run(pl.DataFrame(kind), **opts)) == expected
    table = q.run_arrow(pa.Table.from_pylist(kind), **opts)
    want = q.run_arrow(pa.Table.from_pylist(plain), time_field="t", time_unit="s", close_deadlines=True)
    assert table.column("positions").to_pylist() == want.column("positions").to_pylist()
    reader = q.run_arrow_batches(pa.Table.from_pylist(kind), slice_rows=7, **opts)
    assert sum((b.column("positions").to_pylist() for b in reader), []) == want.column("positions").to_pylist()
    s = q.stream(time_field="t", time_unit="s", type_field="kind")
    got = []
    for e in kind:
        got += s.push(e)
    assert _key(got + s.close_deadlines()) == expected


def test_a_hand_counted_run_and_the_events_as_given():
    """``A ; B`` over A B C B under ``kind``: (0, 1) and (0, 3); ``Match.events``
    gives the events as they were, with their own field names."""
    events = [{"kind": "A", "x": 1}, {"kind": "B"}, {"kind": "C"}, {"kind": "B"}]
    found = ceql.compile("SELECT * FROM S WHERE A ; B").run(events, type_field="kind")
    assert [m.positions for m in found] == [(0, 1), (0, 3)]
    assert found[0].events == [{"kind": "A", "x": 1}, {"kind": "B"}]
    table = ceql.compile("SELECT * FROM S WHERE A ; B").run(pa.Table.from_pylist(events), type_field="kind")
    assert [m.positions for m in table] == [(0, 1), (0, 3)]


def test_a_field_named_type_is_then_an_ordinary_field():
    """With ``type_field="kind"``, a ``type`` holding numbers is not read as the type:
    the answer is that of the events without it (the records still go to Arrow)."""
    events = [{"kind": "A", "type": 7}, {"kind": "B", "type": 8}]
    q = ceql.compile("SELECT * FROM S WHERE A ; B")
    assert [m.positions for m in q.run(events, type_field="kind")] == [(0, 1)]
    assert q.run_arrow(events, type_field="kind").column("positions").to_pylist() == [[0, 1]]


def test_a_filter_can_read_the_type_field():
    """The type field stays an attribute: ``A[kind = 'A']`` holds for every A."""
    events = [{"kind": "A"}, {"kind": "B"}]
    assert [m.positions for m in ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[kind = 'A']").run(
        events, type_field="kind")] == [(0, 1)]
    assert ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[kind = 'B']").run(events, type_field="kind") == []


def test_a_stream_keeps_its_type_field_in_its_snapshots():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 3 EVENTS")
    s = q.stream(type_field="kind")
    s.push({"kind": "A"})
    restored = ceql.Stream.restore(q, s.snapshot())
    assert [m.positions for m in restored.push({"kind": "B"})] == [(0, 1)]
    with pytest.raises(ceql.CeqlEventError, match="no `kind`"):
        restored.push({"type": "B"})


def test_max_delay_reads_the_type_field():
    """The reorder buffer's events (dicts and Arrow rows) are typed by the field too."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B")
    events = [{"kind": "B", "t": 2}, {"kind": "A", "t": 1}]
    assert [m.positions for m in q.run(events, type_field="kind", time_field="t", max_delay=5)] == [(0, 1)]
    s = q.stream(type_field="kind", time_field="t", max_delay=5)
    s.push_batch(pa.Table.from_pylist(events))
    assert [m.positions for m in s.flush()] == [(0, 1)]


@pytest.mark.parametrize("wrap", [list, pa.Table.from_pylist])
def test_errors_name_the_type_field(wrap):
    q = ceql.compile("SELECT * FROM S WHERE A")
    with pytest.raises(ceql.CeqlEventError) as e:
        q.run(wrap([{"type": "A"}]), type_field="kind")
    assert e.value.field == "kind" and "no `kind`" in str(e.value)
    with pytest.raises(ceql.CeqlEventError) as e:
        q.run(wrap([{"kind": 1}]), type_field="kind")
    assert e.value.field == "kind" and "string" in str(e.value)


def test_a_null_type_in_the_type_column_names_it():
    with pytest.raises(ceql.CeqlEventError) as e:
        ceql.compile("SELECT * FROM S WHERE A").run(pa.table({"kind": pa.array(["A", None])}), type_field="kind")
    assert (e.value.field, e.value.position) == ("kind", 1)


@pytest.mark.parametrize("bad", ["", "stream", 3, None])
def test_a_type_field_that_is_not_a_field_name_is_refused(bad):
    q = ceql.compile("SELECT * FROM S WHERE A")
    with pytest.raises(ValueError, match="type_field"):
        q.run([{"type": "A"}], type_field=bad)
    with pytest.raises(ValueError, match="type_field"):
        q.stream(type_field=bad)
