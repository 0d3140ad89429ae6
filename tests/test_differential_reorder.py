"""Differential tests of the reorder buffer (``max_delay``, docs/language.md#s3-7a).

A random case (every strategy, PARTITION BY, windows by events, attribute and time,
CONSUME BY, LIMIT, projection) gets fresh non-decreasing time stamps ``ts``; its events
are shuffled (each moved later by a random delay, so that most arrivals stay within the
bound and, in some cases, some do not), pushed through ``q.stream(max_delay=...)`` in
random chunks, with caller watermarks and a snapshot/restore at random points, and
flushed at the end. The oracle's reorder module (``oracle/reorder.py``) says which
arrivals are late and in which order the evaluation reads the others; the oracle then
evaluates that sorted stream. Late events are dropped (``late="drop"``) or raise
(``late="error"``).

``CEQL_REORDER_EXAMPLES`` examples per test function (default 300, 4 functions: 1,200
cases); ``CEQL_DIFF_SEED`` as in ``test_differential.py``.
"""

from __future__ import annotations

import dataclasses
import os

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import ceql
import gen
from conftest import as_triples
from oracle.reorder import reorder, within_bound
from test_differential import MODES, _seeded

EXAMPLES = int(os.environ.get("CEQL_REORDER_EXAMPLES", "300"))
REORDER_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("CEQL_DIFF_SEED") is None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
AREAS = ["mixed", "windows", "partition", "consume_limit", "not", "projection", "strategies", "long_streams"]
SECOND = 1_000_000_000
UNIT_NS = {"s": SECOND, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _timed(case: gen.Case, data):
    """The case with time stamps ``ts`` (whole seconds, non-decreasing) in its time
    unit, read through ``time_field="ts"``; and the seconds of each event."""
    primary = case.schema is not None and "primary_time" in case.schema
    unit = "ns" if primary or case.time_field is None else case.time_unit
    scale = SECOND // UNIT_NS[unit]
    steps = data.draw(st.lists(st.sampled_from([0, 0, 1, 1, 2, 3]), min_size=len(case.events),
                               max_size=len(case.events)), label="time steps")
    seconds, events, now = [], [], 0
    for e, step in zip(case.events, steps):
        now += step
        seconds.append(now)
        events.append(dict(e, ts=now * scale))
    return dataclasses.replace(case, events=events, time_field="ts", time_unit=unit), scale


def _arrivals(case: gen.Case, delay: int, violate: bool, data):
    """The events in an arrival order: each moved later by up to ``delay`` seconds
    (within the bound), or up to ``delay + 3`` for some when ``violate``."""
    rnd = data.draw(st.randoms(use_true_random=False), label="shuffle")
    keys = []
    for i, e in enumerate(case.events):
        extra = 3 if violate and rnd.random() < 0.3 else 0
        keys.append((e["ts"] + rnd.uniform(0, delay + extra) * _scale(case), i))
    return [case.events[i] for _, i in sorted(keys)]


def _scale(case: gen.Case) -> int:
    return SECOND // UNIT_NS[case.time_unit]


def _ops(arrivals, scale: int, data):
    """Arrivals as operations, with a few caller watermarks (in the time unit) between them."""
    ops, top = [], None
    for e in arrivals:
        if top is not None and data.draw(st.integers(0, 9), label="watermark?") == 0:
            back = data.draw(st.integers(0, 4), label="watermark lag")
            ops.append(("watermark", top - back * scale))
        ops.append(("event", e))
        top = e["ts"] if top is None else max(top, e["ts"])
    return ops


def _engine(q, case, ops, delay, late, data):
    """("ok", triples) | ("event",): the ops through a reorder stream, chunked, with a
    snapshot/restore at a random point, flushed at the end."""
    kw = dict(time_field="ts", time_unit=case.time_unit, late=late, max_delay=f"{delay} seconds")
    s = q.stream(**kw)
    out = []
    cut = data.draw(st.integers(0, len(ops)), label="snapshot at") if data.draw(st.booleans(), label="snap") else -1
    i = 0
    try:
        while i < len(ops):
            if i == cut:
                blob = s.snapshot()
                q2 = ceql.compile(case.text, case.schema, compat_ignore_strategy=case.compat)
                s = ceql.Stream.restore(data.draw(st.sampled_from([q, q2]), label="restore into"), blob)
                cut = -1
            if ops[i][0] == "watermark":
                out += s.advance_watermark(ops[i][1])
                i += 1
                continue
            j = i
            while j < len(ops) and ops[j][0] == "event" and (j == i or j != cut):
                j += 1
            size = data.draw(st.integers(1, j - i), label="chunk")
            chunk = [op[1] for op in ops[i:i + size]]
            how = data.draw(st.sampled_from(["push", "push_many", "iter"]), label="how")
            if how == "push":
                for ev in chunk:
                    out += s.push(ev)
            elif how == "push_many":
                out += s.push_many(chunk)
            else:
                out += s.push_many(ev for ev in chunk)
            i += size
        out += s.flush()
    except ceql.CeqlInternalError:
        raise
    except ceql.CeqlEventError:
        return ("event",), s
    return ("ok", out), s


def _check(case: gen.Case, data):
    case, scale = _timed(case, data)
    delay = data.draw(st.sampled_from([0, 1, 2, 5]), label="max_delay (s)")
    violate = data.draw(st.integers(0, 3), label="violate") == 0
    late = data.draw(st.sampled_from(["drop", "error"]), label="late")
    arrivals = _arrivals(case, delay, violate, data)
    ops = _ops(arrivals, scale, data)
    unit = UNIT_NS[case.time_unit]
    in_ns = [(op[0], op[1] * unit) if op[0] == "watermark" else op for op in ops]
    sorted_events, late_events = reorder(in_ns, delay * SECOND, lambda e: e["ts"] * unit)
    if not violate and not any(op[0] == "watermark" for op in ops):
        assert within_bound([e["ts"] for e in arrivals], delay * scale) and not late_events
    expected_case = dataclasses.replace(case, events=sorted_events)
    note(repr(expected_case))
    note("arrivals: %r" % (ops,))
    oracle_out = gen.run_oracle(expected_case)
    c = gen.compile_engine(case)
    if c[0] != "ok":
        gen.check_outcomes(case, oracle_out, c)
        return
    engine_out, stream = _engine(c[1], case, ops, delay, late, data)
    if late_events and late == "error":
        assert engine_out[0] == "event", "a late event must raise: %r" % (late_events,)
        return
    if engine_out[0] == "ok":
        gen.check_match_events(engine_out[1], sorted_events)
        engine_out = ("ok", as_triples(engine_out[1]))
        stats = stream.stats()
        assert stats["reorder_held"] == 0
        assert stats["reorder_released"] == len(sorted_events)
        assert stats["reorder_late"] == len(late_events)
    gen.check_outcomes(expected_case, oracle_out, engine_out)


@pytest.mark.parametrize("schema", MODES)
@REORDER_SETTINGS
@_seeded
@given(data=st.data())
def test_reorder_equals_the_sorted_stream(schema, data):
    area = data.draw(st.sampled_from(AREAS), label="area")
    case = data.draw(gen.cases(gen.profile(area, schema)), label="case")
    _check(case, data)


@pytest.mark.parametrize("schema", MODES)
@REORDER_SETTINGS
@_seeded
@given(data=st.data())
def test_reorder_time_windows(schema, data):
    case = data.draw(gen.cases(gen.profile("windows", schema, windows=("time",), window_required=True)),
                     label="case")
    _check(case, data)
