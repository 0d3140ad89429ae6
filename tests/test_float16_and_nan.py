"""Two input conventions (issue 15's verification, R11).

* Half floats: ``np.float16`` values in dicts are read as the doubles they
  stand for, but a float16 pandas or Arrow column was refused ("unsupported
  column type Float16"). Such columns are now cast to double, exactly, so every
  input path gives the answer of the dicts.
* NaN as a partition key: in dicts and in Arrow data a NaN is a double (Arrow
  tells NaN from null), and NaN keys of the same bits are equal (docs/language.md
  docs/language.md#s3-8). In a pandas frame NaN is pandas' missing value (``isna``, and
  ``groupby`` drops NaN keys by default): the event has no key, as with ``None``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ceql

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parent.parent
QUERY = "SELECT * FROM S WHERE A ; B FILTER A[x / 2 = 1.25 AND y > 0.09] PARTITION BY [k] WITHIN 5 EVENTS"


def _half_events():
    f16 = np.float16
    # k: 0.1 as a half float is 0.0999755859375, the same key for both events;
    # x = 2.5 and 1, y = 0.1 (0.0999755859375 > 0.09) are exact in half floats.
    return [
        {"type": "A", "k": f16(0.1), "x": f16(2.5), "y": f16(0.1)},
        {"type": "B", "k": f16(0.1), "x": f16(1), "y": f16(0.1)},
        {"type": "A", "k": f16(0.1), "x": f16(2), "y": f16(0.1)},  # x / 2 = 1: no match
        {"type": "B", "k": f16(-0.5), "x": f16(2.5), "y": f16(0.1)},  # another key
    ]


def _positions(matches):
    return sorted(tuple(m.positions) for m in matches)


def test_float16_columns_give_the_answer_of_the_dicts_on_every_path():
    q = ceql.compile(QUERY)
    dicts = _half_events()
    expected = _positions(q.run(dicts))
    assert expected == [(0, 1)]  # A@0 (2.5 / 2 = 1.25) ; B@1 with the same key
    frame = pd.DataFrame({c: ([e[c] for e in dicts]) for c in ("type", "k", "x", "y")})
    frame[["k", "x", "y"]] = frame[["k", "x", "y"]].astype(np.float16)
    assert (frame.dtypes[1:] == np.float16).all()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    assert table.schema.field("x").type == pa.float16()
    nested = table.append_column("v", pa.array([[1.5], [2.0], None, []], pa.list_(pa.float16())))
    answers = {
        "pandas": _positions(q.run(frame)),
        "table": _positions(q.run(table)),
        "batch": _positions(q.run(table.to_batches()[0])),
        "reader": _positions(q.run(table.to_reader())),
        "nested": _positions(q.run(nested)),
        "run_arrow": _positions_of_table(q.run_arrow(table)),
        "run_arrow pandas": _positions_of_table(q.run_arrow(frame)),
        "run_arrow_batches": _positions_of_table(q.run_arrow_batches(table.to_reader(), slice_rows=1).read_all()),
        "push_batch": _positions(q.stream().push_batch(table)),
        "push_batch pandas": _positions(q.stream().push_batch(frame)),
    }
    assert answers == {k: expected for k in answers}
    (match,) = q.run(table)
    assert [e["x"] for e in match.events] == [2.5, 1.0]
    assert q.run(nested)[0].events[0]["v"] == [1.5]


def _positions_of_table(table):
    return sorted(tuple(p) for p in table.column("positions").to_pylist())


NAN_QUERY = "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 5 EVENTS"


def test_a_nan_key_is_a_value_in_dicts_and_arrow_and_missing_in_pandas():
    q = ceql.compile(NAN_QUERY)
    nan = float("nan")
    events = [{"type": "A", "k": nan}, {"type": "B", "k": nan}, {"type": "A", "k": 1.0}, {"type": "B", "k": 1.0}]
    # docs/language.md#s3-8: doubles are compared by bit pattern, so the two NaNs are one key.
    assert _positions(q.run(events)) == [(0, 1), (2, 3)]
    table = pa.table({"type": ["A", "B", "A", "B"], "k": pa.array([nan, nan, 1.0, 1.0], pa.float64())})
    assert table.column("k").null_count == 0
    assert _positions(q.run(table)) == _positions_of_table(q.run_arrow(table)) == [(0, 1), (2, 3)]
    # pandas: NaN is the missing value; events 0 and 1 have no key (as with None).
    frame = pd.DataFrame(events)
    assert frame["k"].isna().tolist() == [True, True, False, False]
    as_none = [{"type": e["type"], "k": None if e["k"] != e["k"] else e["k"]} for e in events]
    assert _positions(q.run(as_none)) == [(2, 3)]
    assert _positions(q.run(frame)) == _positions_of_table(q.run_arrow(frame)) == [(2, 3)]
    assert _positions(q.run(frame.astype({"k": object}))) == [(2, 3)]
    stats = q.stream()
    stats.push_batch(frame)
    assert stats.stats()["no_key"] == 2


def test_the_docs_say_how_nan_is_read():
    readme = (ROOT / "README.md").read_text()
    bad = readme[readme.index("### Bad events"):readme.index("### Threads")]
    assert "NaN" in bad and "pandas" in bad
    language = (ROOT / "docs" / "language.md").read_text()
    partition = language[language.index("### 3.8"):language.index("### 3.9")]
    assert "NaN" in partition and "pandas" in partition


def test_a_float16_parquet_column_on_the_command_line(tmp_path):
    import json
    import subprocess
    import sys

    pq = pytest.importorskip("pyarrow.parquet")
    events = tmp_path / "e.parquet"
    pq.write_table(pa.table({"type": ["A", "B"], "x": pa.array(np.array([2.5, 1], np.float16))}), events)
    query = tmp_path / "q.ceql"
    query.write_text("SELECT * FROM S WHERE A ; B FILTER A[x / 2 = 1.25] WITHIN 5 EVENTS")
    proc = subprocess.run([sys.executable, "-m", "ceql.cli", "run", "--query", str(query), "--input", str(events),
                           "--output", "-"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert json.loads(line)["events"] == [{"type": "A", "x": 2.5}, {"type": "B", "x": 1.0}]
