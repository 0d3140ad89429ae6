"""An adversarial review of the changes of 2026-11-28 (IS NULL, rounded double time
stamps, the Arrow UTF-8 check, matches on any exception, exact max_delay, the CLI's numeric
time columns, error labels, the oracle's deferred data errors, Spark decimal times): one test
per finding, each asserting the documented or hand-derived behaviour, each failing before
its fix."""

from __future__ import annotations

import decimal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import ceql
from oracle import evaluate

pytest_plugins = ["spark_support"]



def _string_array(values, nulls=None):
    """A pyarrow string array built from raw bytes (valid Arrow whatever the bytes of
    its null slots, as the Arrow format allows)."""
    offsets = [0]
    for b in values:
        offsets.append(offsets[-1] + len(b))
    validity = None if nulls is None else pa.array([not n for n in nulls]).buffers()[1]
    return pa.Array.from_buffers(
        pa.string(), len(values),
        [validity, pa.py_buffer(np.array(offsets, np.int32).tobytes()), pa.py_buffer(b"".join(values))],
        null_count=0 if nulls is None else sum(nulls))


# 1 ---------------------------------------------------------------------------------
def test_reorder_watermark_rounds_a_double_like_the_event_times():
    """docs/language.md#s1-4: a double time is rounded to the nearest ns (2.01 s is
    2010000000 ns). Stream.advance_watermark: "the held events at or before it are
    evaluated". With max_delay the watermark 2.01 was truncated to 2009999999 ns, so the
    event at 2.01 s stayed held."""
    q = ceql.compile("SELECT * FROM S WHERE A WITHIN 1 second")
    s = q.stream(time_field="t", time_unit="s", max_delay="10 seconds")
    assert s.push({"type": "A", "t": 2.01}) == []
    assert [m.positions for m in s.advance_watermark(2.01)] == [(0,)]
    # in ns: the event at 2.5 ns is at 3 ns, and so is the watermark 2.5
    s = q.stream(time_field="t", max_delay=1)
    assert s.push({"type": "A", "t": 2.5}) == []
    assert [m.positions for m in s.advance_watermark(2.5)] == [(0,)]


# 2 ---------------------------------------------------------------------------------
def _env():
    """The environment of a child `python -m ceql`: the ceql under test (the installed
    package in CI, python/ in a checkout) first on its path."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(ceql.__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    return env



@pytest.mark.parametrize("cell", [" 1", "1 ", "\u0661"])
def test_cli_numeric_time_column_with_odd_cell_gives_one_line_error(tmp_path, cell):
    """README (command line): every error on standard error, "never a traceback". A CSV
    time column whose first cell is a number padded with a space (or a non-ASCII digit)
    and with a bad cell further down raised ArrowInvalid out of numeric_times."""
    (tmp_path / "q.ceql").write_text("SELECT * FROM S WHERE A ; B WITHIN 10 seconds")
    (tmp_path / "e.csv").write_text(f"type,t\nA,{cell}\nB,2\nB,x\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "ceql", "run", "--query", str(tmp_path / "q.ceql"),
                        "--input", str(tmp_path / "e.csv"), "--time-field", "t", "--time-unit", "s",
                        "--output", "-"], capture_output=True, text=True,
                       env=_env())
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode != 0
    assert r.stderr.strip().startswith("ceql:") and len(r.stderr.strip().splitlines()) == 1, r.stderr


# 3 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [np.float32(0.5), np.float16(0.5), np.longdouble(0.5)])
def test_max_delay_takes_numpy_floats(value):
    """python/ceql/_units.py duration_nanos: "a number of seconds"; numpy floats were read
    with float() before and are now a TypeError from Fraction()."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 1 second")
    s = q.stream(time_field="t", time_unit="s", max_delay=value)
    s.push({"type": "A", "t": 1.0})
    assert [m.positions for m in s.push({"type": "B", "t": 1.2}) + s.flush()] == [(0, 1)]


# 4 ---------------------------------------------------------------------------------
def test_null_slot_with_non_utf8_bytes_is_valid_arrow():
    """The Arrow format leaves the bytes of a null slot unspecified, and pyarrow's own full
    validation accepts such an array; the new UTF-8 check reads every byte between the
    first and last offsets, null slots included, and refuses it."""
    col = _string_array([b"ok", b"\xe9t\xe9", b"x"], nulls=[False, True, False])
    col.validate(full=True)  # valid for pyarrow
    table = pa.table({"type": ["A", "A", "A"], "s": col})
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[s IS NULL]")
    assert [m.positions for m in q.run(table)] == [(1,)]


# 5 ---------------------------------------------------------------------------------
# 6 ---------------------------------------------------------------------------------
def test_oracle_may_does_not_raise_where_the_spec_says_nothing_raises():
    """docs/language.md#s3-4a: "`... FILTER b[v > a.v] AND b[v > 100]` raises nothing" over
    A(v='x') B(v=1): b[v > 100] is a one-event filter, checked in the automaton, and a
    valuation is tested only once its one-event filters hold. data_errors='may' ("what
    some order raises") raised."""
    evs = [{"type": "A", "v": "x"}, {"type": "B", "v": 1}]
    text = "SELECT * FROM S WHERE A AS a ; B AS b FILTER b[v > a.v] AND b[v > 100]"
    assert ceql.compile(text).run(evs) == []
    assert evaluate(text, evs, data_errors="may").matches() == []


# 7 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("exc", [RuntimeError, MemoryError])
def test_error_inside_a_values_own_index_is_reraised(exc):
    """crates/ceql-python/src/convert.rs to_value: an exception that is not a bad value
    ("an error inside a value's own `__index__` or `__float__`") is re-raised as it is.
    ceql._convert.to_engine swallows it (except Exception) and reports "unsupported value
    of type X"."""
    class X:
        def __index__(self):
            raise exc("the value's own failure")

    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER B[v > 0]")
    with pytest.raises(exc) as info:
        q.run([{"type": "A"}, {"type": "B", "v": 1}, {"type": "B", "v": X()}])
    assert [m.positions for m in info.value.matches] == [(0, 1)]


# 8 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "SELECT * FROM S WHERE A FILTER A[limit > 5]",
    "SELECT * FROM S WHERE A AS within",
])
def test_clause_order_label_only_for_clauses_out_of_order(text):
    """The E0100 clause-order label (commit 05f8472) is for a clause keyword where the
    grammar has no place for it; a reserved word used as a name is not a clause out of
    order, and the label sends the user the wrong way."""
    with pytest.raises(ceql.CeqlSyntaxError) as info:
        ceql.compile(text)
    assert "clauses come in this order" not in str(info.value)


# 9 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["Type", "TYPE", "_type"])
def test_missing_type_hint_names_a_dict_key_like_type(key):
    """Commit 95f143e: a missing type names the key that looks like it. An Arrow column
    `Type` gets the hint; the dict key `Type` (the likeliest mistake) does not."""
    q = ceql.compile("SELECT * FROM S WHERE A")
    with pytest.raises(ceql.CeqlEventError, match=f"it has `{key}`"):
        q.run(pa.table({key: ["A"]}))
    with pytest.raises(ceql.CeqlEventError, match=f"it has `{key}`"):
        q.run([{key: "A"}])


# 10 --------------------------------------------------------------------------------
@pytest.mark.spark
def test_spark_decimal_time_in_ns_with_more_than_26_fraction_digits_truncates(spark):
    """docs/spark.md: "a decimal is converted exactly, a fraction of a nanosecond truncated
    toward zero". _decimal_nanos floors the fraction of a decimal(38,30) to 26 digits, as
    decimal(28,26) (Spark's floor adds an integral digit); times decimal(10,0) for
    time_unit='ns' that is precision 39, which Spark cuts to decimal(38,25) rounding
    HALF_UP, so 0.999...9 (30 nines) ns becomes 1 ns. Both events are 0 ns once
    truncated, and the order field puts A first. NOT RUN in the review."""
    import ceql.spark as cs

    df = spark.createDataFrame(
        [(0, "A", decimal.Decimal("0." + "9" * 30), 1), (1, "B", decimal.Decimal("0"), 2)],
        "id long, type string, ts decimal(38,30), off long")
    out = cs.detect(df, "SELECT * FROM S WHERE A ; B", time_field="ts", order_field="off", time_unit="ns")
    assert sorted(tuple(e.id for e in r.events) for r in out.collect()) == [(0, 1)]


# 11 --------------------------------------------------------------------------------
