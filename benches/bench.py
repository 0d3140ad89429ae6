"""Python benchmark: the CORE paper's workloads through ``Query.run_arrow`` on a
pyarrow Table, one JSON line per workload (events/s, matches, peak RSS of the
``run_arrow`` runs), plus the same output read through ``Query.run_arrow_batches``
(``streamed_events_per_s``).

    python benches/bench.py [--events N] [--only NAME ...] [--position-type uint64]

Each workload runs in a fresh child process, so that its peak RSS is its own.
The workloads are the same as the criterion harness (benches/src/workloads.rs):
uniform seeded streams, W = 100 unless stated; stock Q1-Q7 when the stock data is
found (``$CEQL_STOCK_DATA`` or ../shared/data/stock/stock_data.csv); the reorder
buffer (``reorder_*``: ``Query.run`` with ``max_delay`` 0, 1 s and 10 s on a stream
shuffled within the delay, and the sorted stream without a buffer). ``run_arrow``
materialises every match, so K3 and K5 (exponential output) run on 10k events.
The output's row numbers are uint32 (the input is a Table of known length) unless
``--position-type uint64`` asks for the 64-bit output; each line names the type.
The ``and*``/``or*`` rows compare the conjunction of 3 and 5 events with the OR of all their
orders; the ``deadline_*`` rows run a trailing absence with deadlines on 1M events of 10,000
keys (``Query.run``, deadlines closed at the end) against the same query without it.
The ``corr_*`` rows (issue 16's queries 1, 3 and 4 with predicates between events, and an
aggregate filter ``e[price > avg(b.price)]``; ``corr_rounds*``: a filter inside an iteration,
tested per iteration, docs/language.md#s3-4c, against the same filter after the ``+``), at
W = 100, 1,000 and 10,000 events) run on the first ``--events`` stock trades, pushed in
slices within a time budget: the row says how many events were processed and whether all were.
The ``corr_q2*`` rows (issue 16's query 2, an equality join routed by key, docs/language.md#s3-4b)
run on a generated LOGIN stream (:func:`login_table`, ``--events`` events, 10,000 users) through
``Query.run_arrow``: the routed query (``corr_q2``), its ``PARTITION BY [user]`` rewrite
(``corr_q2_partition``), both without ``country != a.country`` (``corr_q2_eq``,
``corr_q2_partition_eq``), and the same query written so that it is not routed
(``corr_q2_unrouted``: the residual test, on the first 5,000 events only); the ``corr_q2_next*``
rows are the same join under NEXT (routed with and without a window, the PARTITION BY rewrite,
unrouted on 5,000 events).
``stock_run_last_measures`` is "the average of the run" as measures under LAST, next to the
same query without measures (``stock_run_last``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def noise():
    return [f"B{i}" for i in range(1, 7)]


def seq_query(n, w):
    return "SELECT * FROM S WHERE " + " ; ".join(f"A{i}" for i in range(1, n + 1)) + f" WITHIN {w} EVENTS"


def synthetic():
    """name -> (query, types, events to use)."""
    out = {}
    for n in (3, 5, 7, 9):
        out[f"seq{n}_w100"] = (seq_query(n, 100), [f"A{i}" for i in range(1, n + 1)] + noise(), None)
    for w in (50, 100, 150, 200, 10_000, 1_000_000):
        out[f"no_output_w{w}"] = (seq_query(3, w), ["A1", "A2"] + noise(), None)
    out["k3"] = ("SELECT * FROM S WHERE A1 ; A2+ ; A3 WITHIN 100 EVENTS", ["A1", "A2", "A3"] + noise(), 10_000)
    out["k5"] = ("SELECT * FROM S WHERE A1 ; A2+ ; A3 ; A4+ ; A5 WITHIN 100 EVENTS", [f"A{i}" for i in range(1, 6)] + noise(), 10_000)
    out["d3"] = ("SELECT * FROM S WHERE A1 ; (A2 OR A2p) ; A3 WITHIN 100 EVENTS", ["A1", "A2", "A3", "A2p"] + noise(), None)
    out["d5"] = (
        "SELECT * FROM S WHERE A1 ; (A2 OR A2p) ; A3 ; (A4 OR A4p) ; A5 WITHIN 100 EVENTS",
        [f"A{i}" for i in range(1, 6)] + ["A2p", "A4p"] + noise(),
        None,
    )
    # absence between two events (docs/language.md#s3-3a) against the same sequence without it,
    # on the same stream: the absence only guards a skip loop, so both take constant time per event
    absent_types = ["A1", "A2", "A3"] + noise()
    out["seq2_w100"] = ("SELECT * FROM S WHERE A1 ; A3 WITHIN 100 EVENTS", absent_types, None)
    for w in (100, 10_000):
        out[f"absent_between_w{w}"] = (f"SELECT * FROM S WHERE A1 ; ABSENT(A2) ; A3 WITHIN {w} EVENTS", absent_types, None)
    # conjunction (docs/language.md#s3-3c) of 3 and 5 events against the OR of all their orders
    # (6 and 120 sequences): the same matches, which grow as (W/(n+6))^(n-1) per event, so
    # run_arrow materialises them on 10,000 and 1,000 events
    for n, limit in ((3, 10_000), (5, 1_000)):
        out[f"and{n}_w100"], out[f"or{n}_w100"] = conjunction_queries(n, limit)
    return out


def conjunction_queries(n, limit):
    """(``A1 AND ... AND An``, the OR of the n! orders of ``A1 ; ... ; An``), W = 100 events."""
    import itertools

    types = [f"A{i}" for i in range(1, n + 1)]
    conj = "SELECT * FROM S WHERE " + " AND ".join(types) + " WITHIN 100 EVENTS"
    orders = " OR ".join("(" + " ; ".join(p) + ")" for p in itertools.permutations(types))
    disj = "SELECT * FROM S WHERE " + orders + " WITHIN 100 EVENTS"
    return (conj, types + noise(), limit), (disj, types + noise(), limit)


#: Trailing absence with deadlines (docs/language.md#s3-3b) on 1M events of 10,000 keys, one per
#: millisecond (ORDER 40%, PAY 20%, X 40%), against the same query without the absence.
DEADLINES = {
    "deadline_none_10k_keys": "SELECT * FROM S WHERE ORDER PARTITION BY [id] WITHIN 1 minute",
    "deadline_10s_10k_keys": "SELECT * FROM S WHERE ORDER ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id] "
                             "WITHIN 1 minute",
}


def run_deadlines(name, events):
    """``Query.run`` (deadlines closed at the end) over the keyed stream."""
    import numpy as np
    import pyarrow as pa

    import ceql

    n = min(events, 1_000_000)
    rng = np.random.default_rng(5)
    types = np.array(["ORDER", "ORDER", "PAY", "X", "X"])[rng.integers(0, 5, n)]
    table = pa.table({"type": types, "id": rng.integers(0, 10_000, n), "ts": np.arange(n, dtype=np.int64)})
    q = ceql.compile(DEADLINES[name])
    best, matches = float("inf"), 0
    for _ in range(3):
        t0 = time.perf_counter()
        matches = len(q.run(table, time_field="ts", time_unit="ms", close_deadlines=True))
        best = min(best, time.perf_counter() - t0)
    return {"workload": name, "events": n, "seconds": round(best, 4), "events_per_s": round(n / best),
            "matches": matches, "peak_rss_mib": round(peak_rss_mib(), 1)}


#: The reorder buffer (``max_delay``): name -> delay in ms (None: no buffer, sorted input).
REORDER = {"reorder_none": None, "reorder_d0": 0, "reorder_d1s": 1_000, "reorder_d10s": 10_000}
REORDER_QUERY = "SELECT * FROM S WHERE A ; B WITHIN 10 milliseconds"
REORDER_EVENTS = 200_000


def reorder_table(n, delay_ms):
    """``n`` events of types A, B, C, X (uniform), one per millisecond (``ts``), in an
    arrival order where each is up to ``delay_ms`` late (sorted by ts + a uniform
    jitter in [0, delay_ms)), so that nothing is late."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    types = np.array(["A", "B", "C", "X"])[rng.integers(0, 4, n)]
    ts = np.arange(n, dtype=np.int64)
    order = np.argsort(ts + rng.uniform(0, delay_ms or 0, n), kind="stable")
    return pa.table({"type": types[order], "ts": ts[order]})


def run_reorder(name, events):
    """``Query.run`` over the shuffled stream with ``max_delay``, or over the sorted
    one without (the reference: Arrow input, no buffer)."""
    import ceql

    delay = REORDER[name]
    table = reorder_table(min(events, REORDER_EVENTS), delay)
    q = ceql.compile(REORDER_QUERY)
    kw = {} if delay is None else {"max_delay": delay / 1000}
    best, matches = float("inf"), 0
    for _ in range(3):
        t0 = time.perf_counter()
        matches = len(q.run(table, time_field="ts", time_unit="ms", **kw))
        best = min(best, time.perf_counter() - t0)
    return {"workload": name, "events": table.num_rows, "max_delay_ms": delay, "seconds": round(best, 4),
            "events_per_s": round(table.num_rows / best), "matches": matches, "peak_rss_mib": round(peak_rss_mib(), 1)}


#: Workloads also run with captures on (docs/language.md#s3-2a): each match a valuation.
CAPTURED = ["seq3_w100_captures", "no_output_w100_captures", "k3_captures", "d3_captures"]


def stock_queries():
    seq = "(SELL as msft; BUY as oracle; BUY as csco; SELL as amat)"
    dis = "(SELL as msft; (BUY OR SELL) as oracle; (BUY OR SELL) as csco; SELL as amat)"
    names = "msft[name = 'MSFT'] AND oracle[name = 'ORCL'] AND csco[name = 'CSCO'] AND amat[name = 'AMAT']"
    prices = ("msft[name = 'MSFT'] AND msft[price > 26.0] AND oracle[name = 'ORCL'] AND oracle[price > 11.14] "
              "AND csco[name = 'CSCO'] AND amat[name = 'AMAT'] AND amat[price >= 18.92]")
    w = "WITHIN 30000 [stock_time]"
    part = "PARTITION BY [volume] WITHIN 30000 [stock_time] CONSUME BY ANY"
    return {
        "stock_q1": f"SELECT * FROM S WHERE {seq} FILTER {names} {w}",
        "stock_q2": f"SELECT * FROM S WHERE {seq} FILTER {prices} {w}",
        "stock_q3": f"SELECT * FROM S WHERE {seq} FILTER {names} {part}",
        "stock_q4": f"SELECT * FROM S WHERE {dis} FILTER {names} {w}",
        "stock_q5": f"SELECT * FROM S WHERE {dis} FILTER {prices} {w}",
        "stock_q6": f"SELECT * FROM S WHERE {dis} FILTER {names} {part}",
        "stock_q7": ("SELECT * FROM S WHERE (SELL as msft; (BUY OR SELL)+ as mid; SELL as amat) "
                     f"FILTER msft[name = 'MSFT'] AND mid[name = 'ORCL' AND volume >= 5000] AND amat[name = 'AMAT'] {w}"),
        # "The average of the run" as measures (docs/language.md#s3-5a), and the same query without
        # them: the difference is the residual path (captures inside, stored prices) and the measures.
        "stock_run_last": f"SELECT LAST s, e FROM S WHERE SELL AS s ; (BUY AS b)+ ; SELL AS e PARTITION BY [name] {w}",
        "stock_run_last_measures": ("SELECT LAST s, e, count(b) AS n, avg(b.price) AS avg_price FROM S "
                                    f"WHERE SELL AS s ; (BUY AS b)+ ; SELL AS e PARTITION BY [name] {w}"),
    }


def correlation_queries():
    """Issue 16's queries 1, 3 and 4 (predicates between events, docs/design/correlation.md) at
    windows of W = 100, 1,000 and 10,000 events over the stock stream: name -> query."""
    q1 = ("SELECT * FROM S WHERE (BUY OR SELL) AS a ; (BUY OR SELL) AS b ; (BUY OR SELL) AS c "
          "FILTER a[name = 'INTC'] AND b[name = 'QQQ'] AND c[name = 'RIMM'] AND a[price < b.price] "
          "AND b[price < c.price] WITHIN {w} EVENTS")
    q3 = ("SELECT * FROM S WHERE SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER b[price > s.price] "
          "AND e[price < s.price] PARTITION BY [name] WITHIN {w} EVENTS")
    q4 = "SELECT * FROM S WHERE (BUY AS b)+ FILTER b[price > PREV(price)] PARTITION BY [name] WITHIN {w} EVENTS"
    # An aggregate in a filter (docs/language.md#s3-4a): no pruning, every valuation is tested.
    agg = ("SELECT * FROM S WHERE SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER e[price > avg(b.price)] "
           "PARTITION BY [name] WITHIN {w} EVENTS")
    # A filter inside an iteration (docs/language.md#s3-4c): tested per iteration, cut at the
    # iteration markers, next to the same filter after the + (every BUY against every SELL).
    rounds = ("SELECT * FROM S WHERE ((SELL AS s ; BUY AS b) FILTER b[price > s.price])+ "
              "PARTITION BY [name] WITHIN {w} EVENTS")
    rounds_after = ("SELECT * FROM S WHERE (SELL AS s ; BUY AS b)+ FILTER b[price > s.price] "
                    "PARTITION BY [name] WITHIN {w} EVENTS")
    return {f"corr_{n}_w{w}": q.format(w=w)
            for n, q in (("q1", q1), ("q3", q3), ("q4", q4), ("agg", agg), ("rounds", rounds),
                         ("rounds_after", rounds_after))
            for w in (100, 1_000, 10_000)}


#: Issue 16's query 2 on the LOGIN stream: name -> (query, events cap or None).
LOGIN_QUERIES = {
    "corr_q2": ("SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND country != a.country] "
                "WITHIN 1 hour", None),
    "corr_q2_partition": ("SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[country != a.country] "
                          "PARTITION BY [user] WITHIN 1 hour", None),
    "corr_q2_eq": ("SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 1 hour", None),
    "corr_q2_partition_eq": ("SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b PARTITION BY [user] WITHIN 1 hour", None),
    # NOT (user != a.user) is user = a.user (both UNKNOWN on NULL and NaN) but no routing equality:
    # the residual test, quadratic in the events of the window.
    "corr_q2_unrouted": ("SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[NOT (user != a.user) "
                         "AND country != a.country] WITHIN 1 hour", 5_000),
    # Routed NEXT (docs/language.md#s3-4b): with a window the strategy chooses among the user's
    # valuations inside it (the residual path per key, docs/language.md#s3-6a); without one the
    # strategy automata choose. The PARTITION BY rewrite applies the strategy first (V40): another
    # answer, for the cost of the automata. Unrouted: the residual test over every user.
    "corr_q2_next": ("SELECT NEXT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 1 hour",
                     None),
    "corr_q2_next_nowindow": ("SELECT NEXT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]", None),
    "corr_q2_next_partition": ("SELECT NEXT * FROM S WHERE LOGIN AS a ; LOGIN AS b PARTITION BY [user] "
                               "WITHIN 1 hour", None),
    "corr_q2_next_unrouted": ("SELECT NEXT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[NOT (user != a.user)] "
                              "WITHIN 1 hour", 5_000),
}


def login_table(n):
    """The LOGIN stream of query 2 (seeded): ``n`` events of 10,000 users drawn uniformly,
    100 ms apart on average (uniform gaps of 0 to 199 ms; ``ts`` in milliseconds), each from
    its user's home country (``user % 5`` of five countries) except 2% from another one. A
    one-hour window holds about 36,000 events, 3.6 per user. The same distribution as the
    criterion bench's ``login_stream`` (another generator, so not the same events)."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(16)
    users = rng.integers(0, 10_000, n)
    home = users % 5
    away = rng.integers(0, 100, n) < 2
    country = np.where(away, (home + rng.integers(1, 5, n)) % 5, home)
    ts = np.cumsum(rng.integers(0, 200, n))
    names = pa.array(["FR", "DE", "US", "JP", "BR"])
    return pa.table({"type": pa.array(["LOGIN"] * n), "user": pa.array(users, pa.int64()),
                     "country": pa.DictionaryArray.from_arrays(pa.array(country.astype(np.int8)), names),
                     "ts": pa.array(ts, pa.int64())})


def run_login(name, events):
    """One ``corr_q2*`` row: ``Query.run_arrow`` over the LOGIN stream, best of 3."""
    import ceql

    query, cap = LOGIN_QUERIES[name]
    table = login_table(min(events, cap) if cap else events)
    q = ceql.compile(query)
    best, matches = float("inf"), 0
    for _ in range(3):
        t0 = time.perf_counter()
        matches = q.run_arrow(table, time_field="ts", time_unit="ms").num_rows
        best = min(best, time.perf_counter() - t0)
    return {"workload": name, "events": table.num_rows, "seconds": round(best, 4),
            "events_per_s": round(table.num_rows / best), "matches": matches,
            "routed_by": q.describe()["routed_by"], "peak_rss_mib": round(peak_rss_mib(), 1)}


#: Seconds a correlation workload may run: the residual test enumerates the valuations of
#: the query without its filters between events, exponentially many under ALL with an
#: iteration, and one event can take longer than any budget. The child pushes one event at a
#: time and records its progress; the parent stops it at the budget and reports how far it got.
CORRELATION_BUDGET_S = 20.0


def run_correlation(name, events, progress):
    """A correlation workload pushed event by event, its progress written to `progress`."""
    import pyarrow.csv as pc

    import ceql

    path = stock_path()
    if path is None:
        return {"workload": name, "skipped": "stock_data.csv not found (set CEQL_STOCK_DATA)"}
    table = pc.read_csv(path)
    table = table.rename_columns(["type" if c == "event_type" else c for c in table.column_names])
    table = table.slice(0, min(events, table.num_rows))
    s = ceql.compile(correlation_queries()[name]).stream()
    done, matches = 0, 0
    t0 = time.perf_counter()

    def report(complete):
        seconds = time.perf_counter() - t0
        row = {"workload": name, "events": done, "complete": complete, "seconds": round(seconds, 4),
               "events_per_s": round(done / seconds) if seconds else 0, "matches": matches,
               "peak_rss_mib": round(peak_rss_mib(), 1)}
        Path(progress).write_text(json.dumps(row))
        return row

    while done < table.num_rows:
        n = min(64, table.num_rows - done)
        for i in range(n):
            matches += len(s.push_batch(table.slice(done + i, 1)))
        done += n
        report(False)
    return report(True)


def run_correlation_child(command, progress, env):
    """Runs a correlation child within the budget; its last recorded progress is the row."""
    try:
        subprocess.run(command, check=True, timeout=CORRELATION_BUDGET_S, stdout=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired:
        pass
    text = Path(progress).read_text() if Path(progress).exists() else "{}"
    row = json.loads(text or "{}")
    row.setdefault("events", 0)
    print(json.dumps(row), flush=True)


def stock_path():
    for p in (os.environ.get("CEQL_STOCK_DATA"), HERE.parent.parent / "shared" / "data" / "stock" / "stock_data.csv"):
        if p and Path(p).exists():
            return Path(p)
    return None


def peak_rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_one(name, events, position_type=None):
    if name in LOGIN_QUERIES:
        return run_login(name, events)
    if name.startswith("corr_"):
        return run_correlation(name, events, os.environ["CEQL_BENCH_PROGRESS"])
    import numpy as np
    import pyarrow as pa

    import ceql

    if name in REORDER:
        return run_reorder(name, events)
    if name in DEADLINES:
        return run_deadlines(name, events)
    if name.startswith("stock_"):
        path = stock_path()
        if path is None:
            return {"workload": name, "skipped": "stock_data.csv not found (set CEQL_STOCK_DATA)"}
        import pyarrow.csv as pc

        table = pc.read_csv(path)
        table = table.rename_columns(["type" if c == "event_type" else c for c in table.column_names])
        query = stock_queries()[name]
    else:
        query, types, limit = synthetic()[name.removesuffix("_captures")]
        n = min(events, limit) if limit else events
        rng = np.random.default_rng(7)
        codes = rng.integers(0, len(types), n).astype(np.int8)
        table = pa.table({"type": pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(types))})
    q = ceql.compile(query)
    captures = name.endswith("_captures")
    best, matches = float("inf"), 0
    for _ in range(3):
        t0 = time.perf_counter()
        result = q.run_arrow(table, position_type=position_type, captures=captures)
        best = min(best, time.perf_counter() - t0)
        matches, positions = result.num_rows, str(result.schema.field("start").type)
        del result
    rss = peak_rss_mib()
    # The same output through run_arrow_batches, each batch dropped once counted.
    streamed = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        rows = sum(batch.num_rows for batch in q.run_arrow_batches(table, position_type=position_type,
                                                                    captures=captures))
        streamed = min(streamed, time.perf_counter() - t0)
        assert rows == matches, (rows, matches)
    return {
        "workload": name,
        "events": table.num_rows,
        "seconds": round(best, 4),
        "events_per_s": round(table.num_rows / best),
        "matches": matches,
        "position_type": positions,
        "peak_rss_mib": round(rss, 1),
        "streamed_seconds": round(streamed, 4),
        "streamed_events_per_s": round(table.num_rows / streamed),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events per synthetic workload")
    parser.add_argument("--only", nargs="*", help="workload names (default: all)")
    parser.add_argument("--position-type", choices=["uint32", "uint64"], help="row number type of the output "
                        "(default: uint32, chosen by run_arrow for a Table)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.events, args.position_type)), flush=True)
        return
    names = (list(synthetic()) + CAPTURED + list(stock_queries()) + list(REORDER) + list(DEADLINES)
             + list(correlation_queries()))
    names += list(LOGIN_QUERIES)
    if args.only:
        names = [n for n in names if n in args.only]
    # numpy's OpenBLAS threads spin on the other cores for a while after import;
    # the benchmark uses no BLAS, so keep them from competing with the engine.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    for name in names:
        command = [sys.executable, __file__, "--child", name, "--events", str(args.events)]
        if args.position_type:
            command += ["--position-type", args.position_type]
        if name.startswith("corr_") and name not in LOGIN_QUERIES:
            import tempfile

            with tempfile.TemporaryDirectory() as d:
                progress = os.path.join(d, "progress.json")
                env["CEQL_BENCH_PROGRESS"] = progress
                run_correlation_child(command, progress, env)
            continue
        subprocess.run(command, check=True, env=env)


if __name__ == "__main__":
    main()
