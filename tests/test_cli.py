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
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    not_utf8 = tmp_path / "schema.ceql"
    not_utf8.write_bytes(b"\xff\xfe")
    cases = [
        ("--query", tmp_path / "missing.ceql", "--input", good),
        ("--query", query, "--input", tmp_path / "missing.csv"),
        ("--query", query, "--input", ragged),
        ("--query", query, "--input", folder),
        ("--query", query, "--input", good, "--schema", not_utf8),
        ("--query", query, "--input", good, "--output", tmp_path / "no" / "dir.jsonl"),
    ]
    # (An empty file is no longer among them: it is a stream of 0 events, exit 0, in
    # every format: tests/test_user_review.py.)
    for args in cases:
        proc = ceql_run(*args, check=False)
        assert proc.returncode == 1, (args, proc.stderr)
        assert proc.stderr.startswith("ceql: ") and "Traceback" not in proc.stderr, proc.stderr
    proc = ceql_run("--query", query, "--input", good, "--batch-size", "0", check=False)
    assert proc.returncode == 2 and "positive integer" in proc.stderr and "Traceback" not in proc.stderr


# -- hardening (issue 15, items 8, 14, 15; issue 20, item 8) ------------------------------

def _one_line_error(proc, status):
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    import re

    # Progress-bar frames (tqdm, on inputs of 100,000 rows or more) aside.
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not re.match(r"\s*\d+%\|", line)]
    assert "Traceback" not in proc.stderr and len(lines) == 1 and lines[0].startswith("ceql: "), proc.stderr
    return lines[0]


def _write(path, text):
    path.write_text(text)
    return path


def _rss_kib(pid):
    """Resident and peak resident memory of a process, in KiB (Linux)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def test_matches_are_written_as_they_are_found_in_bounded_memory(tmp_path):
    """`A ; B FILTER A[x > 1]` over 400k rows has about 10^10 complex events: the
    command must write them as they come, holding one push's output (it was killed
    at 22 GB, building the whole output of a 65,536-row batch first). The child is
    stopped after 200,000 lines; its peak memory must stay far below 1 GiB."""
    import random
    import threading

    rng = random.Random(8)
    rows = "".join(f"{rng.choice('AB')},{rng.randint(0, 3)}\n" for _ in range(400_000))
    events = _write(tmp_path / "e.csv", "type,x\n" + rows)
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B FILTER A[x > 1]")
    proc = subprocess.Popen([sys.executable, "-m", "ceql.cli", "run", "--query", str(query), "--input", str(events),
                             "--output", "-", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = []

    def read():
        for line in proc.stdout:
            lines.append(line)
            if len(lines) == 200_000:
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    limit_kib = 1 << 20
    peak = 0
    try:
        while reader.is_alive() and proc.poll() is None:
            rss, hwm = _rss_kib(proc.pid)
            peak = max(peak, hwm)
            if rss > limit_kib:
                break
            reader.join(0.01)
        if proc.poll() is None:
            peak = max(peak, _rss_kib(proc.pid)[1])
    finally:
        proc.kill()
        proc.wait()
    assert len(lines) == 200_000, f"{len(lines)} lines, peak {peak // 1024} MiB"
    assert peak < limit_kib, f"peak resident memory {peak // 1024} MiB"
    first = json.loads(lines[0])
    assert first["events"][0]["type"] == "A" and first["events"][0]["x"] > 1 and first["events"][1]["type"] == "B"


def test_output_that_cannot_be_written_is_a_one_line_error(tmp_path):
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    events = _write(tmp_path / "e.csv", "type\n" + "A\nB\n" * 5000)
    for target in ("/dev/full", "/proc/version"):
        line = _one_line_error(ceql_run("--query", query, "--input", events, "--output", target, check=False), 1)
        assert f"cannot write {target}" in line


def test_a_closed_output_pipe_is_a_one_line_error(tmp_path):
    """`ceql run ... --output - | head -1`: BrokenPipeError was a traceback."""
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    events = _write(tmp_path / "e.csv", "type\n" + "A\nB\n" * 100_000)
    for output in (["--output", "-"], []):  # the matches, or the summary, into the pipe
        proc = subprocess.Popen([sys.executable, "-m", "ceql.cli", "run", "--query", str(query), "--input", str(events),
                                 *output], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if output:
            proc.stdout.readline()
        proc.stdout.close()  # the reader stops, as `head` does
        stderr = proc.stderr.read()
        proc.wait()
        done = subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr)
        assert "the reader closed the pipe" in _one_line_error(done, 1)


def test_a_json_field_over_1_mb_is_read(tmp_path):
    """pyarrow's JSON reader refused a line longer than its 1 MB block
    ("straddling object straddles two block boundaries")."""
    events = tmp_path / "e.jsonl"
    events.write_text(json.dumps({"type": "A", "note": "x" * 3_000_000}) + "\n" + json.dumps({"type": "B", "note": "y"}))
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    proc = ceql_run("--query", query, "--input", events, "--output", "-")
    (line,) = proc.stdout.splitlines()
    assert [len(e["note"]) for e in json.loads(line)["events"]] == [3_000_000, 1]


def test_the_output_is_strict_json_for_infinities_and_nan(tmp_path):
    """`inf` was written as `Infinity`, which JSON does not have: non-finite
    floats are the strings "Infinity", "-Infinity" and "NaN"."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    events = tmp_path / "e.parquet"
    pq.write_table(pa.table({"type": ["A", "B", "B"], "v": [float("inf"), float("-inf"), float("nan")],
                             "w": [[1.5, float("inf")], [], None]}), events)
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    proc = ceql_run("--query", query, "--input", events, "--output", "-")

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    rows = [json.loads(line, parse_constant=refuse) for line in proc.stdout.splitlines()]
    assert [[e["v"] for e in r["events"]] for r in rows] == [["Infinity", "-Infinity"], ["Infinity", "NaN"]]
    assert rows[0]["events"][0]["w"] == [1.5, "Infinity"]


def test_a_json_lines_field_of_mixed_types_is_read_like_the_dicts(tmp_path):
    """pyarrow cannot type a field holding a number in one line and a string in
    another; the command reads such a file with Python's json, as the Python API
    reads the same dicts (numbers of a field with a fraction anywhere are doubles,
    as in a column typed by pyarrow)."""
    rows = [{"type": "A", "v": 1}, {"type": "B", "v": "x"}, {"type": "A", "v": 3}, {"type": "B", "v": 2.5, "n": None}]
    events = _write(tmp_path / "e.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B FILTER A[v / 2 = 0.5 OR v > 2] WITHIN 5 EVENTS")
    proc = ceql_run("--query", query, "--input", events, "--output", "-")
    got = [(r["start"], r["end"], r["positions"]) for r in map(json.loads, proc.stdout.splitlines())]
    # v = 1 is 1.0 (the field has 2.5): 1.0 / 2 = 0.5, so A@0 matches both Bs; A@2 (v = 3 > 2) matches B@3.
    assert sorted(got) == [(0, 1, [0, 1]), (0, 3, [0, 3]), (2, 3, [2, 3])]
    as_doubles = [dict(r, v=float(r["v"])) if isinstance(r["v"], int) else r for r in rows]
    api = ceql.compile(query.read_text()).run(as_doubles)
    assert sorted(got) == sorted((m.start, m.end, list(m.positions)) for m in api)
    assert json.loads(proc.stdout.splitlines()[0])["events"][1] == {"type": "B", "v": "x"}
    _write(events, json.dumps({"type": "A"}) + "\n[1, 2]\n")
    line = _one_line_error(ceql_run("--query", query, "--input", events, check=False), 1)
    assert "line 2" in line and "JSON object" in line


def test_bad_options_exit_2_as_the_readme_says(tmp_path):
    """A bad --type-field and an input of unknown format are bad options: exit 2
    (the command exited 1 while the README said 2, issue 20 item 8)."""
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    good = _write(tmp_path / "e.csv", "kind\nA\nB\n")
    unknown = _write(tmp_path / "e.txt", "type\nA\nB\n")
    line = _one_line_error(ceql_run("--query", query, "--input", good, check=False), 2)
    assert "no event-type column" in line and "kind" in line
    line = _one_line_error(ceql_run("--query", query, "--input", good, "--type-field", "nope", check=False), 2)
    assert "`nope`" in line
    line = _one_line_error(ceql_run("--query", query, "--input", unknown, check=False), 2)
    assert "cannot tell the format" in line
    assert ceql_run("--query", query, "--input", good, "--type-field", "kind").returncode == 0
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Command line"):]
    section = section[: section.index("\n## ", 3)]
    assert "2 for a query error or a bad option" in section and "--type-field" in section.split("Exit status")[1]


def test_duplicate_column_names_are_refused(tmp_path):
    query = _write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B FILTER A[x > 1] WITHIN 5 EVENTS")
    events = _write(tmp_path / "e.csv", "type,x,x\nA,5,0\nB,6,0\n")
    assert "columns named `x`" in _one_line_error(ceql_run("--query", query, "--input", events, check=False), 3)


def test_close_deadlines_writes_the_matches_the_input_does_not_reach(tmp_path):
    """An order placed less than 30 minutes before the file's last event is waiting: counted
    in the summary without --close-deadlines, written with it (a user's review: unpaid orders
    near the end of the file were silently lost)."""
    q = _write(tmp_path / "q.ceql", "SELECT * FROM Shop WHERE ORDER AS o ; ABSENT(PAYMENT) FOR 30 minutes "
                                     "PARTITION BY [id] WITHIN 1 hour\n")
    e = _write(tmp_path / "e.jsonl", '{"type":"ORDER","id":1,"t":0}\n{"type":"ORDER","id":2,"t":600}\n'
                                     '{"type":"PAYMENT","id":1,"t":1200}\n{"type":"ORDER","id":3,"t":3000}\n')
    base = ["--query", q, "--input", e, "--time-field", "t", "--time-unit", "s", "--no-events", "--output"]
    waiting = ceql_run(*base, tmp_path / "a.jsonl")
    assert [json.loads(x)["positions"] for x in (tmp_path / "a.jsonl").read_text().splitlines()] == [[1]]
    assert "waiting:    1 match of ABSENT ... FOR" in waiting.stdout
    closed = ceql_run(*base, tmp_path / "b.jsonl", "--close-deadlines")
    assert [json.loads(x)["positions"] for x in (tmp_path / "b.jsonl").read_text().splitlines()] == [[1], [3]]
    assert "waiting" not in closed.stdout
