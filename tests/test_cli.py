"""The ``ceql run`` command line: the README's main job on the bundled stock
sample, other input formats, strategies, and error exits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ceql

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "stock" / "stock_sample.csv"
MAIN = ROOT / "examples" / "stock" / "main.ceql"


def ceql_run(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "ceql.cli", "run", *map(str, args)], capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_main_job_writes_every_match(tmp_path):
    out = tmp_path / "matches.jsonl"
    proc = ceql_run("--query", MAIN, "--input", SAMPLE, "--time-field", "stock_time", "--time-unit", "ms", "--output", out)
    assert "events:     20,000" in proc.stdout and "throughput:" in proc.stdout
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    # Ground truth: the same query through the Python API.
    pa_csv = pytest.importorskip("pyarrow.csv")
    table = pa_csv.read_csv(SAMPLE)
    table = table.rename_columns(["type" if c == "event_type" else c for c in table.column_names])
    expected = ceql.compile(MAIN.read_text()).run(table, time_field="stock_time", time_unit="ms")
    assert len(lines) == len(expected) == 368
    assert [(r["start"], r["end"], tuple(r["positions"])) for r in lines] == [(m.start, m.end, m.positions) for m in expected]
    first = lines[0]["events"]
    assert [e["name"] for e in first] == ["MSFT", "ORCL", "CSCO", "AMAT"]
    assert len({e["volume"] for e in first}) == 1


def test_jsonl_input_strategy_query_and_stdout(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join(json.dumps({"type": t}) for t in "AABBC"))
    query = tmp_path / "q.ceql"
    query.write_text("SELECT LAST * FROM S WHERE A ; B+ ; C WITHIN 10 EVENTS")
    proc = ceql_run("--query", query, "--input", events, "--output", "-", "--no-events")
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert rows == [{"start": 1, "end": 4, "positions": [1, 2, 3, 4]}]
    assert "matches:    1" in proc.stderr


def test_errors_exit_with_a_status_and_a_caret(tmp_path):
    query = tmp_path / "bad.ceql"
    query.write_text("SELECT * FROM S WHERE A ; ; B")
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps({"type": "A"}))
    proc = ceql_run("--query", query, "--input", events, check=False)
    assert proc.returncode == 2 and "error[E0100]" in proc.stderr and "^" in proc.stderr
    query.write_text("SELECT * FROM S WHERE A ; B FILTER A[v > 1]")
    events.write_text(json.dumps({"type": "A", "v": "x"}))
    proc = ceql_run("--query", query, "--input", events, check=False)
    assert proc.returncode == 3 and "position 0" in proc.stderr


def test_a_bad_event_exits_3_after_writing_the_matches_before_it(tmp_path):
    query = tmp_path / "q.ceql"
    query.write_text("SELECT * FROM S WHERE A ; B ; C WITHIN 10 seconds")
    events = tmp_path / "e.csv"
    events.write_text("type,ts\nA,1\nB,2\nC,3\nA,1\n")
    for batch in ("1", "2", "65536"):
        proc = ceql_run("--query", query, "--input", events, "--time-field", "ts", "--time-unit", "s",
                        "--batch-size", batch, "--output", "-", check=False)
        assert proc.returncode == 3 and "time went backwards" in proc.stderr, batch
        assert [json.loads(line)["positions"] for line in proc.stdout.splitlines()] == [[0, 1, 2]], batch


def test_files_that_cannot_be_read_or_written_are_one_line_errors(tmp_path):
    query = tmp_path / "q.ceql"
    query.write_text("SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    good = tmp_path / "e.csv"
    good.write_text("type\nA\nB\n")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("type,v\nA,1,2\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    not_utf8 = tmp_path / "schema.ceql"
    not_utf8.write_bytes(b"\xff\xfe")
    cases = [
        ("--query", tmp_path / "missing.ceql", "--input", good),
        ("--query", query, "--input", tmp_path / "missing.csv"),
        ("--query", query, "--input", ragged),
        ("--query", query, "--input", empty),
        ("--query", query, "--input", folder),
        ("--query", query, "--input", good, "--schema", not_utf8),
        ("--query", query, "--input", good, "--output", tmp_path / "no" / "dir.jsonl"),
    ]
    for args in cases:
        proc = ceql_run(*args, check=False)
        assert proc.returncode == 1, (args, proc.stderr)
        assert proc.stderr.startswith("ceql: ") and "Traceback" not in proc.stderr, proc.stderr
    proc = ceql_run("--query", query, "--input", good, "--batch-size", "0", check=False)
    assert proc.returncode == 2 and "positive integer" in proc.stderr and "Traceback" not in proc.stderr
