"""An adversarial review of the Python API and the command line (2026-11-28): one test per
finding, each asserting the documented behaviour; every one failed before its fix (crashes
on invalid UTF-8 and under a memory limit, lost matches, swallowed interrupts, inexact
``max_delay`` text, a CSV time column blamed on its first row, unclear messages)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pytest

import ceql

PKG = str(Path(ceql.__file__).resolve().parent.parent)  # the python/ dir of the ceql under test


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _py(code: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], capture_output=True,
                          text=True, env=_env(), timeout=300)


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ceql", *map(str, args)], capture_output=True, text=True,
                          env=_env(), timeout=300)


# -- finding 1 ---------------------------------------------------------------------------------
def test_invalid_utf8_in_an_arrow_string_column_never_reaches_python_as_a_panic():
    """A Rust panic never crosses into Python (crates/ceql-python/src/errors.rs): bad input is a
    clear error. An Arrow string column holding invalid UTF-8 (pyarrow's own JSON reader makes
    one from a Latin-1 file) made Match.measures raise pyo3's PanicException: the import now
    validates text columns (a ValueError naming the column)."""
    offsets = pa.py_buffer(b"\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00")
    x = pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(b"\xffB")])
    table = pa.table({"type": ["A", "B"], "x": x})
    q = ceql.compile("SELECT a, first(a.x) AS f FROM S WHERE A AS a ; B")
    with pytest.raises(ValueError, match="column `x` is not valid UTF-8 text"):
        q.run(table)
    with pytest.raises(ValueError, match="column `x` is not valid UTF-8 text"):
        q.run_arrow(table)


# -- finding 2 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["SELECT * FROM S WHERE A ; B WITHIN 5 EVENTS",
                                   "SELECT a, first(a.x) AS f FROM S WHERE A AS a ; B WITHIN 5 EVENTS"])
def test_cli_on_a_latin1_json_lines_file_is_a_one_line_error_not_a_traceback(tmp_path, query):
    """cli.py: 'Exit status ... 1 a file that cannot be read ... Errors are one line on
    standard error.'"""
    (tmp_path / "q.ceql").write_text(query)
    data = tmp_path / "e.jsonl"
    data.write_bytes('{"type":"A","x":"café"}\n{"type":"B","x":"ok"}\n'.encode("latin-1"))
    proc = _cli("run", "--query", tmp_path / "q.ceql", "--input", data, "--output", tmp_path / "out.jsonl")
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (1, 3), proc.returncode


# -- finding 3 ---------------------------------------------------------------------------------
_MANY_MATCHES = """
import ceql, sys, resource
q = ceql.compile("SELECT * FROM S WHERE A ; B")
n = int(sys.argv[2])
evs = [{"type": "A"} for _ in range(n)] + [{"type": "B"} for _ in range(n)]
q.run(evs[:2] + evs[-2:])  # every library loaded: the limit is room above what the process maps
size = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[1]) * 2**20,) * 2)
try:
    print(len(q.run(evs)))
except MemoryError as e:   # CeqlMemoryError is one too
    print("MemoryError", type(e).__name__)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmSize from /proc")
@pytest.mark.parametrize("limit_mib,n", [(100, 4000), (200, 4000), (300, 4000), (400, 4000), (600, 4000),
                                         (50, 2000), (100, 2000)])
def test_millions_of_matches_under_an_address_space_limit_raise_memory_error_not_abort(limit_mib, n):
    """README/Query.run: over budget or out of memory is a (Ceql)MemoryError 'instead of being
    killed'; the default budgets even read `ulimit -v`. Building the list of Match objects
    aborted the process (SIGABRT: 'memory allocation of N bytes failed') or raised
    CeqlInternalError('PyObject pointer is null')."""
    proc = _py(_MANY_MATCHES, limit_mib, n)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-600:])


# -- finding 4 ---------------------------------------------------------------------------------
_OUTPUT_OVER = """
import ceql, sys, resource
q = ceql.compile("SELECT * FROM S WHERE (A OR B)+")
q.run([{"type": "A"}])
size = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[1]) * 2**20,) * 2)
try:
    q.run([{"type": "AB"[i % 2]} for i in range(26)])
    print("no error")
except BaseException as e:
    print(type(e).__name__, "|", e)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmSize from /proc")
def test_an_output_memory_error_stays_a_ceql_memory_error():
    """Query.run: an evaluation that does not fit raises CeqlMemoryError naming what to bound,
    with the matches before it. Attaching those matches (take_matches) ran out of memory
    itself and replaced it with a bare, message-less MemoryError."""
    proc = _py(_OUTPUT_OVER, 400)
    assert proc.returncode == 0, proc.stderr[-600:]
    assert proc.stdout.startswith("CeqlMemoryError |"), proc.stdout


# -- finding 5 ---------------------------------------------------------------------------------
class _Row(Mapping):
    """A lazy row whose field read fails (an I/O error, say)."""

    def __init__(self, d, fail=False):
        self.d, self.fail = d, fail

    def __getitem__(self, k):
        if self.fail and k == "x":
            raise OSError("disk gone")
        return self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


@pytest.mark.parametrize("how", ["list", "generator"])
def test_matches_before_an_event_that_fails_to_read_are_not_lost(how):
    """Stream.push_many: 'nothing pulled is lost, and the stream can go on'; the events before
    the failure are processed (position counts them), so their matches must be delivered
    (on the exception's ``matches``, as for a bad event or a failing iterator)."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER B[x > 0] WITHIN 5 EVENTS")
    s = q.stream()
    evs = [{"type": "A", "x": 1}, {"type": "B", "x": 1}, _Row({"type": "B", "x": 1}, fail=True)]
    with pytest.raises(OSError) as info:
        s.push_many(evs if how == "list" else iter(evs))
    assert s.position == 2
    assert [m.positions for m in getattr(info.value, "matches", [])] == [(0, 1)]


# -- finding 6 ---------------------------------------------------------------------------------
class _Interrupting(Mapping):
    def __getitem__(self, k):
        if k == "type":
            raise KeyboardInterrupt
        raise KeyError(k)

    def __iter__(self):
        return iter(["type"])

    def __len__(self):
        return 1


class _InterruptingValue:
    def __index__(self):
        raise KeyboardInterrupt


def test_keyboard_interrupt_while_reading_an_event_is_not_turned_into_an_event_error():
    """A KeyboardInterrupt raised while an event is read propagates (it does for attribute
    fields and for `stream`); for `type`, and from a value's conversion, it became a
    CeqlEventError (the latter with an empty message)."""
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[x > 0]")
    with pytest.raises(KeyboardInterrupt):
        q.stream().push(_Interrupting())
    with pytest.raises(KeyboardInterrupt):
        q.run([{"type": "A", "x": _InterruptingValue()}])


# -- finding 7 ---------------------------------------------------------------------------------
def test_max_delay_text_is_read_exactly():
    """docs/language.md#s3-7a: nothing is late for input at most `d` behind; an event exactly `d`
    behind is on time (ts == W). '129.944532029 s' became 129944532028 ns (a binary float),
    and '9223372036854775807 ns' (below 2^63) was refused as longer than 2^63 ns."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B")
    evs = [{"type": "B", "t": 129_944_532_029}, {"type": "A", "t": 0}]
    for d in ("129.944532029 s", "129.944532029 seconds"):
        found = q.run(evs, time_field="t", max_delay=d)  # no late-event error: sorted, A ; B matches
        assert [m.positions for m in found] == [(0, 1)], d
    q.stream(time_field="t", max_delay="9223372036854775807 ns")


# -- finding 8 ---------------------------------------------------------------------------------
def test_cli_csv_with_one_bad_time_value_reports_that_row_and_the_matches_before_it(tmp_path):
    """_cli_times: 'A value that is not such a time stamp ... is a bad event at its own row';
    cli.py: exit 3, 'the matches before it are written first'. The JSON-lines file of the same
    events does that; the CSV blamed row 0 (`1` is not ISO 8601) and wrote nothing."""
    (tmp_path / "q.ceql").write_text("SELECT * FROM S WHERE A ; B WITHIN 1 seconds")
    (tmp_path / "e.csv").write_text("type,t\nA,1\nB,2\nA,3\nB,abc\n")
    out = tmp_path / "out.jsonl"
    proc = _cli("run", "--query", tmp_path / "q.ceql", "--input", tmp_path / "e.csv", "--time-field", "t",
                "--output", out, "--no-events")
    assert proc.returncode == 3, proc.stderr
    assert "position 3" in proc.stderr, proc.stderr
    assert out.read_text().count("\n") == 1, out.read_text()


# -- finding 9 ---------------------------------------------------------------------------------
def test_a_nan_time_stamp_error_says_nan():
    """Errors name what went wrong: a NaN time stamp is a number, and 'time stamp must be a
    number or a timestamp, found double' does not say what is wrong with it."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 1 seconds")
    with pytest.raises(ceql.CeqlEventError) as info:
        q.run([{"type": "A", "t": float("nan")}, {"type": "B", "t": 1}], time_field="t")
    assert "nan" in str(info.value).lower(), str(info.value)


# -- finding 10 --------------------------------------------------------------------------------
def test_a_budget_error_does_not_say_a_size_exceeds_itself():
    """'the evaluation's state (97 KiB) exceeds max_state_bytes = 97 KiB' reads as a
    contradiction; the two sizes must be told apart (bytes, or more digits)."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B ; C WITHIN 100 EVENTS")
    evs = [{"type": "ABBC"[i % 4], "t": i} for i in range(2000)]
    with pytest.raises(ceql.CeqlMemoryError) as info:
        q.run(evs, time_field="t", max_delay=1, max_state_bytes=100_000)
    m = re.search(r"state \(([^)]*)\) exceeds max_state_bytes = (\S+ \S+)", str(info.value))
    assert m, str(info.value)
    assert m.group(1) != m.group(2).rstrip(":"), str(info.value)
