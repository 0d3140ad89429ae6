"""``ceql explain`` (text, dot, svg; error exits) and ``ceql run --plot``, run as the
command line runs them: in a subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ceql
import ceql.explain as cx
from ceql._cli_plot import PlotSample, Span

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "stock" / "stock_sample.csv"
MAIN = ROOT / "examples" / "stock" / "main.ceql"
try:
    import matplotlib  # noqa: F401

    HAS_MATPLOTLIB = True
except ImportError:
    HAS_MATPLOTLIB = False


def cli(*args, env=None, hide=None):
    """Runs ``ceql ARGS``; ``hide`` names a module made unimportable first (an extra
    that is not installed)."""
    argv = [str(a) for a in args]
    if hide:
        code = (f"import sys; sys.modules[{hide!r}] = None; from ceql.cli import main; "
                f"sys.exit(main({argv!r}))")
        cmd = [sys.executable, "-c", code]
    else:
        cmd = [sys.executable, "-m", "ceql.cli", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def one_line_error(proc, code):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ceql: "), proc.stderr
    return lines[0]


def test_explain_text_is_the_querys():
    proc = cli("explain", MAIN)
    assert proc.returncode == 0, proc.stderr
    q = ceql.compile(MAIN.read_text())
    assert proc.stdout == q.explain()
    for section in ("Query", "Formula after filter push-down", "Predicates", "Automaton", "Clauses", "Warnings"):
        assert re.search(rf"^{section}", proc.stdout, re.M), section
    assert "PARTITION: a match resets its own partition" in proc.stdout


def test_explain_dot(tmp_path):
    proc = cli("explain", MAIN, "--format", "dot")
    assert proc.returncode == 0, proc.stderr
    q = ceql.compile(MAIN.read_text())
    assert proc.stdout == q.to_dot()
    d = q.describe()
    assert len(re.findall(r"^\s*q\d+ \[", proc.stdout, re.M)) == d["states"]
    assert len(re.findall(r"^\s*q\d+ -> q\d+ ", proc.stdout, re.M)) == d["transitions"]
    out = tmp_path / "a.dot"
    proc = cli("explain", MAIN, "--format", "dot", "--output", out)
    assert proc.returncode == 0 and proc.stdout == "" and out.read_text() == q.to_dot()


def test_explain_with_a_schema(tmp_path):
    schema = tmp_path / "s.ceql"
    schema.write_text("CREATE STREAM S { EVENT A { v: int }, EVENT B { w: string } }")
    query = tmp_path / "q.ceql"
    query.write_text("SELECT * FROM S WHERE A ; B FILTER A[v > 1] AND B[w = 'x'] WITHIN 3 EVENTS")
    proc = cli("explain", query, "--schema", schema)
    assert proc.returncode == 0, proc.stderr
    assert "A[v > 1] ; B[w = 'x']" in proc.stdout and "(with the schema: CREATE STREAM S" in proc.stdout
    # A type the schema does not declare: the error is rendered against the query file.
    bad = tmp_path / "bad.ceql"
    bad.write_text("SELECT * FROM S WHERE A ; C")
    proc = cli("explain", bad, "--schema", schema)
    assert proc.returncode == 2 and f"--> {bad}:1:" in proc.stderr


@pytest.mark.skipif(not cx.graphviz_available(), reason="Graphviz (dot and the graphviz extra) is not installed")
def test_explain_svg(tmp_path):
    out = tmp_path / "a.svg"
    proc = cli("explain", MAIN, "--format", "svg", "--output", out)
    assert proc.returncode == 0, proc.stderr
    svg = out.read_text()
    d = ceql.compile(MAIN.read_text()).describe()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert svg.count('class="node"') == d["states"] + 1  # and the start point
    assert svg.count('class="edge"') == d["transitions"] + 1  # and the arrow into q0
    assert "AS msft" in svg


def test_explain_svg_without_dot(tmp_path):
    proc = cli("explain", MAIN, "--format", "svg", env={"PATH": str(tmp_path)})
    line = one_line_error(proc, 2)
    assert "dot" in line and "ceql[graphviz]" in line


def test_explain_svg_without_the_graphviz_extra():
    line = one_line_error(cli("explain", MAIN, "--format", "svg", hide="graphviz"), 2)
    assert "ceql[graphviz]" in line and "Python package is missing" in line


def test_explain_errors(tmp_path):
    line = one_line_error(cli("explain", tmp_path / "none.ceql"), 1)
    assert "cannot read the query file" in line
    bad = tmp_path / "bad.ceql"
    bad.write_text("SELECT * FROM S WHERE A ; ; B")
    proc = cli("explain", bad)
    assert proc.returncode == 2 and "error[E0100]" in proc.stderr and f"--> {bad}:1:27" in proc.stderr
    line = one_line_error(cli("explain", MAIN, "--output", tmp_path / "no" / "dir" / "x.txt"), 1)
    assert "cannot write" in line
    proc = cli("explain", MAIN, "--format", "png")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="the plot extra is not installed")
def test_run_plot(tmp_path):
    png, out = tmp_path / "m.png", tmp_path / "m.jsonl"
    proc = cli("run", "--query", MAIN, "--input", SAMPLE, "--time-field", "stock_time", "--time-unit", "ms",
               "--output", out, "--plot", png)
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot:       {png}" in proc.stdout
    # The streamed output is unchanged by --plot.
    assert len([json.loads(line) for line in out.read_text().splitlines()]) == 368


def test_run_plot_without_matplotlib(tmp_path):
    png = tmp_path / "m.png"
    line = one_line_error(cli("run", "--query", MAIN, "--input", SAMPLE, "--plot", png, hide="matplotlib"), 2)
    assert "ceql[plot]" in line and not png.exists()


def test_plot_sample_is_bounded_and_evenly_spaced():
    sample = PlotSample(cap=1000)
    total = 123_457
    for chunk in range(0, total, 5000):
        sample.add(Span(i, i, (i,)) for i in range(chunk, min(chunk + 5000, total)))
    assert sample.seen == total
    assert 500 <= len(sample.kept) <= 1000
    ends = [m.end for m in sample.kept]
    assert ends == list(range(0, total, sample.stride))
    small = PlotSample(cap=1000)
    small.add(Span(i, i, (i,)) for i in range(700))
    assert small.stride == 1 and len(small.kept) == 700


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="the plot extra is not installed")
def test_plot_of_a_sample_says_so(tmp_path):
    from ceql._cli_plot import save

    events = [{"type": t} for t in "AB" * 300]
    matches = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 3 EVENTS").run(events)
    sample = PlotSample(cap=100)
    sample.add(matches)
    assert sample.stride > 1
    path = tmp_path / "p.png"
    save(sample, events, str(path), "q.ceql", None)
    assert path.read_bytes()[:4] == b"\x89PNG"
