"""``ceql run`` under hostile input and surroundings (issue 15's verification,
R5, R6, R8, R9, R10): integers beyond 64 bits, closed standard streams, deeply
nested JSON values, duplicate Parquet columns, and the memory budget options.
Every error is one line on standard error with the README's exit status."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ceql

ROOT = Path(__file__).resolve().parent.parent


def ceql_run(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "ceql.cli", "run", *map(str, args)], capture_output=True, text=True,
                          **kwargs)


def one_line_error(proc, status):
    """The single ``ceql: ...`` line of standard error; the exit status must be ``status``."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == status, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and len(lines) == 1 and lines[0].startswith("ceql: "), proc.stderr[-2000:]
    return lines[0]


def write(path, text):
    path.write_text(text)
    return path


def matches_of(stdout):
    return [tuple(json.loads(line)["positions"]) for line in stdout.splitlines()]


# -- R5: integers beyond 64 bits ------------------------------------------------------------

KEYED = "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 5 EVENTS"
WIDE = [2**64 - 1, 2**64 - 2, -(2**63) - 1, 2**63]


def _csv(rows):
    return "type,k\n" + "".join(f"{t},{k}\n" for t, k in rows)


def _jsonl(rows):
    return "".join(f'{{"type": "{t}", "k": {k}}}\n' for t, k in rows)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("wide", WIDE)
def test_an_integer_beyond_64_bits_is_a_bad_event_as_in_the_api(tmp_path, fmt, wide):
    """pyarrow read such an integer as a double, so that keys 2^64-1 and 2^64-2
    merged (one match, exit 0). The API refuses the same dicts with
    CeqlEventError at the integer's event, after the matches before it."""
    rows = [("A", 7), ("B", 7), ("A", wide), ("B", wide - 1)]
    query = write(tmp_path / "q.ceql", KEYED)
    with pytest.raises(ceql.CeqlEventError) as api:
        ceql.compile(KEYED).run([{"type": t, "k": k} for t, k in rows])
    assert api.value.position == 2 and api.value.field == "k"
    events = write(tmp_path / f"e.{fmt}", (_csv if fmt == "csv" else _jsonl)(rows))
    proc = ceql_run("--query", query, "--input", events, "--output", "-")
    line = one_line_error(proc, 3)
    assert line == f"ceql: {api.value}"
    assert "field `k`" in line and str(wide) in line and "64 bits" in line
    assert matches_of(proc.stdout) == [tuple(m.positions) for m in api.value.matches] == [(0, 1)]


def test_integers_beyond_64_bits_among_doubles_and_in_mixed_json_are_bad_events(tmp_path):
    """Also in a column that has fractions (a column of doubles by the README's
    rule), and in a JSON-lines file read with Python's json (a field holding a
    string in another line)."""
    query = write(tmp_path / "q.ceql", KEYED)
    wide = 2**64 - 1
    events = write(tmp_path / "e.csv", _csv([("A", 1.5), ("B", 1.5), ("A", wide), ("B", wide - 1)]))
    assert "field `k`" in one_line_error(ceql_run("--query", query, "--input", events), 3)
    events = write(tmp_path / "e.jsonl", _jsonl([("A", 1.5), ("B", '"x"'), ("A", wide), ("B", wide - 1)]))
    line = one_line_error(ceql_run("--query", query, "--input", events), 3)
    assert "position 2" in line and "field `k`" in line and str(wide) in line
    # Blank lines are not events: the position counts events, not lines.
    events = write(tmp_path / "e.jsonl", _jsonl([("A", 1.5)]) + "\n  \n" + _jsonl([("B", 1), ("A", -wide)]))
    line = one_line_error(ceql_run("--query", query, "--input", events), 3)
    assert "position 2 (type `A`)" in line and str(-wide) in line


def test_doubles_and_64_bit_integers_are_still_read(tmp_path):
    """Large doubles written as doubles (an exponent or a fraction) and integers
    inside 64 bits are values, not bad events."""
    query = write(tmp_path / "q.ceql", KEYED)
    for text in (["1e20", "1e20"], ["2.0e19", "2.0e19"], ["18446744073709551616.0"] * 2,
                 [str(2**63 - 1), str(2**63 - 1)], [str(-(2**63)), str(-(2**63))]):
        rows = [("A", text[0]), ("B", text[1]), ("A", 1.5)]
        for fmt, body in (("csv", _csv(rows)), ("jsonl", _jsonl(rows))):
            events = write(tmp_path / f"e.{fmt}", body)
            proc = ceql_run("--query", query, "--input", events, "--output", "-")
            assert proc.returncode == 0, (text, fmt, proc.stderr)
            assert matches_of(proc.stdout) == [(0, 1)], (text, fmt)


# -- R6: closed standard streams -----------------------------------------------------------

def run_closing(redirect, *args):
    """``ceql run ARGS`` started by the shell with ``redirect`` (``>&-``: standard
    output closed, ``2>&-``: standard error closed)."""
    argv = [sys.executable, "-m", "ceql.cli", "run", *map(str, args)]
    return subprocess.run(["sh", "-c", f'exec "$@" {redirect}', "sh", *argv], capture_output=True, text=True)


def test_a_closed_standard_output_is_a_one_line_error(tmp_path):
    """`--output - >&-` and a summary to a closed standard output were
    AttributeError tracebacks ('NoneType' object has no attribute 'write')."""
    query = write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    events = write(tmp_path / "e.csv", "type\nA\nB\nA\nB\n")
    line = one_line_error(run_closing(">&-", "--query", query, "--input", events, "--output", "-"), 1)
    assert line == "ceql: cannot write standard output: [Errno 9] standard output is closed"
    out = tmp_path / "m.jsonl"
    proc = run_closing(">&-", "--query", query, "--input", events, "--output", out)
    assert one_line_error(proc, 1) == line
    # A ; B under skip-till-any-match: every A before every B.
    assert sorted(json.loads(x)["positions"] for x in out.read_text().splitlines()) == [[0, 1], [0, 3], [2, 3]]


def test_a_closed_standard_error_loses_diagnostics_but_never_writes_them_to_the_output(tmp_path):
    """With standard error closed, print(file=sys.stderr) wrote warnings and the
    summary into standard output, among the matches. Matches stay alone on
    standard output; a summary that cannot be written is exit 1, other errors
    keep their status."""
    query = write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B")  # warning W0402: no WITHIN
    events = write(tmp_path / "e.csv", "type\nA\nB\n")
    proc = run_closing("2>&-", "--query", query, "--input", events, "--output", "-")
    assert proc.returncode == 1 and proc.stderr == ""
    assert [json.loads(x)["positions"] for x in proc.stdout.splitlines()] == [[0, 1]]
    proc = run_closing("2>&-", "--query", query, "--input", events)  # summary on standard output
    assert proc.returncode == 0 and proc.stdout.startswith("events:     2") and "warning" not in proc.stdout
    bad = write(tmp_path / "bad.ceql", "SELECT * FROM")
    proc = run_closing("2>&-", "--query", bad, "--input", events)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", "")
    proc = run_closing(">&- 2>&-", "--query", query, "--input", events, "--output", "-")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "")


# -- R8: deeply nested values ------------------------------------------------------------------

def _nested(depth, leaf=1, kind="list"):
    """A value with ``depth`` levels of lists (or dicts) around ``leaf``."""
    v = leaf
    for _ in range(depth):
        v = [v] if kind == "list" else {"a": v}
    return v


def _nested_text(depth, kind):
    """The JSON text of ``_nested(depth, 1, kind)`` (``json.dumps`` recurses)."""
    return ("[" * depth + "1" + "]" * depth) if kind == "list" else ('{"a": ' * depth + "1" + "}" * depth)


@pytest.mark.parametrize("kind", ["list", "object"])
def test_values_nested_deeper_than_the_limit_make_the_file_unreadable(tmp_path, kind):
    """A field nested 5,000 deep (read) or 900 deep (written) was a
    RecursionError traceback; 20,000 deep crashed pyarrow's JSON reader (and a
    nested Arrow column some thousands deep crashes the engine). The
    README's limit: values nest at most 64 levels; deeper ones make the input
    unreadable (exit 1), whichever reader takes the file."""
    query = write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    events = tmp_path / "e.jsonl"
    for depth in (65, 200, 900, 5000, 20000):
        for other in (_nested_text(depth, kind), '"x"'):  # pyarrow's reader, then Python's json (mixed types)
            events.write_text(f'{{"type": "A", "v": {_nested_text(depth, kind)}}}\n{{"type": "B", "v": {other}}}\n')
            line = one_line_error(ceql_run("--query", query, "--input", events), 1)
            assert "values nested more than 64 levels deep" in line, (depth, line)
    for other in (_nested(64, kind=kind), "x"):
        events.write_text(json.dumps({"type": "A", "v": _nested(64, kind=kind)}) + "\n"
                          + json.dumps({"type": "B", "v": other}) + "\n")
        proc = ceql_run("--query", query, "--input", events, "--output", "-")
        assert proc.returncode == 0, proc.stderr
        (match,) = [json.loads(x) for x in proc.stdout.splitlines()]
        assert match["events"] == [{"type": "A", "v": _nested(64, kind=kind)}, {"type": "B", "v": other}]


def test_a_parquet_column_nested_deeper_than_the_limit_is_unreadable(tmp_path):
    """Structs (pyarrow's Parquet reader itself refuses lists nested about 33 deep)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    query = write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    for depth, status in ((65, 1), (64, 0)):
        events = tmp_path / f"e{depth}.parquet"
        value = _nested(depth, kind="object")
        pq.write_table(pa.table({"type": ["A", "B"], "v": [value, value]}), events)
        proc = ceql_run("--query", query, "--input", events, "--output", "-")
        if status:
            assert "field `v`: values nested more than 64 levels deep" in one_line_error(proc, 1)
        else:
            assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 1, proc.stderr


# -- R9: two Parquet columns of one name -----------------------------------------------------

def test_two_parquet_columns_of_one_name_are_a_bad_event(tmp_path):
    """Exit 1 with pyarrow's "Multiple matches for FieldRef.Name(x)"; the README
    says 3 for two input columns of one name, with ceql's message (as for CSV)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    query = write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B FILTER A[x > 1] WITHIN 5 EVENTS")
    events = tmp_path / "e.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["A", "B"]), pa.array([5, 6]), pa.array([0, 0])],
                                        names=["type", "x", "x"]), events)
    line = one_line_error(ceql_run("--query", query, "--input", events), 3)
    csv = write(tmp_path / "e.csv", "type,x,x\nA,5,0\nB,6,0\n")
    assert line == one_line_error(ceql_run("--query", query, "--input", csv), 3)
    assert "2 columns named `x`" in line
    # A directory of Parquet files is still read.
    folder = tmp_path / "parts.parquet"
    folder.mkdir()
    pq.write_table(pa.table({"type": ["A", "B"], "x": [5, 6]}), folder / "part-0.parquet")
    proc = ceql_run("--query", query, "--input", folder, "--output", "-")
    assert proc.returncode == 0 and matches_of(proc.stdout) == [(0, 1)], proc.stderr


# -- R10: the memory budgets on the command line ------------------------------------------

EXPLODING = "SELECT * FROM S WHERE (A OR B)+ ; A ; (A OR B) ; (A OR B) ; C WITHIN 1000 EVENTS"


def test_the_budgets_the_memory_error_names_can_be_set_on_the_command_line(tmp_path):
    """The CLI's CeqlMemoryError told the user to raise max_det_states /
    max_cache_bytes, which `ceql run` had no option for. The options give the
    answer of the API with the same budgets, and the message names the options."""
    import random

    rng = random.Random(5)
    types = [rng.choice("AB") for _ in range(14)] + ["C"]
    query = write(tmp_path / "q.ceql", EXPLODING)
    events = write(tmp_path / "e.csv", "type\n" + "\n".join(types) + "\n")
    compiled = ceql.compile(EXPLODING)
    dicts = [{"type": t} for t in types]
    with pytest.raises(ceql.CeqlMemoryError) as api:
        compiled.run(dicts, max_det_states=4)
    line = one_line_error(ceql_run("--query", query, "--input", events, "--max-det-states", "4"), 3)
    expected = re.sub(r"\bmax_(cache_bytes|det_states|state_bytes)\b", lambda m: "--" + m.group().replace("_", "-"),
                      str(api.value))
    assert line == f"ceql: {expected}" and "--max-det-states = 4" in line
    assert "max_det_states" not in line
    with pytest.raises(ceql.CeqlMemoryError):
        compiled.run(dicts, max_state_bytes=1000)
    line = one_line_error(ceql_run("--query", query, "--input", events, "--max-state-bytes", "1000"), 3)
    assert "--max-state-bytes" in line
    expected = sorted(tuple(m.positions) for m in compiled.run(dicts, max_det_states=64, max_cache_bytes=1 << 20))
    assert expected  # the exploding pattern does match here
    proc = ceql_run("--query", query, "--input", events, "--output", "-", "--max-det-states", "64",
                    "--max-cache-bytes", str(1 << 20), "--max-state-bytes", str(1 << 30))
    assert proc.returncode == 0, proc.stderr
    assert sorted(matches_of(proc.stdout)) == expected


@pytest.mark.parametrize("option", ["--max-cache-bytes", "--max-det-states", "--max-state-bytes"])
def test_budget_options_must_be_positive_integers(tmp_path, option):
    """Validated like the API's budgets, before the input is read: exit 2, one line."""
    query = write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS")
    for value in ("0", "-1", "1.5", "abc", str(2**64), ""):
        proc = ceql_run("--query", query, "--input", tmp_path / "missing.csv", option, value)
        assert one_line_error(proc, 2) == f"ceql: {option} must be a positive integer below 2**64, not {value!r}"
    events = write(tmp_path / "e.csv", "type\nA\nB\n")
    proc = ceql_run("--query", query, "--input", events, "--output", "-", option, str(2**64 - 1))
    assert proc.returncode == 0 and matches_of(proc.stdout) == [(0, 1)], proc.stderr


def test_the_readme_documents_the_budget_options():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Command line"):]
    section = section[: section.index("\n## ", 3)]
    for option in ("--max-cache-bytes", "--max-det-states", "--max-state-bytes"):
        assert option in section


def test_query_run_says_an_exploding_query_raises_a_memory_error():
    """Query.run's docstring said such a query "runs slower but within its budget"
    (the README's old promise); since the budget covers the live det-states, it
    raises CeqlMemoryError naming the construct."""
    doc = " ".join(ceql.Query.run.__doc__.split())
    assert "explodes runs slower" not in doc
    assert "explodes), the evaluation raises :class:`ceql.CeqlMemoryError`" in doc


# -- options a user can get silently wrong ------------------------------------------------


def test_input_given_twice_is_a_usage_error_not_the_last_file(tmp_path):
    """argparse kept the last --input: the first file's events were never read."""
    q = write(tmp_path / "q.ceql", "SELECT * FROM S WHERE A ; B WITHIN 3 EVENTS")
    a = write(tmp_path / "a.csv", "type\nA\nB\n")
    b = write(tmp_path / "b.csv", "type\nB\nA\n")
    proc = ceql_run("--query", q, "--input", a, "--input", b)
    assert proc.returncode == 2
    assert "--input given twice" in proc.stderr and proc.stdout == ""


WALL_CLOCK = "the events carry no time stamp"


@pytest.mark.parametrize("query, extra, warned", [
    # A duration, no time source: the window would read the moment each row is read.
    ("SELECT * FROM S WHERE A ; B WITHIN 3 seconds", [], True),
    ("SELECT * FROM S WHERE A ; ABSENT(C) FOR 2 seconds WITHIN 5 seconds", [], True),
    ("SELECT * FROM S WHERE A ; B WITHIN 3 seconds", ["--quiet"], False),
    ("SELECT * FROM S WHERE A ; B WITHIN 3 seconds", ["--time-field", "ts", "--time-unit", "s"], False),
    ("CREATE STREAM S { EVENT A { ts: primary_time }, EVENT B { ts: primary_time } }\n"
     "SELECT * FROM S WHERE A ; B WITHIN 3 seconds", [], False),
    # No duration: positions only.
    ("SELECT * FROM S WHERE A ; B WITHIN 3 EVENTS", [], False),
    ("SELECT * FROM S WHERE A ; B WITHIN 3 [ts]", [], False),
])
def test_a_duration_without_time_stamps_is_warned_about(tmp_path, query, extra, warned):
    q = write(tmp_path / "q.ceql", query)
    data = write(tmp_path / "e.csv", "type,ts\nA,0\nB,10\n")
    proc = ceql_run("--query", q, "--input", data, "--output", "-", *extra)
    assert proc.returncode == 0, proc.stderr
    assert (WALL_CLOCK in proc.stderr) == warned, proc.stderr
    if "--time-field" in extra:
        assert proc.stdout == "", "10 s apart: outside WITHIN 3 seconds"
