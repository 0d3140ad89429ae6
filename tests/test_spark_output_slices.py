"""A task's output is built and handed to Spark slice by slice (docs/spark.md,
"Output in slices"): one event can complete millions of complex events (``HOT ;
WARM+`` completes 2^k at the k-th WARM), and building all their rows at once
(an ``events`` struct per event of each) made a Python worker grow past the
machine's memory and be killed, where the engine alone needed a fraction of it."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

pytest_plugins = ["spark_support"]


def found_batch(lengths):
    """An engine output batch: complex event i has ``lengths[i]`` positions."""
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = pa.array(np.arange(offsets[-1], dtype=np.uint64))
    positions = pa.LargeListArray.from_arrays(pa.array(offsets), values)
    n = len(lengths)
    return pa.record_batch({"start": pa.array(np.arange(n, dtype=np.uint64)),
                            "end": pa.array(np.arange(n, dtype=np.uint64) + 1), "positions": positions})


@pytest.mark.parametrize("lengths, most_matches, most_events", [
    ([1] * 10, 3, 100),  # cut by matches
    ([4, 4, 4, 4, 4], 100, 9),  # cut by events: two per slice
    ([2, 50, 1, 1, 30, 2], 100, 10),  # a longer match is a slice of its own
    ([3] * 7, 7, 21),  # exactly at both bounds: one slice, the batch itself
])
def test_slices_cover_the_batch_in_order_within_the_bounds(lengths, most_matches, most_events):
    from ceql.spark._output import output_slices

    found = found_batch(lengths)
    slices = list(output_slices(found, most_matches, most_events))
    assert pa.Table.from_batches(slices).to_pylist() == pa.Table.from_batches([found]).to_pylist()
    for s in slices:
        sizes = [len(p) for p in s.column("positions").to_pylist()]
        assert s.num_rows <= most_matches
        assert sum(sizes) <= most_events or s.num_rows == 1
        # Compact: the positions' child array is the slice's own (OutputLayout.matches reads it).
        pos = s.column("positions")
        assert pos.offsets[0].as_py() == 0 and len(pos.values) == sum(sizes)
    if len(lengths) <= most_matches and sum(lengths) <= most_events:
        assert slices == [found]


def test_nothing_gives_no_slice():
    from ceql.spark._output import output_slices

    assert list(output_slices(None)) == []
    assert list(output_slices(found_batch([]))) == []


@pytest.mark.spark
def test_one_event_completing_more_matches_than_a_slice(spark):
    """The last WARM completes 2^17 complex events (two slices of 2^16), one input
    batch 2^18 - 1: Spark's answer is the single-process engine's, row for row."""
    import ceql
    import ceql.spark as cs
    from ceql.spark._output import SLICE_MATCHES
    from pyspark.sql import functions as F

    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    types = ["HOT"] + ["WARM"] * 18
    rows = [{"type": ty, "ts": t0 + dt.timedelta(seconds=i), "offset": i, "sensor": 1, "temp": float(i)}
            for i, ty in enumerate(types)]
    query = "SELECT * FROM S WHERE HOT ; WARM+ PARTITION BY [sensor] WITHIN 1 minute"
    local = ceql.compile(query).run_arrow(pa.Table.from_pylist(rows), time_field="ts")
    last = pa.compute.sum(pa.compute.equal(local.column("end"), len(rows) - 1)).as_py()
    assert last > SLICE_MATCHES, "the last event must complete more than a slice"
    df = spark.createDataFrame(rows, "type string, ts timestamp, offset long, sensor long, temp double")
    out = cs.detect(df, query, time_field="ts", order_field="offset")
    got = out.select(F.count("*").alias("n"), F.countDistinct("match_id").alias("ids"),
                     F.sum(F.size("events")).alias("events"),
                     F.sum(F.aggregate(F.transform("events", lambda e: e["offset"]), F.lit(0).cast("long"),
                                       lambda a, b: a + b)).alias("offsets")).collect()[0]
    flat = local.column("positions").combine_chunks().flatten().to_numpy()
    assert got["n"] == got["ids"] == local.num_rows == 2**18 - 1
    assert got["events"] == len(flat)
    assert got["offsets"] == int(flat.sum())  # offset = position here
