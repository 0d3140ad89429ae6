"""Every input path gives the answer of a list of dicts (issue 15, item 9).

The same generated events go through ``run`` (list, iterator), ``run_arrow`` and
``run_arrow_batches`` (on the dicts themselves, and on Arrow, pandas and polars
forms of them), and a ``Stream`` fed by ``push``, ``push_many`` and
``push_batch`` in random chunks with a snapshot/restore in between. Every path
must give the same complex events, or the same ``CeqlEventError`` (position and
field) with the same complex events before it where the path reports them.

Values cover Python int/float/str/bool/None, missing keys and numpy scalars;
columns are sometimes of one kind and sometimes mixed. The reference is the list
of dicts, whose semantics the reference specification fixes (docs/language.md#s1-1: a value's own
Python type; docs/language.md#s3-8: ``int 1`` and ``double 1.0`` are different keys). NaN is not
generated: pandas reads it as a missing value by design.

The tabular forms are built here without ceql's own conversion: an Arrow column
is made only when every value of it has one kind (ints as int64, floats as
float64, ...), a pandas frame keeps the Python objects (object columns).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import ceql

pl = pytest.importorskip("polars")

EXAMPLES = int(os.environ.get("CEQL_PATHS_EXAMPLES", "150"))

QUERIES = [
    # int / int truncates, a float divides (docs/language.md#s3-4): a float column must stay float, an int column int
    "SELECT * FROM S WHERE A ; B FILTER A[x / 2 = 1] WITHIN 4 EVENTS",
    # keys are equal only with equal types (docs/language.md#s3-8)
    "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 4 EVENTS",
    "SELECT * FROM S WHERE A ; B+ PARTITION BY [x] WITHIN 3 EVENTS",
    # booleans are not numbers; comparing them with one is a data error on both paths
    "SELECT * FROM S WHERE A ; B FILTER B[s = TRUE] WITHIN 3 EVENTS",
    "SELECT * FROM S WHERE (A OR B) AS y ; C FILTER y[x >= 1 AND NOT k = 'a'] WITHIN 5 EVENTS",
    "SELECT * FROM S WHERE A ; B FILTER A[k * 2 > 2.5] AND B[s != 'a'] WITHIN 4 EVENTS",
]

KINDS = {
    "int": st.one_of(st.integers(-3, 3), st.sampled_from([2**62, -(2**63)])),
    "float": st.sampled_from([1.0, 2.0, 2.5, -0.0, 0.5, 3.0, 1e300]),
    "str": st.sampled_from(["a", "b", "1", ""]),
    "bool": st.booleans(),
    "np_int": st.sampled_from([np.int64(1), np.int8(2), np.uint32(3), np.int16(-2), np.uint64(2)]),
    "np_float": st.sampled_from([np.float32(2.5), np.float16(2.5), np.float64(1.0), np.float16(4.0)]),
    "np_bool": st.sampled_from([np.bool_(True), np.bool_(False)]),
    "np_str": st.sampled_from([np.str_("a"), np.str_("b")]),
}
ANY_VALUE = st.one_of(*KINDS.values())
MISSING = "<missing>"
ATTRS = ("x", "k", "s")


@st.composite
def event_lists(draw):
    """Events whose attribute columns are each of one kind or mixed, with NULLs
    and missing keys."""
    profile = {a: draw(st.sampled_from(["mixed"] + list(KINDS)), label=f"{a} column") for a in ATTRS}
    n = draw(st.integers(0, 14), label="events")
    events = []
    for _ in range(n):
        e = {"type": draw(st.sampled_from("ABCX"))}
        for a in ATTRS:
            values = ANY_VALUE if profile[a] == "mixed" else KINDS[profile[a]]
            v = draw(st.one_of(values, values, st.none(), st.just(MISSING)))
            if v is not MISSING:
                e[a] = v
        events.append(e)
    return events


# -- the tabular forms, built independently ---------------------------------------------

def _kind(v):
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    return "str"


_ARROW = {"bool": (pa.bool_(), bool), "int": (pa.int64(), int), "float": (pa.float64(), float), "str": (pa.string(), str)}


def arrow_table(events):
    """The events as a pyarrow Table if every column has values of one kind, else None."""
    names = list(dict.fromkeys(k for e in events for k in e))
    if not names:
        return None
    columns = {}
    for name in names:
        values = [e.get(name) for e in events]
        kinds = {_kind(v) for v in values} - {None}
        if len(kinds) > 1:
            return None
        if not kinds:
            columns[name] = pa.nulls(len(values))
            continue
        typ, py = _ARROW[kinds.pop()]
        columns[name] = pa.array([None if v is None else py(v) for v in values], typ)
    return pa.table(columns)


def object_frame(events):
    """The events as a pandas DataFrame of object columns holding the values as given."""
    names = list(dict.fromkeys(k for e in events for k in e)) or ["type"]
    return pd.DataFrame({n: pd.Series([e.get(n) for e in events], dtype=object) for n in names},
                        index=range(len(events)))


# -- outcomes ------------------------------------------------------------------------------

def _triples(matches):
    return tuple(sorted((m.start, m.end, tuple(m.positions)) for m in matches))


def _table_triples(table):
    return tuple(sorted((r["start"], r["end"], tuple(r["positions"])) for r in table.to_pylist()))


def outcome(call, triples=_triples):
    """("ok", triples) or ("error", position, field, triples of the matches before it)."""
    try:
        return ("ok", triples(call()))
    except ceql.CeqlEventError as e:
        return ("error", e.position, e.field, _triples(e.matches))


def _no_matches(out):
    """An outcome without the matches before an error (paths that do not report them)."""
    return out[:3] if out[0] == "error" else out


def stream_outcome(q, events, table, frame, data):
    """The events pushed into a stream in random chunks and ways, with a snapshot
    restored into a fresh stream at a random point."""
    s = q.stream()
    cut = data.draw(st.integers(0, len(events)), label="snapshot at")
    got = []
    i = 0
    try:
        while i < len(events):
            if i == cut:
                s = ceql.Stream.restore(q, s.snapshot())
            end = cut if i < cut else len(events)  # chunks do not straddle the snapshot
            size = data.draw(st.integers(1, end - i), label="chunk")
            ways = ["push", "push_many", "iter", "pandas"] + (["arrow", "polars"] if table is not None else [])
            how = data.draw(st.sampled_from(ways), label="how")
            chunk = events[i:i + size]
            if how == "push":
                for e in chunk:
                    got += s.push(e)
            elif how == "push_many":
                got += s.push_many(chunk)
            elif how == "iter":
                got += s.push_many(iter(chunk))
            elif how == "pandas":
                got += s.push_batch(frame.iloc[i:i + size])
            elif how == "arrow":
                got += s.push_batch(table.slice(i, size))
            else:
                got += s.push_many(pl.from_arrow(table.slice(i, size)))
            i += size
        return ("ok", _triples(got))
    except ceql.CeqlEventError as e:
        return ("error", e.position, e.field, _triples(got + e.matches))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=st.sampled_from(QUERIES), events=event_lists(), data=st.data())
def test_every_input_path_gives_the_answer_of_the_dicts(text, events, data):
    note(repr(events))
    q = ceql.compile(text)
    want = outcome(lambda: q.run(events))
    table = arrow_table(events)
    frame = object_frame(events)
    slice_rows = data.draw(st.integers(1, 5), label="slice_rows")

    def batches(x):
        return pa.Table.from_batches(list(q.run_arrow_batches(x, slice_rows=slice_rows)),
                                     schema=q.run_arrow([]).schema)

    paths = {
        "run(iter)": outcome(lambda: q.run(iter(events))),
        "run(pandas)": outcome(lambda: q.run(frame)),
        "run_arrow(dicts)": _no_matches(outcome(lambda: q.run_arrow(events), _table_triples)),
        "run_arrow(pandas)": _no_matches(outcome(lambda: q.run_arrow(frame), _table_triples)),
        "run_arrow_batches(dicts)": _no_matches(outcome(lambda: batches(events), _table_triples)),
        "run_arrow_batches(pandas)": _no_matches(outcome(lambda: batches(frame), _table_triples)),
        "stream": stream_outcome(q, events, table, frame, data),
    }
    if table is not None:
        polars = pl.from_arrow(table)
        paths.update({
            "run(arrow)": outcome(lambda: q.run(table)),
            "run(polars)": outcome(lambda: q.run(polars)),
            "run_arrow(arrow)": _no_matches(outcome(lambda: q.run_arrow(table), _table_triples)),
            "run_arrow(polars)": _no_matches(outcome(lambda: q.run_arrow(polars), _table_triples)),
            "run_arrow_batches(arrow)": _no_matches(outcome(lambda: batches(table), _table_triples)),
        })
    for name, got in paths.items():
        expected = want if got[0] == "ok" or len(got) == 4 else _no_matches(want)
        assert got == expected, f"{name}: {got} != dicts: {want}"


# -- cases found by hand (issue 15) ---------------------------------------------------------

def _every_path(q, events):
    """Outcomes of the paths that take the events as dicts or as a pandas frame."""
    frame = object_frame(events)
    s = q.stream()
    return {
        "run": outcome(lambda: q.run(events)),
        "run(pandas)": outcome(lambda: q.run(frame)),
        "run_arrow": outcome(lambda: q.run_arrow(events), _table_triples),
        "run_arrow_batches": outcome(lambda: q.run_arrow_batches(events).read_all(), _table_triples),
        "run_arrow(pandas)": outcome(lambda: q.run_arrow(frame), _table_triples),
        "stream.push": outcome(lambda: [m for e in events for m in s.push(e)]),
        "stream.push_batch(pandas)": outcome(lambda: q.stream().push_batch(frame)),
    }


@pytest.mark.parametrize("events, want", [
    # int / int truncates: 3 / 2 = 1; 3.0 / 2 = 1.5 (pyarrow made the column double)
    ([{"type": "A", "x": 3}, {"type": "A", "x": 2.5}, {"type": "B"}], ((0, 2, (0, 2)),)),
    ([{"type": "A", "x": np.int8(3)}, {"type": "A", "x": 3.0}, {"type": "B"}], ((0, 2, (0, 2)),)),
])
def test_mixed_int_and_float_columns_keep_integer_division(events, want):
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[x / 2 = 1] WITHIN 4 EVENTS")
    assert set(_every_path(q, events).values()) == {("ok", want)}


def test_keys_1_and_1_0_are_different_partitions_on_every_path():
    q = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 4 EVENTS")
    events = [{"type": "A", "k": 1}, {"type": "B", "k": 1.0}, {"type": "B", "k": 1}]
    assert set(_every_path(q, events).values()) == {("ok", ((0, 2, (0, 2)),))}


def test_numpy_float16_and_bool_keep_their_value_and_type_on_every_path():
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[x = 2.5] AND B[f = TRUE] WITHIN 4 EVENTS")
    events = [{"type": "A", "x": 1, "f": 0}, {"type": "A", "x": np.float16(2.5)}, {"type": "B", "f": np.True_}]
    assert set(_every_path(q, events).values()) == {("ok", ((1, 2, (1, 2)),))}
    ints = [{"type": "A", "x": 2.5}, {"type": "B", "f": 1}, {"type": "B", "f": np.True_}]
    # f = TRUE on an int is a data error at the first B, whichever path
    assert set(map(_no_matches, _every_path(q, ints).values())) == {("error", 1, "f")}


def test_a_null_key_attribute_counts_as_absent_on_every_path():
    """PARTITION BY [w, s]: an event without `w` is keyed by `s`. Among dicts the
    key is missing; in Arrow the column exists (another event has `w`) and is
    NULL there. Without a declared schema a NULL key attribute counts as absent
    (engine change of 8cda65e), so every path gives the match of the dicts."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [w, s]")
    events = [{"type": "A", "s": "k"}, {"type": "B", "s": "k"}, {"type": "X", "w": 1}]
    table = pa.table({"type": ["A", "B", "X"], "s": ["k", "k", None], "w": pa.array([None, None, 1], pa.int64())})
    outcomes = dict(_every_path(q, events))
    outcomes["run(arrow)"] = outcome(lambda: q.run(table))
    outcomes["run_arrow(arrow)"] = outcome(lambda: q.run_arrow(table), _table_triples)
    outcomes["push_batch(arrow)"] = outcome(lambda: q.stream().push_batch(table))
    assert outcomes["run"] == ("ok", ((0, 1, (0, 1)),))
    assert {k: v for k, v in outcomes.items() if v != outcomes["run"]} == {}


def test_a_stream_field_missing_in_every_event_names_no_stream_on_every_path():
    """As dicts, ``stream: None`` is an event without a stream; as a table the same
    events made a column of Arrow's null type (pandas: all-NaN floats), which was
    refused as "not a string column". By hand: A then B, one match (0, 1)."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B")
    events = [{"type": "A", "stream": None}, {"type": "B"}]
    want = [(0, 1, (0, 1))]
    for data in (events, pa.Table.from_pylist(events), pd.DataFrame(events)):
        assert [(m.start, m.end, m.positions) for m in q.run(data)] == want
    assert q.run_arrow(events).column("positions").to_pylist() == [[0, 1]]
    assert [(m.start, m.end, m.positions) for m in q.stream().push_many(pa.Table.from_pylist(events))] == want
    with pytest.raises(ceql.CeqlEventError, match="`stream` must be a string column"):
        q.run(pa.table({"type": ["A", "B"], "stream": pa.array([1, None])}))


def test_dictionary_encoded_numbers_read_as_their_values_on_every_path():
    """A pandas Categorical of ints (an Arrow dictionary of int64) was refused as a
    column type the engine does not read; the same values as plain ints matched. By
    hand: keys 1 and 2, A then B in each: matches (0, 2) and (1, 3)."""
    q = ceql.compile("SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 5 EVENTS")
    frame = pd.DataFrame({"type": ["A", "A", "B", "B"], "k": pd.Categorical([1, 2, 1, 2])})
    table = pa.Table.from_pandas(frame, preserve_index=False)
    assert pa.types.is_dictionary(table.schema.field("k").type)
    want = [(0, 2), (1, 3)]
    for data in (frame, table):
        assert [m.positions for m in q.run(data)] == want
        assert q.run_arrow(data).column("positions").to_pylist() == [list(p) for p in want]
        assert [m.positions for m in q.stream().push_many(data)] == want
    assert q.run(table)[0].events == [{"type": "A", "k": 1}, {"type": "B", "k": 1}]
