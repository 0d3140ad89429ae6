"""Findings of a new user's review of the API and the CLI (2026-11-28), one test
each: what the README and the docs promise, checked as a user runs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ceql

QUERY = "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS"


def cli(*args, module="ceql.cli"):
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def query_file(tmp_path):
    q = tmp_path / "q.ceql"
    q.write_text(QUERY)
    return q


def test_python_dash_m_ceql_runs_the_cli(query_file):
    proc = cli("explain", query_file, module="ceql")
    assert proc.returncode == 0, proc.stderr
    assert "Automaton" in proc.stdout


def test_an_empty_json_lines_file_is_a_stream_without_events(tmp_path, query_file):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = cli("run", "--query", query_file, "--input", empty, "--output", tmp_path / "out.jsonl")
    assert proc.returncode == 0, proc.stderr
    assert "events:     0" in proc.stderr + proc.stdout
    assert (tmp_path / "out.jsonl").read_text() == ""


def test_a_missing_type_field_column_is_named_without_advising_the_option_given(tmp_path, query_file):
    events = tmp_path / "e.jsonl"
    events.write_text('{"kind": "A"}\n')
    proc = cli("run", "--query", query_file, "--input", events, "--type-field", "nope")
    assert proc.returncode == 2
    assert "no column `nope` for --type-field (columns: kind)" in proc.stderr
    assert "use --type-field" not in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--output", "a.jsonl", "--output", "-"], "--output given twice"),
    (["--time-unit", "ms"], "--time-unit is the unit of --time-field's values"),
])
def test_options_that_would_be_silently_dropped_are_refused(tmp_path, query_file, args, message):
    events = tmp_path / "e.jsonl"
    events.write_text('{"type": "A"}\n')
    proc = cli("run", "--query", query_file, "--input", events, *args)
    assert proc.returncode == 2 and message in proc.stderr


def test_the_cli_summary_counts_in_the_singular_for_one(tmp_path, query_file):
    events = tmp_path / "e.jsonl"
    events.write_text('{"type": "A"}\n')
    proc = cli("run", "--query", query_file, "--input", events)
    assert "1 live partition," in proc.stderr + proc.stdout


def test_explain_names_a_window_of_one_unit_in_the_singular():
    text = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 1 hours").explain()
    assert "1 hour of time stamps" in text
    assert "2 hours of time stamps" in ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 2 hours").explain()


def test_a_budget_error_carries_the_matches_before_it_like_a_bad_event():
    # README, Memory: CeqlMemoryError carries the matches that ended before it.
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 5000 EVENTS")
    events = [{"type": "A"}, {"type": "B"}] * 3000
    with pytest.raises(ceql.CeqlMemoryError) as info:
        q.run(events, max_state_bytes=100_000)
    position = info.value.position
    # A ; B with a window of 5000 events: every earlier A with every B up to the error.
    expected = sum(k // 2 + 1 for k in range(1, position, 2))
    assert len(info.value.matches) == expected
    with pytest.raises(ceql.CeqlMemoryError) as again:
        q.stream(max_state_bytes=100_000).push_many(iter(events))
    assert again.value.position == position and len(again.value.matches) == expected


def test_budget_messages_say_what_is_over_and_do_not_ask_for_a_window_the_query_has():
    q = ceql.compile(QUERY)
    with pytest.raises(ceql.CeqlMemoryError) as info:
        q.run([{"type": "A"}, {"type": "B"}], max_det_states=1)
    message = info.value.message
    assert "1 different combination of" in message and "must keep 2 det-states, more than it holds" in message
    assert "max_det_states = 1," in message
    assert "bound the runs with WITHIN" not in message and "shorten the window" in message
    with pytest.raises(ceql.CeqlMemoryError) as info:
        q.run([{"type": "A"}, {"type": "B"}], max_state_bytes=10)
    assert "without WITHIN" not in info.value.message


def test_a_query_pickles_as_its_text_and_a_stream_says_how_to_keep_its_state():
    import pickle

    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[v > 1]", "CREATE STREAM S { EVENT A { v: int }, EVENT B { v: int } }",
                     compat_ignore_strategy=True)
    again = pickle.loads(pickle.dumps(q))
    assert (again.text, again.schema) == (q.text, q.schema)
    events = [{"type": "A", "v": 3}, {"type": "B"}]
    assert [m.positions for m in again.run(events)] == [(0, 1)]
    with pytest.raises(TypeError, match="snapshot"):
        pickle.dumps(q.stream())
    with pytest.raises(TypeError, match=r"\.stream\("):
        ceql.Stream()


def test_reprs_read_as_python():
    q = ceql.compile("-- opening comment\nSELECT *, last(b.s) AS s FROM S WHERE A AS a ; B AS b /* x */")
    assert repr(q) == "ceql.compile('SELECT *, last(b.s) AS s FROM S WHERE A AS a ; B AS b')"
    (m,) = q.run([{"type": "A"}, {"type": "B", "s": "it's"}], captures=True)
    assert repr(m) == ("Match(start=0, end=1, positions=(0, 1), captures={'A': (0,), 'a': (0,), 'B': (1,), "
                       "'b': (1,)}, measures={'s': \"it's\"})")


def test_empty_inputs_of_every_format_are_streams_without_events(tmp_path, query_file):
    for name in ("empty.csv", "empty.tsv", "empty.jsonl"):
        path = tmp_path / name
        path.write_text("")
        for extra in ([], ["--time-field", "t"]):
            proc = cli("run", "--query", query_file, "--input", path, *extra)
            assert proc.returncode == 0, (name, extra, proc.stderr)
            assert "events:     0" in proc.stderr + proc.stdout


def test_query_repr_keeps_literals_as_written():
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[s = 'a  b']   -- two spaces")
    assert repr(q) == "ceql.compile(\"SELECT * FROM S WHERE A FILTER A[s = 'a  b']\")"
    assert len(eval(repr(q), {"ceql": ceql}).run([{"type": "A", "s": "a  b"}])) == 1


def test_every_memory_error_has_matches_and_a_held_event_over_budget_is_kept():
    assert ceql.CeqlMemoryError("x", position=None, message="x").matches == []
    # max_delay: a flush that does not fit keeps the held events; nothing is lost.
    q = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k]")
    s = q.stream(max_state_bytes=1 << 20, time_field="t", time_unit="s", max_delay=10**9)
    s.push_many([{"type": "A", "k": i, "t": i} for i in range(3800)])
    held = s.stats()["reorder_held"]
    for _ in range(3):
        with pytest.raises(ceql.CeqlMemoryError):
            s.flush()
        stats = s.stats()
        assert stats["reorder_held"] + stats["reorder_released"] == 3800
    assert s.stats()["reorder_held"] == held - s.position
