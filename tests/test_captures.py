"""Captures (docs/language.md#s3-2a) through every interface: Match.captures / variables /
events_of, the Arrow ``variables`` columns, join_events, the CLI's ``captures`` object, and the
rules of docs/language.md#s3-2a on small cases whose expected values are worked out by hand from the text."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest

import ceql


def caps(query, types, **kw):
    """Sorted captures of every match (as sorted item tuples) of `query` over `types`."""
    ms = ceql.compile(query).run([{"type": t} for t in types.split()], captures=True, **kw)
    return sorted(tuple(sorted(m.captures.items())) for m in ms)


def test_v43_one_complex_event_without_captures_two_valuations_with_them():
    q = ceql.compile("SELECT * FROM S WHERE (A AS x) OR (A AS y)")
    assert [m.positions for m in q.run([{"type": "A"}])] == [(0,)]
    assert caps("SELECT * FROM S WHERE (A AS x) OR (A AS y)", "A") == [
        (("A", (0,)), ("x", (0,))),
        (("A", (0,)), ("y", (0,))),
    ]


def test_an_event_under_several_variables_appears_under_each():
    assert caps("SELECT * FROM S WHERE ((A AS x) AS y) ; B", "A B") == [
        (("A", (0,)), ("B", (1,)), ("x", (0,)), ("y", (0,)))
    ]


def test_type_names_are_variables_and_qualified_names_only_where_written():
    assert caps("SELECT * FROM S WHERE A ; B", "A B") == [(("A", (0,)), ("B", (1,)))]
    q = ceql.compile("SELECT * FROM S1, S2 WHERE S1>A ; B")
    ms = q.run([{"stream": "S1", "type": "A"}, {"stream": "S2", "type": "B"}], captures=True)
    assert [m.captures for m in ms] == [{"A": (0,), "S1>A": (0,), "B": (1,)}]


def test_projection_restricts_and_merges_equal_valuations():
    assert caps("SELECT A FROM S WHERE (A AS x) OR (A AS y)", "A") == [(("A", (0,)),)]
    assert caps("SELECT b FROM S WHERE A ; (B AS b)+ ; C", "A B B C") == [
        (("b", (1,)),), (("b", (1, 2)),), (("b", (2,)),)
    ]
    # SELECT NONE: the interval, no positions, one output per interval.
    ms = ceql.compile("SELECT NONE FROM S WHERE (A AS x) OR (A AS y)").run([{"type": "A"}], captures=True)
    assert [(m.start, m.end, m.captures) for m in ms] == [(0, 0, {})]


def test_a_variable_that_captures_nothing_is_absent():
    assert caps("SELECT * FROM S WHERE (A AS x) OR (B AS y)", "B") == [(("B", (0,)), ("y", (0,)))]


def test_match_api_without_captures_is_unchanged_and_says_how_to_get_them():
    m = ceql.compile("SELECT * FROM S WHERE A").run([{"type": "A"}])[0]
    assert repr(m) == "Match(start=0, end=0, positions=(0,))"
    with pytest.raises(ValueError, match="captures=True"):
        m.captures
    with pytest.raises(ValueError, match="captures=True"):
        m.events_of("A")


def test_events_of_and_variables():
    q = ceql.compile("SELECT * FROM S WHERE A AS a ; (B AS b)+ ; C")
    evs = [{"type": "A"}, {"type": "B", "v": 1}, {"type": "B", "v": 2}, {"type": "C"}]
    m = next(m for m in q.run(evs, captures=True) if len(m.positions) == 4)
    assert m.variables == (("A", "a"), ("B", "b"), ("B", "b"), ("C",))
    assert m.events_of("b") == [evs[1], evs[2]]
    assert m.events_of("a") == [evs[0]]
    with pytest.raises(KeyError):
        m.events_of("nope")
    assert "captures={" in repr(m)


def test_captures_option_is_validated():
    with pytest.raises(ValueError, match="captures"):
        ceql.compile("SELECT * FROM S WHERE A").run([], captures="yes")


def test_arrow_outputs_carry_a_variables_column():
    q = ceql.compile("SELECT * FROM S WHERE (A AS x) OR (A AS y) ; B")
    table = pa.table({"type": ["A", "B"]})
    t = q.run_arrow(table, captures=True)
    assert t.column_names == ["match_id", "start", "end", "positions", "variables"]
    rows = sorted((r["positions"], r["variables"]) for r in t.to_pylist())
    assert rows == [([0], [["A", "x"]]), ([0, 1], [["A", "y"], ["B"]])]
    batches = list(q.run_arrow_batches(table, captures=True, slice_rows=1))
    assert pa.Table.from_batches(batches).column("variables").to_pylist() == t.column("variables").to_pylist()
    joined = ceql.join_events(t, table).to_pylist()
    assert [(r["position"], r["variables"], r["type"]) for r in joined] == [
        (0, ["A", "x"], "A"), (0, ["A", "y"], "A"), (1, ["B"], "B")
    ]
    # Without captures, the columns are as before.
    assert q.run_arrow(table).column_names == ["match_id", "start", "end", "positions"]
    # Events Arrow cannot type go row by row; the table has the same columns.
    mixed = [{"type": "A", "v": 1}, {"type": "B", "v": "x"}]
    assert q.run_arrow(mixed, captures=True).column("variables").to_pylist() == t.column("variables").to_pylist()


def test_a_stream_snapshot_keeps_the_captures_option():
    q = ceql.compile("SELECT * FROM S WHERE (A AS x) OR (A AS y) ; B")
    s = q.stream(captures=True)
    s.push({"type": "A"})
    s2 = ceql.Stream.restore(q, s.snapshot())
    got = sorted(tuple(sorted(m.captures.items())) for m in s2.push({"type": "B"}))
    assert got == [(("A", (0,)), ("B", (1,)), ("y", (0,)))]


def test_cli_writes_a_captures_object(tmp_path):
    query = tmp_path / "q.ceql"
    query.write_text("SELECT * FROM S WHERE (A AS x) OR (A AS y) WITHIN 5 EVENTS")
    events = tmp_path / "e.csv"
    events.write_text("type\nA\n")
    out = tmp_path / "m.jsonl"
    proc = subprocess.run([sys.executable, "-m", "ceql.cli", "run", "--query", str(query), "--input", str(events),
                           "--output", str(out), "--captures", "--no-events"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((line["captures"] for line in lines), key=str) == [{"A": [0], "x": [0]}, {"A": [0], "y": [0]}]
    assert all(line["positions"] == [0] for line in lines)
