"""Measures (docs/language.md#s3-5a) on hand-worked examples: values, outputs told apart by
their measures, column types of run_arrow (declared, from the Arrow input, row by row), names
(E0210), the CLI's JSON lines, join_events, and what is refused (never a silent loss)."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pytest

import ceql

EVENTS = [{"type": "A", "v": 1}, {"type": "B", "v": 2}, {"type": "B", "v": 3}, {"type": "C", "v": 4}]
RUN = "SELECT a, count(b) AS n FROM S WHERE A AS a ; (B AS b)+ ; C"


def test_the_specification_example_two_outputs_with_equal_positions():
    """docs/language.md#s3-5a: three valuations project to [0,3]{0}; two distinct counts make two outputs."""
    ms = ceql.compile(RUN).run(EVENTS)
    assert sorted((m.start, m.end, m.positions, m.measures["n"]) for m in ms) == [(0, 3, (0,), 1), (0, 3, (0,), 2)]
    assert all(list(m.measures) == ["n"] for m in ms)
    # Without the measure, one complex event.
    assert len(ceql.compile("SELECT a FROM S WHERE A AS a ; (B AS b)+ ; C").run(EVENTS)) == 1


def test_every_aggregate_and_nulls():
    q = ceql.compile("SELECT count(b) AS n, sum(b.v) AS s, avg(b.v) AS av, min(b.v) AS lo, max(b.v) AS hi, "
                     "first(b.v) AS f, last(b.v) AS l, sum(b.zz) AS nothing FROM S WHERE A ; (B AS b)+ ; C")
    (m,) = [m for m in q.run(EVENTS) if m.measures["n"] == 2]
    assert m.measures == {"n": 2, "s": 5, "av": 2.5, "lo": 2, "hi": 3, "f": 2, "l": 3, "nothing": None}
    assert m.positions == ()  # measures only: as SELECT NONE
    assert "measures={" in repr(m)
    assert q.measure_names == ["n", "s", "av", "lo", "hi", "f", "l", "nothing"]


@pytest.mark.parametrize("name", ["start", "END", "Positions", "variables", "match_id", "index", "position"])
def test_a_measure_named_like_an_output_column_is_E0210(name):
    with pytest.raises(ceql.CeqlNameError) as e:
        ceql.compile(f"SELECT a, count(a) AS {name} FROM S WHERE A AS a")
    assert e.value.code == "E0210" and "^" in str(e.value)


def test_two_measures_with_one_name_are_E0210():
    with pytest.raises(ceql.CeqlNameError) as e:
        ceql.compile("SELECT count(a) AS n, sum(a.v) AS N FROM S WHERE A AS a")
    assert e.value.code == "E0210" and e.value.column == 35


def test_max_and_last_right_after_select_are_measures():
    q = ceql.compile("SELECT max(b.v) AS hi, b FROM S WHERE (B AS b)+ WITHIN 1 EVENTS")
    assert q.describe()["strategy"] == "ALL"
    assert sorted(m.measures["hi"] for m in q.run(EVENTS)) == [2, 3, 3]


SCHEMA = "CREATE STREAM S { EVENT A { v:int }, EVENT B { v:int, w:double, s:string }, EVENT C { v:double } }"


def test_arrow_types_from_the_declarations():
    q = ceql.compile("SELECT count(b) AS n, sum(b.v) AS s, avg(b.v) AS av, first(b.s) AS f, "
                     "max(x.v) AS mixed FROM S WHERE (B AS b)+ ; (C AS x)", SCHEMA)
    events = [{"type": "B", "v": 2, "w": 1.5, "s": "u"}, {"type": "C", "v": 0.5}]
    t = q.run_arrow(events)
    assert [t.schema.field(c).type for c in ["n", "s", "av", "f", "mixed"]] == [
        pa.int64(), pa.int64(), pa.float64(), pa.large_string(), pa.float64()]
    assert t.to_pylist()[0] | {"positions": None} == {
        "match_id": 0, "start": 0, "end": 1, "positions": None, "n": 1, "s": 2, "av": 2.0, "f": "u", "mixed": 0.5}
    # Mixed int/double declarations: the integers of an int type become doubles in the column.
    q = ceql.compile("SELECT last(x.v) AS l FROM S WHERE (A OR C) AS x", SCHEMA)
    t = q.run_arrow([{"type": "A", "v": 3}, {"type": "C", "v": 0.5}])
    assert t.schema.field("l").type == pa.float64() and t.column("l").to_pylist() == [3.0, 0.5]


def test_arrow_types_from_the_input_columns():
    q = ceql.compile("SELECT sum(b.v) AS s, first(b.s) AS f, max(b.t) AS t, last(b.missing) AS m FROM S WHERE B AS b")
    table = pa.table({"type": ["B", "B"], "v": pa.array([1, 2], pa.int32()), "s": ["x", "y"],
                      "t": pa.array([10**9, 2 * 10**9], pa.timestamp("ns"))})
    out = q.run_arrow(table)
    assert [out.schema.field(c).type for c in "sftm"] == [pa.int64(), pa.large_string(), pa.int64(), pa.null()]
    assert out.column("t").to_pylist() == [10**9, 2 * 10**9]
    assert [m.measures["t"] for m in q.run(table)] == [10**9, 2 * 10**9]
    reader = q.run_arrow_batches(table, slice_rows=1)
    assert reader.schema == out.schema and reader.read_all().to_pylist() == out.to_pylist()
    floats = q.run_arrow(table.set_column(1, "v", pa.array([1.5, 2.0], pa.float32())))
    assert floats.schema.field("s").type == pa.float64()


def test_input_arrow_cannot_type_is_typed_from_the_values_and_refuses_two_types():
    q = ceql.compile("SELECT first(b.v) AS f FROM S WHERE B AS b")
    ok = q.run_arrow([{"type": "B", "v": 1}, {"type": "B", "v": "x"}, {"type": "C", "v": 2}][:1] + [{"type": "C", "v": "y"}])
    assert ok.schema.field("f").type == pa.int64() and ok.column("f").to_pylist() == [1]
    with pytest.raises(ceql.CeqlEventError) as e:
        q.run_arrow([{"type": "B", "v": 1}, {"type": "B", "v": "x"}])
    assert e.value.field == "f"


def test_integers_and_doubles_read_row_by_row_make_a_double_column_as_arrow_would():
    """A JSON-like list with prices 1 and 2.5 is read row by row (Arrow would change
    the keys 1 and 1.0 into one): its sum is 1 in one match and 3.5 in another. The
    column is double, as run_arrow gives on an Arrow double column of the same
    values; an integer that a double would change is an error, not a rounding."""
    q = ceql.compile("SELECT sum(b.v) AS s, last(b.v) AS l FROM S WHERE (B AS b)+ ; C")
    events = [{"type": "B", "v": 1}, {"type": "B", "v": 2.5}, {"type": "C"}]
    # By hand: the complex events {B1, C}, {B2, C} and {B1, B2, C}; (sum, last).
    expected = sorted([(1.0, 1.0), (2.5, 2.5), (3.5, 2.5)])
    mixed = q.run_arrow(events)
    assert mixed.schema.field("s").type == pa.float64() and mixed.schema.field("l").type == pa.float64()
    assert sorted(zip(mixed.column("s").to_pylist(), mixed.column("l").to_pylist())) == expected
    typed = q.run_arrow(pa.Table.from_pylist(events))
    assert typed.column("s").to_pylist() == mixed.column("s").to_pylist()
    with pytest.raises(ceql.CeqlEventError) as e:
        q.run_arrow([{"type": "B", "v": 2**60 + 1}, {"type": "B", "v": 2.5}, {"type": "C"}])
    assert e.value.field == "s" and "2^53" in str(e.value)


def test_limit_and_consume_count_outputs_with_their_measures():
    q = ceql.compile(RUN + " LIMIT 1")
    assert len(q.run(EVENTS)) == 1
    q = ceql.compile("SELECT count(b) AS n FROM S WHERE A ; (B AS b)+ CONSUME BY ANY")
    assert [(m.end, m.measures["n"]) for m in q.run(EVENTS)] == [(1, 1)]


def test_join_events_repeats_the_measures_per_event():
    table = pa.Table.from_pylist(EVENTS)
    q = ceql.compile("SELECT *, count(b) AS n FROM S WHERE A ; (B AS b)+ ; C")
    rows = ceql.join_events(q.run_arrow(table), table).to_pylist()
    by_match = {}
    for r in rows:
        by_match.setdefault(r["match_id"], set()).add(r["n"])
    assert sorted(len(ns) for ns in by_match.values()) == [1, 1, 1]
    assert sorted(next(iter(ns)) for ns in by_match.values()) == [1, 1, 2]


def test_the_cli_writes_a_measures_object(tmp_path):
    (tmp_path / "q.ceql").write_text(RUN + " WITHIN 10 EVENTS")
    (tmp_path / "e.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    proc = subprocess.run([sys.executable, "-m", "ceql.cli", "run", "--query", str(tmp_path / "q.ceql"), "--input",
                           str(tmp_path / "e.jsonl"), "--output", "-", "--no-events", "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert sorted(x["measures"]["n"] for x in lines) == [1, 2]


def test_stream_snapshot_keeps_the_values_measures_read():
    q = ceql.compile(RUN)
    s = q.stream()
    s.push_many(EVENTS[:3])
    s2 = ceql.Stream.restore(q, s.snapshot())
    assert sorted(m.measures["n"] for m in s2.push(EVENTS[3])) == [1, 2]


def test_measures_of_matches_that_wait_for_a_deadline():
    """docs/language.md#s3-5a with #s3-3b: a complex event's measures are those of its
    valuation when it ended, reported with it once its deadline passes, also after a
    snapshot taken while it waits."""
    q = ceql.compile("SELECT a, count(b) AS n, sum(b.v) AS total FROM S WHERE A AS a ; (B AS b)+ ; "
                     "ABSENT(C) FOR 2 seconds WITHIN 10 seconds")
    events = [{"type": "A", "v": 0, "ts": 0}, {"type": "B", "v": 5, "ts": 1}, {"type": "B", "v": 7, "ts": 2},
              {"type": "C", "v": 0, "ts": 3}, {"type": "X", "v": 0, "ts": 9}]
    # Ending at 1 (deadline 3): the C at 3 is at the deadline, so it cancels; ending at 2
    # (deadline 4): cancelled too. Without the C, all three wait until the X passes them.
    assert q.run(events, time_field="ts", time_unit="s") == []
    quiet = events[:3] + events[4:]
    got = sorted((m.positions, m.measures["n"], m.measures["total"]) for m in q.run(quiet, time_field="ts", time_unit="s"))
    assert got == [((0,), 1, 5), ((0,), 1, 7), ((0,), 2, 12)]
    s = q.stream(time_field="ts", time_unit="s")
    assert s.push_many(quiet[:3]) == [] and s.waiting == 3
    s2 = ceql.Stream.restore(q, s.snapshot())
    assert sorted((m.positions, m.measures["n"], m.measures["total"]) for m in s2.push(quiet[3])) == got


def test_an_aggregate_of_a_string_names_the_event_that_holds_it():
    """The error is raised at the event that ends the match (position 2), and names
    the measure and the position of the string's event (1), not just the end."""
    q = ceql.compile("SELECT sum(b.v) AS s FROM S WHERE A ; (B AS b)+ ; C")
    events = [{"type": "A"}, {"type": "B", "v": "x"}, {"type": "C"}]
    with pytest.raises(ceql.CeqlEventError, match=r"position 2.*sum needs numbers, found string at position 1 "
                                                  r"\(sum\(b\.v\), a measure of the match ending at this event\)"):
        q.run(events)


def test_a_measure_error_is_raised_when_its_complex_event_ends_even_if_it_is_cancelled():
    """docs/language.md#s3-5a, "With a trailing absence": measures are computed when the
    complex event ends, before its deadline is known; its data error is raised then (as
    some order of evaluation does: the oracle's "may"), although the B at 1 cancels it
    (the oracle's "must" reports nothing and raises nothing)."""
    import oracle

    q = "SELECT *, sum(a.v) AS s FROM S WHERE A AS a ; ABSENT(B OR C) FOR 2 seconds WITHIN 5 seconds"
    events = [{"type": "A", "v": "str", "ts": 0}, {"type": "B", "v": 1, "ts": 1}, {"type": "X", "v": 1, "ts": 5}]
    timed = dict(time_field="ts", time_unit="s")
    assert oracle.evaluate(q, events, **timed).matches() == []
    with pytest.raises(oracle.OracleEventError):
        oracle.evaluate(q, events, data_errors="may", **timed)
    with pytest.raises(ceql.CeqlEventError) as e:
        ceql.compile(q).run(events, **timed)
    assert "sum(a.v)" in str(e.value) and "a measure of the match ending at this event" in str(e.value)
