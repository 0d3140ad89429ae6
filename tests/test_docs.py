"""The documentation cannot rot: every python block of the site's pages runs, and prints the
output its page shows (tests/docs_snippets.py says how blocks are found). The language guide's
examples are run a second time on the brute-force oracle (tests/oracle), so that the outputs
it shows are those of the specification, not only those of the engine."""

from __future__ import annotations

import pytest

from docs_snippets import ROOT, guide_pages, needs_plot, needs_spark, run_snippets, snippets, tutorial_pages
from oracle import evaluate

PAGES = ["index.md", "getting-started.md"] + guide_pages() + tutorial_pages()


def _param(page: str):
    return pytest.param(page, marks=pytest.mark.spark, id=page) if needs_spark(page) else pytest.param(page, id=page)


def _helpers():
    """The guide's helper block (defines ``events`` and ``show``) and the other blocks."""
    blocks = snippets("guide/index.md")
    helper = [s for s in blocks if "def show(" in s.code]
    assert len(helper) == 1, "guide/index.md must define show() in one block"
    return helper, [s for s in blocks if s is not helper[0]]


def test_pages_have_examples():
    for page in PAGES:
        assert snippets(page) or page == "index.md", f"{page} has no python example"
    for page in guide_pages() + ["getting-started.md"]:
        assert any(s.expected is not None for s in snippets(page)), f"{page} shows no output"


def _workdir(tmp_path, monkeypatch):
    """A scratch directory to run examples in, with the repository's examples/ linked: files
    the examples write land there, not in the repository."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("page", [_param(p) for p in PAGES])
def test_page_examples(page, tmp_path, monkeypatch):
    if needs_plot(page):
        pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    if needs_spark(page):
        pytest.importorskip("pyspark", reason="the spark extra is not installed")
        import spark_support

        spark_support.session()  # the tests' shared local session; the page's getOrCreate() reuses it
    _workdir(tmp_path, monkeypatch)
    namespace = {"__name__": "__docs__"}
    if page.startswith("guide/") and page != "guide/index.md":
        run_snippets(_helpers()[0], namespace)
    run_snippets(snippets(page), namespace)


def _oracle_show(events):
    """``show`` of the guide, evaluated by the oracle instead of the engine."""

    def show(query, stream, schema=None, **options):
        unknown = set(options) - {"time_field", "time_unit", "late", "close_deadlines", "captures"}
        assert not unknown, f"the oracle version of show() does not take {unknown}"
        # The oracle drops late events (reference semantics), which is the engine's late="drop".
        assert options.get("late", "drop") == "drop"
        captures = options.get("captures", False)
        res = evaluate(query, events(stream), schema=schema, time_field=options.get("time_field"),
                       time_unit=options.get("time_unit", "ns"),
                       close_deadlines=options.get("close_deadlines", False), captures=captures)
        assert res.limit is None, "show() examples must not use LIMIT: which events it keeps is not specified"
        lines = []
        for start, end, data, *measures in res.matches():
            tail = "".join(f" {n}={v}" for n, v in measures[0]) if measures else ""
            if not captures:
                lines.append(((end, start, data, "", tail), ",".join(map(str, data)) + "}" + tail))
                continue
            # data: ((position, variable names), ...) -> {variable: positions}
            caps = {}
            for p, names in data:
                for v in names:
                    caps.setdefault(v, []).append(p)
            text = "; ".join(f"{v}: {','.join(map(str, ps))}" for v, ps in sorted(caps.items()))
            lines.append(((end, start, tuple(p for p, _ in data), text, tail), text + "}" + tail))
        for (end, start, *_), text in sorted(lines):
            print(f"[{start},{end}]{{{text}")
        if not lines:
            print("(none)")

    return show


@pytest.mark.parametrize("page", guide_pages())
def test_guide_outputs_are_the_oracles(page, tmp_path, monkeypatch):
    _workdir(tmp_path, monkeypatch)
    helper, others = _helpers()
    namespace = {"__name__": "__docs__"}
    run_snippets(helper, namespace)
    namespace["show"] = _oracle_show(namespace["events"])
    run_snippets(others if page == "guide/index.md" else snippets(page), namespace)


# ---------------------------------------------------------------- stock tutorial vs brute force

def _stock_rows():
    import csv

    with open(ROOT / "examples/stock/stock_sample.csv", newline="") as f:
        return [{"type": r["event_type"], "name": r["name"], "volume": int(r["volume"]),
                 "price": float(r["price"]), "stock_time": int(r["stock_time"])} for r in csv.DictReader(f)]


def _step(types, name, cond=lambda r: True):
    return lambda r: r["type"] in types and r["name"] == name and cond(r)


def test_stock_tutorial_numbers_are_the_bruteforce_ones():
    """The counts and matches shown in tutorials/stock.md, recomputed by tests/docs_bruteforce.py
    from the queries' meaning (steps written here by hand from the query texts)."""
    import docs_bruteforce as bf

    rows = _stock_rows()
    ms = [r["stock_time"] for r in rows]
    seq = [_step({"SELL"}, "MSFT"), _step({"BUY"}, "ORCL"), _step({"BUY"}, "CSCO"), _step({"SELL"}, "AMAT")]
    seq_or = [seq[0], _step({"BUY", "SELL"}, "ORCL"), _step({"BUY", "SELL"}, "CSCO"), seq[3]]

    def priced(steps):
        return [lambda r, s=steps[0]: s(r) and r["price"] > 26.0, lambda r, s=steps[1]: s(r) and r["price"] > 11.14,
                steps[2], lambda r, s=steps[3]: s(r) and r["price"] >= 18.92]

    q3 = bf.matches(rows, seq, ms, 30_000, key="volume", consume="ANY")
    expected = {
        "Q1": bf.count_matches(rows, seq, ms, 30_000),
        "Q2": bf.count_matches(rows, priced(seq), ms, 30_000),
        "Q3": len(q3),
        "Q4": bf.count_matches(rows, seq_or, ms, 30_000),
        "Q5": bf.count_matches(rows, priced(seq_or), ms, 30_000),
        "Q6": len(bf.matches(rows, seq_or, ms, 30_000, key="volume", consume="ANY")),
    }
    shown = [s.expected for s in snippets("tutorials/stock.md") if s.expected and s.expected.startswith("Q1 ")]
    assert len(shown) == 1
    counts = {line.split()[0]: int(line.split()[1].replace(",", "")) for line in shown[0].strip().splitlines()}
    assert counts == expected
    first_two = [s.expected for s in snippets("tutorials/stock.md") if s.expected and s.expected.startswith("954 ")]
    assert first_two and first_two[0].splitlines()[:2] == [f"{a} {b} {p}" for a, b, p in q3[:2]]
    # examples/stock/main.ceql: 10 seconds on stock_time in ms, CONSUME BY PARTITION
    main = bf.matches(rows, seq_or, [t * 1_000_000 for t in ms], 10_000_000_000, key="volume", consume="PARTITION")
    assert len(main) == 368
    assert main[0] == (1035, 1135, (1035, 1042, 1054, 1135))  # shown in getting-started.md
    # tutorials/timeline.md: the matches ending in positions 11,200-11,450, and the burst at 11,343
    assert sum(1 for _, e, _ in main if 11_200 <= e <= 11_450) == 281
    assert sum(1 for _, e, _ in main if e == 11_343) == 268


def test_bruteforce_helper_agrees_with_the_oracle():
    """The helper itself, on small random streams, against the exact oracle."""
    import random

    import docs_bruteforce as bf

    rnd = random.Random(7)
    for case in range(60):
        rows = [{"type": rnd.choice("ABX"), "k": rnd.choice([1, 2, None]), "t": i + rnd.choice([0, 0, 1])}
                for i in range(rnd.randint(3, 12))]
        for i in range(1, len(rows)):
            rows[i]["t"] = max(rows[i]["t"], rows[i - 1]["t"])
        n = rnd.choice([0, 2, 5])
        key = rnd.choice([None, "k"])
        consume = rnd.choice(["NONE", "ANY", "PARTITION"])
        text = "SELECT * FROM S WHERE A ; (A OR B) ; B" + (" PARTITION BY [k]" if key else "") + f" WITHIN {n} [t] CONSUME BY {consume}"
        steps = [lambda r: r["type"] == "A", lambda r: r["type"] in "AB", lambda r: r["type"] == "B"]
        want = evaluate(text, rows).matches()
        got = bf.matches(rows, steps, [r["t"] for r in rows], n, key=key, consume=consume)
        assert sorted(got, key=lambda m: (m[1], m[0], m[2])) == want, (case, text)
        if consume == "NONE":
            assert bf.count_matches(rows, steps, [r["t"] for r in rows], n, key=key) == len(want)


def test_iot_tutorial_alerts_are_the_oracles():
    """The alerts shown in tutorials/iot-spark.md (the same for ceql, Spark batch and Spark
    streaming there), recomputed by the oracle on the shipped CSV files."""
    import csv
    import datetime as dt

    page = snippets("tutorials/iot-spark.md")
    namespace: dict = {}
    (query_block,) = [s for s in page if s.code.startswith("QUERY = ")]
    exec(query_block.code, namespace)
    rows = []
    for path in sorted((ROOT / "examples/iot/readings").glob("part-*.csv")):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                t = dt.datetime.strptime(r["ts"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
                rows.append({"type": r["type"], "sensor": r["sensor"], "door": r["door"] or None,
                             "celsius": float(r["celsius"]) if r["celsius"] else None,
                             "ts": int(t.timestamp()) * 10**9, "offset": int(r["offset"])})
    rows.sort(key=lambda r: (r["ts"], r["offset"]))

    def clock(ns):
        return dt.datetime.fromtimestamp(ns / 1e9, dt.timezone.utc).strftime("%H:%M:%S")

    lines = [f"{rows[s]['sensor']} {clock(rows[s]['ts'])} {clock(rows[e]['ts'])} {[rows[p]['celsius'] for p in d[1:]]}"
             for s, e, d in evaluate(namespace["QUERY"], rows, time_field="ts").matches()]
    shown = [s.expected.strip().splitlines() for s in page if s.expected and s.expected.startswith("fridge-")]
    assert len(shown) == 3 and all(out == lines for out in shown), (lines, shown)
