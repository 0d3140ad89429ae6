"""How ``ceql run`` types what it reads (README, "Command line"): text stays text
in every format and reader (pyarrow's readers took ISO 8601 strings for time
stamps, and in a JSON-lines file only when no other field made it fall back to
Python's ``json``); the ``--time-field`` column alone is parsed as a time stamp;
columns declared ``string`` by ``--schema`` keep a CSV's digits as text; a query
file may start with a byte-order mark; ``--time-field`` and ``--plot`` are checked
before the run. Expected values are worked out from the queries by hand."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def ceql_run(*args):
    return subprocess.run([sys.executable, "-m", "ceql.cli", "run", *map(str, args)], capture_output=True, text=True)


def positions(proc):
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [tuple(json.loads(line)["positions"]) for line in proc.stdout.splitlines()]


DATE_QUERY = "SELECT * FROM S WHERE A FILTER A[d = '2024-01-01 10:00:00'] WITHIN 1 EVENTS\n"
# Event 0 has the date the filter names; event 1 another one.
DATES = [("A", "2024-01-01 10:00:00"), ("A", "2024-01-02 10:00:00")]


@pytest.mark.parametrize("mixed", [False, True], ids=["pyarrow-reader", "json-reader"])
def test_a_date_string_in_json_lines_stays_a_string(tmp_path, mixed):
    """With ``mixed``, an unrelated field is a number in one line and a string in
    the other, which sends the file to Python's json reader: same answer."""
    lines = []
    for i, (t, d) in enumerate(DATES):
        row = {"type": t, "d": d}
        if mixed:
            row["z"] = 1 if i == 0 else "q"
        lines.append(json.dumps(row))
    (tmp_path / "e.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "q.ceql").write_text(DATE_QUERY)
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", tmp_path / "e.jsonl", "--output", "-")
    assert positions(out) == [(0,)]
    assert [json.loads(line)["events"][0]["d"] for line in out.stdout.splitlines()] == ["2024-01-01 10:00:00"]


def test_a_date_string_in_a_csv_stays_a_string(tmp_path):
    (tmp_path / "e.csv").write_text("type,d\n" + "".join(f"{t},{d}\n" for t, d in DATES))
    (tmp_path / "q.ceql").write_text(DATE_QUERY)
    assert positions(ceql_run("--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv", "--output", "-")) == [(0,)]


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl-mixed", "csv"])
def test_iso_text_in_the_time_field_is_a_time_stamp(tmp_path, fmt):
    """A at 0 s and 1 s, B at 2 s and 3.5 s, ``A ; B WITHIN 2 seconds``: B@2 pairs
    with both As (2 and 1 s apart); B@3.5 is 3.5 and 2.5 s after them: none."""
    times = ["2024-01-01T00:00:00", "2024-01-01T00:00:01", "2024-01-01T00:00:02", "2024-01-01T00:00:03.5"]
    types = ["A", "A", "B", "B"]
    if fmt == "csv":
        (tmp_path / "e.csv").write_text("type,ts\n" + "".join(f"{t},{s}\n" for t, s in zip(types, times)))
        path = tmp_path / "e.csv"
    else:
        rows = [{"type": t, "ts": s} for t, s in zip(types, times)]
        if fmt == "jsonl-mixed":
            for i, r in enumerate(rows):
                r["v"] = i if i else "x"
        path = tmp_path / "e.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "q.ceql").write_text("SELECT * FROM S WHERE A ; B WITHIN 2 seconds\n")
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", path, "--time-field", "ts", "--output", "-", "--no-events")
    assert sorted(positions(out)) == [(0, 2), (1, 2)]


def test_a_time_field_the_input_lacks_is_a_usage_error(tmp_path):
    (tmp_path / "e.csv").write_text("type,ts\nA,1\n")
    (tmp_path / "q.ceql").write_text("SELECT * FROM S WHERE A WITHIN 2 seconds\n")
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv", "--time-field", "nosuch")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip() == "ceql: the input has no column `nosuch` for --time-field (columns: type, ts)"


def test_a_column_declared_string_keeps_its_digits(tmp_path):
    """``01234`` is the text the filter names, not the number 1234."""
    (tmp_path / "e.csv").write_text("type,zip\nA,01234\nB,02000\n")
    (tmp_path / "s.ceql").write_text("CREATE STREAM S { EVENT A { zip: string }, EVENT B { zip: string } }\n")
    (tmp_path / "q.ceql").write_text("SELECT * FROM S WHERE A ; B FILTER A[zip = '01234'] WITHIN 3 EVENTS\n")
    out = ceql_run("--schema", tmp_path / "s.ceql", "--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv",
                   "--output", "-")
    assert positions(out) == [(0, 1)]
    assert [e["zip"] for e in json.loads(out.stdout.splitlines()[0])["events"]] == ["01234", "02000"]


def test_a_query_file_may_start_with_a_byte_order_mark(tmp_path):
    (tmp_path / "e.csv").write_text("type\nA\n")
    (tmp_path / "q.ceql").write_bytes("\ufeffSELECT * FROM S WHERE A WITHIN 1 EVENTS\n".encode())
    assert positions(ceql_run("--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv", "--output", "-")) == [(0,)]


@pytest.mark.parametrize("name, said", [("plot", "it has no extension"), ("plot.xyz", "`.xyz` is not an image format")])
def test_a_plot_name_without_an_image_extension_is_refused_before_the_run(tmp_path, name, said):
    pytest.importorskip("matplotlib")
    (tmp_path / "e.csv").write_text("type\nA\n")
    (tmp_path / "q.ceql").write_text("SELECT * FROM S WHERE A WITHIN 1 EVENTS\n")
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv", "--plot", tmp_path / name,
                   "--output", tmp_path / "m.jsonl")
    assert out.returncode == 2 and said in out.stderr and not (tmp_path / "m.jsonl").exists()


def test_the_plot_title_says_which_matches_it_drew():
    from ceql._cli_plot import _ordinal

    assert [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 102, 111)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "102nd", "111th"]


def test_warnings_and_schema_errors_name_their_files(tmp_path):
    (tmp_path / "e.csv").write_text("type\nA\n")
    (tmp_path / "q.ceql").write_text("SELECT * FROM S WHERE A\n")  # no WITHIN: W0402
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv", "--output", tmp_path / "m.jsonl")
    assert f"--> {tmp_path / 'q.ceql'}:1:1" in out.stderr
    (tmp_path / "s.ceql").write_text("CREATE STREAM S {\n  EVENT A { v: itn }\n}\n")
    out = ceql_run("--schema", tmp_path / "s.ceql", "--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv")
    assert out.returncode == 2 and f"--> {tmp_path / 's.ceql'}:2:16" in out.stderr


# -- time stamps written as text: every reader the same way ---------------------------------

PAIR = "SELECT * FROM S WHERE A ; B WITHIN 10 seconds\n"


def _write_events(tmp_path, fmt, rows):
    """``rows`` of (type, t) into a file of format ``fmt``; ``jsonl-mixed`` adds a
    field of two types, which sends the file to Python's json reader."""
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        path = tmp_path / f"e.{fmt}"
        path.write_text(f"type{sep}t\n" + "".join(f"{k}{sep}{t}\n" for k, t in rows))
        return path
    if fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        path = tmp_path / "e.parquet"
        pq.write_table(pa.table({"type": [k for k, _ in rows], "t": [t for _, t in rows]}), path)
        return path
    path = tmp_path / "e.jsonl"
    lines = []
    for i, (k, t) in enumerate(rows):
        row = {"type": k, "t": t}
        if fmt == "jsonl-mixed":
            row["v"] = i if i else "x"
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n")
    return path


FORMATS = ["csv", "tsv", "jsonl", "jsonl-mixed", "parquet"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_zone_offsets_are_converted_and_a_time_without_one_is_utc(tmp_path, fmt):
    """A at 00:00:00Z; B at 01:00:05+01:00, which is 00:00:05 UTC (5 s later: a match);
    B at 00:00:20 without a zone, UTC (20 s later: none)."""
    rows = [("A", "2024-01-01T00:00:00Z"), ("B", "2024-01-01T01:00:05+01:00"), ("B", "2024-01-01T00:00:20")]
    (tmp_path / "q.ceql").write_text(PAIR)
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", _write_events(tmp_path, fmt, rows), "--time-field", "t",
                   "--output", "-", "--no-events")
    assert positions(out) == [(0, 1)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_declared_primary_time_holding_iso_text_is_a_time_stamp(tmp_path, fmt):
    """No --time-field: the schema's primary_time attribute is the time (0 and 5 s)."""
    rows = [("A", "2024-01-01T00:00:00"), ("B", "2024-01-01T00:00:05")]
    (tmp_path / "s.ceql").write_text("CREATE STREAM S { EVENT A { t: primary_time }, EVENT B { t: primary_time } }\n")
    (tmp_path / "q.ceql").write_text(PAIR)
    out = ceql_run("--schema", tmp_path / "s.ceql", "--query", tmp_path / "q.ceql",
                   "--input", _write_events(tmp_path, fmt, rows), "--output", "-", "--no-events")
    assert positions(out) == [(0, 1)]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "jsonl-mixed"])
def test_an_empty_time_is_missing_at_its_own_row(tmp_path, fmt):
    rows = [("A", "2024-01-01T00:00:00"), ("B", ""), ("B", "2024-01-01T00:00:05")]
    (tmp_path / "q.ceql").write_text(PAIR)
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", _write_events(tmp_path, fmt, rows), "--time-field", "t",
                   "--output", "-")
    assert out.returncode == 3 and "event at position 1 (type `B`), field `t`: missing time stamp" in out.stderr


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "jsonl-mixed"])
def test_a_time_that_is_none_is_a_bad_event_at_its_row_after_the_matches_before_it(tmp_path, fmt):
    """A@0, B@5 (a match, written), then `soon` (no time stamp) at position 2, and a
    B after it that is never read."""
    rows = [("A", "2024-01-01T00:00:00"), ("B", "2024-01-01T00:00:05"), ("B", "soon"), ("B", "2024-01-01T00:00:06")]
    (tmp_path / "q.ceql").write_text(PAIR)
    out = ceql_run("--query", tmp_path / "q.ceql", "--input", _write_events(tmp_path, fmt, rows), "--time-field", "t",
                   "--output", "-", "--no-events")
    assert out.returncode == 3, out.stderr
    assert [tuple(json.loads(line)["positions"]) for line in out.stdout.splitlines()] == [(0, 1)]
    assert "event at position 2 (type `B`), field `t`" in out.stderr
    # Arrow readers name the text; Python's json reader leaves it to the engine, as the API does.
    said = "`soon` is not an ISO 8601 time stamp" if fmt != "jsonl-mixed" else "found string"
    assert said in out.stderr
