"""The Python API contract: inputs, Match objects, Stream, snapshots, event errors,
time fields, cache budget."""

from __future__ import annotations

import datetime as dt

import pytest

import ceql
from conftest import as_triples

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

SEQ = "SELECT * FROM S WHERE A ; B+ ; C WITHIN 10 EVENTS"
EVENTS = [{"type": t, "v": i} for i, t in enumerate("ABXBCAC")]
EXPECTED = [(0, 4, (0, 1, 3, 4)), (0, 4, (0, 1, 4)), (0, 4, (0, 3, 4)),
            (0, 6, (0, 1, 3, 6)), (0, 6, (0, 1, 6)), (0, 6, (0, 3, 6))]


def test_run_on_every_input_kind_gives_the_same_matches():
    q = ceql.compile(SEQ)
    table = pa.Table.from_pylist(EVENTS)
    inputs = [EVENTS, tuple(EVENTS), iter(EVENTS), (e for e in EVENTS), pd.DataFrame(EVENTS), table,
              table.to_batches()[0], pa.Table.from_pylist(EVENTS).cast(
                  pa.schema([("type", pa.dictionary(pa.int8(), pa.string())), ("v", pa.int32())]))]
    for data in inputs:
        assert sorted(as_triples(q.run(data))) == sorted(EXPECTED), type(data)


def test_match_fields_and_events():
    q = ceql.compile(SEQ)
    for data in (EVENTS, pd.DataFrame(EVENTS), pa.Table.from_pylist(EVENTS), iter(EVENTS)):
        ms = q.run(data)
        m = next(m for m in ms if m.positions == (0, 1, 3, 4))
        assert (m.start, m.end) == (0, 4)
        assert isinstance(m.positions, tuple) and all(isinstance(p, int) for p in m.positions)
        assert [e["v"] for e in m.events] == [0, 1, 3, 4]
        assert [e["type"] for e in m.events] == ["A", "B", "B", "C"]
        assert [x.end for x in ms] == sorted(x.end for x in ms)
    assert ms[0] == ceql.Match(ms[0].start, ms[0].end, list(ms[0].positions))
    assert "Match(start=0, end=4" in repr(ms[0])
    assert len({*ms}) == len(ms)


def test_stream_push_push_many_and_batches_agree_with_run():
    q = ceql.compile(SEQ)
    s = q.stream()
    got = []
    for e in EVENTS[:3]:
        got += s.push(e)
    got += s.push_many(EVENTS[3:5])
    got += s.push_batch(pa.Table.from_pylist(EVENTS[5:]))
    assert as_triples(got) == as_triples(q.run(EVENTS))
    assert s.position == len(EVENTS)
    assert [e["v"] for e in got[-1].events] == list(got[-1].positions)


def test_snapshot_restore_continues_exactly():
    q = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C PARTITION BY [k] WITHIN 6 EVENTS")
    events = [{"type": "ABC"[i % 3] if i % 5 else "B", "k": i % 2, "v": i} for i in range(40)]
    whole = as_triples(q.run(events))
    for cut in (0, 1, 7, 20, 39, 40):
        s = q.stream()
        first = s.push_many(events[:cut])
        data = s.snapshot()
        assert isinstance(data, bytes)
        restored = ceql.Stream.restore(q, data)
        rest = restored.push_many(events[cut:])
        assert as_triples(first + rest) == whole, cut
        # Event data of matches that started before the snapshot is still there.
        for m in rest:
            assert [e["v"] for e in m.events] == list(m.positions)
    other = ceql.compile("SELECT * FROM S WHERE A ; C")
    with pytest.raises(ceql.CeqlSnapshotError):
        ceql.Stream.restore(other, data)
    with pytest.raises(ceql.CeqlSnapshotError):
        ceql.Stream.restore(q, b"garbage")


def test_a_snapshot_of_another_format_version_is_refused():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 10 EVENTS")
    s = q.stream()
    s.push({"type": "A"})
    data = bytearray(s.snapshot())
    at = data.find(b"CEQLSNAP")
    assert at >= 0
    # Two versions before the current one (the one before, 9, is read too: it is 10
    # without the measures of matches waiting for a deadline).
    version = int.from_bytes(data[at + 8 : at + 12], "little") - 1
    data[at + 8 : at + 12] = (version - 1).to_bytes(4, "little")
    # An intact snapshot of that version: its checksum covers the changed bytes.
    import zlib

    data[-4:] = zlib.crc32(bytes(data[:-4])).to_bytes(4, "little")
    with pytest.raises(ceql.CeqlSnapshotError, match=f"format version {version - 1} is not supported"):
        ceql.Stream.restore(q, bytes(data))


def test_event_errors_name_position_and_field():
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[price > 26.0]")
    with pytest.raises(ceql.CeqlEventError) as info:
        q.run([{"type": "A", "price": 30.0}, {"v": 1}])
    assert (info.value.position, info.value.field) == (1, "type")
    with pytest.raises(ceql.CeqlEventError) as info:
        q.run([{"type": "B"}, {"type": "A", "price": "27"}])
    e = info.value
    assert (e.position, e.field, e.event_type) == (1, "price", "A")
    assert "string" in str(e) and "position 1" in str(e)
    assert isinstance(e, TypeError) and isinstance(e, ceql.CeqlError)
    # A declared type is checked on ingestion.
    qd = ceql.compile("SELECT * FROM S WHERE A", "CREATE STREAM S { EVENT A { n:int } }")
    with pytest.raises(ceql.CeqlEventError) as info:
        qd.run([{"type": "A", "n": 1.5}])
    assert info.value.field == "n"


def test_event_errors_name_the_wrongly_typed_field_not_its_neighbour():
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[v + s > 1 OR 2 < w]")
    for events in ([{"type": "A", "v": None, "s": "a"}], pa.table({"type": ["A"], "v": pa.array([None], pa.int64()), "s": ["a"]})):
        with pytest.raises(ceql.CeqlEventError) as info:
            q.run(events)
        assert info.value.field == "s"
    with pytest.raises(ceql.CeqlEventError) as info:
        q.run([{"type": "A", "v": 1, "s": 2, "w": "x"}])
    assert info.value.field == "w"


def test_a_rejected_event_does_not_consume_a_position():
    q = ceql.compile("SELECT * FROM S WHERE A ; B FILTER A[v > 1]")
    s = q.stream()
    s.push({"type": "A", "v": 5})
    with pytest.raises(ceql.CeqlEventError):
        s.push({"type": "A", "v": "x"})
    assert s.position == 1
    assert as_triples(s.push({"type": "B"})) == [(0, 1, (0, 1))]


def test_time_field_units_and_time_going_backwards():
    q = ceql.compile("SELECT * FROM S WHERE A ; B WITHIN 2 seconds")
    ev = lambda t, ts: {"type": t, "ts": ts}  # noqa: E731
    assert as_triples(q.run([ev("A", 0), ev("B", 2), ev("B", 3)], time_field="ts", time_unit="s")) == [(0, 1, (0, 1))]
    assert as_triples(q.run([ev("A", 0), ev("B", 2000), ev("B", 2001)], time_field="ts", time_unit="ms")) == [(0, 1, (0, 1))]
    base = dt.datetime(2024, 1, 1, 12, 0, 0)
    stamps = [base, base + dt.timedelta(seconds=2), base + dt.timedelta(seconds=2, microseconds=1)]
    assert as_triples(q.run([ev(t, s) for t, s in zip("ABB", stamps)], time_field="ts")) == [(0, 1, (0, 1))]
    frame = pd.DataFrame({"type": list("ABB"), "ts": pd.to_datetime(stamps)})
    assert as_triples(q.run(frame, time_field="ts")) == [(0, 1, (0, 1))]
    with pytest.raises(ceql.CeqlEventError) as info:
        q.run([ev("A", 5), ev("B", 3)], time_field="ts")
    assert (info.value.position, info.value.field) == (1, "ts")
    assert "backwards" in str(info.value)
    assert as_triples(q.run([ev("A", 5), ev("B", 3), ev("B", 6)], time_field="ts", late="drop")) == [(0, 2, (0, 2))]
    with pytest.raises(ceql.CeqlEventError):
        q.run([{"type": "A"}], time_field="ts")
    # With late="drop", an event without time stamp is dropped like a late one (docs/language.md#s3-7).
    assert as_triples(q.run([ev("A", 0), {"type": "B"}, ev("B", 1)], time_field="ts", late="drop")) == [(0, 2, (0, 2))]
    with pytest.raises(ValueError):
        q.run([], time_field="ts", time_unit="minutes")


def test_events_of_streams_outside_from_keep_their_positions():
    q = ceql.compile("SELECT * FROM S1 WHERE A ; B")
    events = [{"type": "A", "stream": "S1"}, {"type": "B", "stream": "S9"}, {"type": "B", "stream": "S1"}]
    assert as_triples(q.run(events)) == [(0, 2, (0, 2))]


def test_exploding_determinization_stays_within_budget():
    # "an A, later an A followed by exactly 12 events": without marks to tell runs
    # apart (SELECT NONE), one run tracks which of the last 12 events were A: up
    # to 2^12 det-states.
    n = 12
    text = "SELECT NONE FROM S WHERE A ; A" + " : (A OR B)" * n + " WITHIN 40 EVENTS"
    q = ceql.compile(text)
    import random

    rng = random.Random(3)
    events = [{"type": rng.choice("AB")} for _ in range(3000)]
    unbounded = q.stream()
    ref = as_triples(unbounded.push_many(events))
    small = q.stream(max_cache_bytes=64 * 1024, max_det_states=64)
    got = as_triples(small.push_many(events))
    assert got == ref and len(ref) > 0
    st = small.stats()
    assert st["cache_clears"] > 0
    assert st["cache_bytes"] < 1 << 20


def test_describe_and_statistics():
    q = ceql.compile(SEQ)
    d = q.describe()
    assert d["states"] >= 4 and d["transitions"] > 0 and d["event_types"] == ["A", "B", "C"]
    s = q.stream()
    s.push_many(EVENTS)
    st = s.stats()
    assert st["events"] == 7 and st["matches"] == 6 and st["cache_mode"] == "cached"
    assert st["cache_misses"] > 0 and st["det_states"] > 1


@pytest.mark.parametrize(
    "clauses, expected",
    [
        # docs/language.md#s3-9: PARTITION BY evaluates each key's substream apart ...
        ("PARTITION BY [k] WITHIN 5 seconds", True),
        ("PARTITION BY [k] WITHIN 3 [ts]", True),
        ("PARTITION BY [k] CONSUME BY PARTITION", True),
        ("PARTITION BY [k]", True),
        # ... except where docs/language.md#s3-7 counts positions of the whole stream,
        ("PARTITION BY [k] WITHIN 5 EVENTS", False),
        # or docs/language.md#s3-10 lets one key's match reset every partition;
        ("PARTITION BY [k] CONSUME BY ANY", False),
        # without PARTITION BY there is one substream, nothing to split.
        ("WITHIN 5 seconds", False),
    ],
)
def test_describe_states_whether_the_query_splits_by_key(clauses, expected):
    assert ceql.compile(f"SELECT * FROM S WHERE A ; B {clauses}").describe()["key_independent"] is expected


def test_internal_errors_are_exceptions_not_crashes():
    assert issubclass(ceql.CeqlInternalError, ceql.CeqlError)
    assert issubclass(ceql.CeqlInternalError, Exception)


def test_run_arrow_matches_run_and_join_events():
    q = ceql.compile(SEQ)
    table = pa.Table.from_pylist(EVENTS)
    m = q.run_arrow(table)
    assert m.column_names == ["match_id", "start", "end", "positions"]
    rows = [(r["start"], r["end"], tuple(r["positions"])) for r in m.to_pylist()]
    assert rows == as_triples(q.run(table))
    assert m.column("match_id").to_pylist() == list(range(len(rows)))
    joined = ceql.join_events(m, table)
    assert joined.num_rows == sum(len(p) for _, _, p in rows)
    # The order of matches ending at one position is unspecified: pick the longest.
    longest = max(range(len(rows)), key=lambda i: len(rows[i][2]))
    first = joined.filter(pa.compute.equal(joined.column("match_id"), longest)).to_pylist()
    assert [r["index"] for r in first] == [0, 1, 2, 3]
    assert [r["v"] for r in first] == list(rows[longest][2])
    assert [r["type"] for r in first] == ["A", "B", "B", "C"]
    # pandas and dict inputs go through Arrow too.
    assert q.run_arrow(pd.DataFrame(EVENTS)).num_rows == len(rows)
    assert q.run_arrow(EVENTS).num_rows == len(rows)
    assert q.run_arrow(pa.table({"type": pa.array([], pa.string())})).num_rows == 0


class _CStreamOnly:
    """Exposes only the Arrow PyCapsule stream interface (as polars and others do)."""

    def __init__(self, table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


def test_any_arrow_c_stream_producer_is_accepted():
    q = ceql.compile(SEQ)
    table = pa.Table.from_pylist(EVENTS)
    assert as_triples(q.run(_CStreamOnly(table))) == as_triples(q.run(EVENTS))
    s = q.stream()
    got = s.push_batch(_CStreamOnly(table))
    assert as_triples(got) == as_triples(q.run(EVENTS))
    assert [e["v"] for e in got[0].events] == list(got[0].positions)


def test_matches_of_one_shot_and_foreign_arrow_inputs_read_their_events_back():
    """Match.events works whatever Arrow object the rows came in: a one-shot
    RecordBatchReader (through run and a stream) and a producer that only has
    __arrow_c_stream__."""
    q = ceql.compile(SEQ)
    table = pa.Table.from_pylist(EVENTS)
    want = {(m.start, m.end, tuple(m.positions)): m.events for m in q.run(EVENTS)}

    def reader():
        return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=3))

    for got in (q.run(reader()), q.run(_CStreamOnly(table)), q.stream().push_batch(reader())):
        assert {(m.start, m.end, tuple(m.positions)): m.events for m in got} == want


def test_join_events_reads_string_views_and_foreign_producers():
    """join_events gathers rows of string-view columns (which pyarrow cannot
    `take`) and of producers that only have __arrow_c_stream__."""
    q = ceql.compile(SEQ)
    table = pa.Table.from_pylist([{**e, "s": f"s{e['v']}"} for e in EVENTS])
    want = ceql.join_events(q.run_arrow(table), table)
    views = table.cast(pa.schema([pa.field("type", pa.string_view()), pa.field("v", pa.int64()),
                                  pa.field("s", pa.string_view())]))
    for events in (views, _CStreamOnly(views)):
        got = ceql.join_events(q.run_arrow(events), events)
        assert got.to_pylist() == want.to_pylist()
        assert got.schema.field("s").type == pa.large_string()


def test_polars_dataframe():
    """A polars DataFrame goes in through the Arrow PyCapsule interface: through
    run, run_arrow and a stream, with `type` as a string or a categorical (a
    dictionary-encoded column) and with a timestamp column for the window."""
    pl = pytest.importorskip("polars")
    q = ceql.compile(SEQ)
    frame = pl.DataFrame(EVENTS)
    assert sorted(as_triples(q.run(frame))) == sorted(EXPECTED)
    table = q.run_arrow(frame)
    assert sorted((r["start"], r["end"], tuple(r["positions"])) for r in table.to_pylist()) == sorted(EXPECTED)
    categorical = frame.with_columns(pl.col("type").cast(pl.Categorical))
    assert sorted(as_triples(q.run(categorical))) == sorted(EXPECTED)
    s = q.stream()
    got = s.push_batch(frame.head(5)) + s.push_batch(frame.tail(2))
    assert sorted(as_triples(got)) == sorted(EXPECTED)
    assert [m.events for m in q.run(frame)] == [m.events for m in q.run(EVENTS)]
    assert [m.events for m in got] == [[EVENTS[p] for p in m.positions] for m in got]
    joined = ceql.join_events(table, frame)
    assert joined.to_pylist() == ceql.join_events(table, pa.Table.from_pylist(EVENTS)).to_pylist()
    timed = frame.with_columns(ts=pl.datetime(2026, 1, 1) + pl.duration(seconds=pl.col("v") * 10))
    within = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C WITHIN 45 seconds")
    assert sorted(as_triples(within.run(timed, time_field="ts"))) == sorted(m for m in EXPECTED if m[1] == 4)


def test_strategies_with_a_trailing_not():
    """The final state is entered by a non-marking transition: NEXT/LAST select by
    the first final state in preference order (docs/language.md#s5-5, (C3)). Expected sets
    come from the brute-force oracle."""
    from oracle import evaluate

    events = [{"type": t} for t in "AAXBXA"]
    for strategy in ("ALL", "NEXT", "LAST", "MAX", "STRICT"):
        text = f"SELECT {strategy} * FROM S WHERE A ; NOT(B) WITHIN 9 EVENTS"
        want = sorted((st, e, p) for e, ces in evaluate(text, events).outputs.items() for st, p in ces)
        got = as_triples(ceql.compile(text).run(events))
        assert sorted(got) == want, strategy
        if strategy in ("NEXT", "LAST"):
            assert len({e for _, e, _ in got}) == len(got), "one complex event per end position"


def test_an_output_too_large_for_memory_is_an_exception_not_a_crash():
    """2^40 complex events cannot be stored: the engine reports it instead of
    aborting the interpreter (run in a subprocess with a 3 GB address-space limit)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        import ceql
        q = ceql.compile("SELECT * FROM S WHERE A ; B+ ; C")
        events = [{"type": "A"}] + [{"type": "B"}] * 40 + [{"type": "C"}]
        try:
            q.run_arrow(events)
        except ceql.CeqlMemoryError as e:
            assert isinstance(e, MemoryError) and e.position == 41
            s = q.stream()
            s.push_many(events[:-1])  # the stream still works for other events
            print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


@pytest.mark.parametrize("bad", [-1, 0, 2**64, 1.5, "10", True])
def test_cache_budgets_must_be_positive_integers(bad):
    """A negative budget was a raw OverflowError from the binding."""
    q = ceql.compile(SEQ)
    calls = [q.run, q.run_arrow, q.run_arrow_batches, lambda events, **kw: q.stream(**kw).push_many(events)]
    for name in ("max_cache_bytes", "max_det_states"):
        for call in calls:
            with pytest.raises(ValueError, match=f"{name} must be None or a positive integer") as err:
                call(EVENTS, **{name: bad})
            assert not isinstance(err.value, OverflowError)
    np = pytest.importorskip("numpy")
    for good in (np.int64(1 << 20), 2**64 - 1):
        assert sorted(as_triples(q.run(EVENTS, max_cache_bytes=good, max_det_states=good))) == sorted(EXPECTED)


def test_every_public_member_of_the_api_classes_has_its_own_docstring():
    """help() and docs/api.md show these: a getter without one showed nothing, and
    Match.deadline showed Match.start's sentence ("First position of the interval")."""
    import inspect

    missing = []
    for name in dir(ceql):
        cls = getattr(ceql, name)
        if not inspect.isclass(cls) or name.startswith("_") or issubclass(cls, BaseException) or cls is ceql.CeqlWarning:
            continue
        for member in dir(cls):
            value = getattr(cls, member, None)
            if member.startswith("_") or value is None:
                continue
            doc = getattr(value, "__doc__", None)
            if not doc or doc == type(value).__doc__:
                missing.append(f"{name}.{member}")
    assert missing == []
    assert ceql.Match.start.__doc__.startswith("First position of the interval")
    assert "ABSENT" in ceql.Match.deadline.__doc__ and "First position" not in ceql.Match.deadline.__doc__
