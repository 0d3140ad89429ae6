"""The differential check: the oracle's outcome and the engine's for a case, and the
assertion that they agree (the oracle gives the spec-correct answer)."""

from __future__ import annotations

from .case import Case
from .known_bugs import avoid


def run_oracle(case: Case):
    """("static", code) | ("event",) | ("ok", OracleResult)."""
    from oracle import evaluate, OracleError, OracleEventError

    try:
        res = evaluate(case.text, case.events, schema=case.schema, compat_ignore_strategy=case.compat,
                       **case.run_kwargs())
    except OracleEventError:
        return ("event",)
    except OracleError as e:
        return ("static", e.code)
    return ("ok", res)


def compile_engine(case: Case):
    """("static", code) | ("ok", query)."""
    import ceql

    try:
        return ("ok", ceql.compile(case.text, case.schema, compat_ignore_strategy=case.compat))
    except ceql.CeqlInternalError:
        raise
    except ceql.CeqlError as e:
        return ("static", e.code)


def run_engine(case: Case):
    """("static", code) | ("event",) | ("ok", triples)."""
    import ceql
    from conftest import as_triples

    c = compile_engine(case)
    if c[0] != "ok":
        return c
    try:
        matches = c[1].run(case.events, **case.engine_kwargs())
        check_match_events(matches, case.events)
        return ("ok", as_triples(matches))
    except ceql.CeqlInternalError:
        raise
    except ceql.CeqlEventError:
        return ("event",)


def _nan_free(e):
    return {k: ("NaN" if isinstance(v, float) and v != v else v) for k, v in e.items()}


def check_match_events(matches, events, arrow=False) -> None:
    """Match.events are the input events at Match.positions."""
    for m in matches:
        if arrow and not m.positions and avoid("arrow_empty_match_events"):
            continue
        got = [_nan_free(e) for e in m.events]
        want = [_nan_free(events[p]) for p in m.positions]
        assert got == want, "Match.events of %r: %r, expected %r" % ((m.start, m.end, m.positions), got, want)


def outcome_label(o) -> str:
    if o[0] == "static":
        return "static error " + o[1]
    if o[0] == "event":
        return "event error"
    return "ok"


def check_outcomes(case: Case, oracle_out, engine_out) -> None:
    """Asserts that the engine agrees with the oracle (the spec-correct answer)."""
    from conftest import check_against

    if oracle_out[0] == "static":
        assert engine_out[0] == "static", (
            "oracle: static error %s, engine: %s\n%r" % (oracle_out[1], _show(engine_out), case))
        assert engine_out[1] == oracle_out[1], (
            "oracle: static error %s, engine: static error %s\n%r" % (oracle_out[1], engine_out[1], case))
        return
    assert engine_out[0] != "static", "engine: static error %s, oracle: %s\n%r" % (
        engine_out[1], _show(oracle_out), case)
    if oracle_out[0] == "event":
        assert engine_out[0] == "event", "oracle: event error, engine: %s\n%r" % (_show(engine_out), case)
        return
    assert engine_out[0] == "ok", "engine: event error, oracle: %s\n%r" % (_show(oracle_out), case)
    res = oracle_out[1]
    try:
        check_against(engine_out[1], res.matches(), res.limit)
    except AssertionError as e:
        raise AssertionError("%s\nengine: %s\noracle: %s (limit %r)\n%r" % (
            e, engine_out[1], res.matches(), res.limit, case)) from None


def _show(o) -> str:
    if o[0] == "ok":
        r = o[1]
        return "ok %s" % (r.matches() if hasattr(r, "matches") else r,)
    return outcome_label(o)


#: Strategy groups the differential suites run their feature tests under (one pytest
#: parameter each): the strategies that keep every valuation, and each selective one.
STRATEGY_SETS = {
    "all": ("", "ALL", "ANY"),
    "next": ("NEXT",),
    "last": ("LAST",),
    "max": ("MAX",),
    "strict": ("STRICT",),
}


def check_stream_with_restore(case: Case, query, data, outputs, expected=None, **options) -> None:
    """A ``Stream`` fed the case's events in random chunks up to a random cut, then
    snapshotted, restored into a new stream, and fed the rest one event at a time,
    gives what ``Query.run`` gives over the whole stream, or ``expected`` (``outputs``
    turns a list of matches into comparable values; ``options`` go to ``run`` and
    ``stream``)."""
    import ceql
    from hypothesis import strategies as st

    evs = case.events
    if expected is None:
        expected = outputs(query.run(evs, **options))
    s = query.stream(**options)
    cut = data.draw(st.integers(0, len(evs)), label="snapshot at")
    out = []
    i = 0
    while i < cut:
        k = data.draw(st.integers(1, cut - i), label="chunk")
        out += outputs(s.push_many(evs[i:i + k]))
        i += k
    s2 = ceql.Stream.restore(ceql.compile(case.text, case.schema), s.snapshot())
    for ev in evs[cut:]:
        out += outputs(s2.push(ev))
    assert out == expected, "stream with a restore at %d differs from run\n%r" % (cut, case)
