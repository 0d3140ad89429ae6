"""``Query.explain``, ``Query.to_dot``, ``Stream.explain`` and the notebook display
(ceql/explain.py), checked against the compiled automaton: one DOT node per state and one
edge per transition (``describe()``), labels that name the types, filters and variables of
the query, final states marked; for small queries, the automaton of the construction of
docs/language.md#s5-4 derived by hand."""

from __future__ import annotations

import re
import shutil
import sys

import pytest

import ceql
import ceql.explain as cx

# Every construct of the language.
QUERIES = {
    "and": "SELECT * FROM S WHERE (A ; B) AND C FILTER C[v > 1]",
    "and_not": "SELECT * FROM S WHERE NOT(B FILTER B[v > 5]) AND B FILTER B[v > 1]",
    "seq": "SELECT * FROM S WHERE A ; B",
    "contiguous": "SELECT * FROM S WHERE A : B",
    "plus": "SELECT * FROM S WHERE A ; B+ ; C",
    "contiguous_plus": "SELECT * FROM S WHERE A ; B:+ ; C",
    "or": "SELECT * FROM S WHERE A ; (B OR C) ; D",
    "not": "SELECT * FROM S WHERE A ; NOT(C FILTER C[v = 1]) ; B",
    "as_filter": "SELECT * FROM S WHERE (A AS x ; B AS y ; C) FILTER x[v > 1] AND y[w = 'a'] AND C[v < 0]",
    "filter_or": "SELECT * FROM S WHERE A AS x ; B FILTER x[v > 1] OR x[v < 0]",
    "projection": "SELECT x FROM S WHERE A AS x ; B AS y",
    "select_none": "SELECT NONE FROM S WHERE A ; B",
    "any": "SELECT ANY * FROM S WHERE A ; B",
    "next": "SELECT NEXT * FROM S WHERE A ; B+ ; C",
    "last": "SELECT LAST * FROM S WHERE A ; B+ ; C",
    "max": "SELECT MAX x FROM S WHERE A AS x ; B+ AS y ; C",
    "strict": "SELECT STRICT * FROM S WHERE A ; B ; C",
    "partition": "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 5 EVENTS",
    "within_duration": "SELECT * FROM S WHERE A ; B WITHIN 3 seconds",
    "within_attribute": "SELECT * FROM S WHERE A ; B WITHIN 10 [t]",
    "consume_any": "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 5 [t] CONSUME BY ANY",
    "consume_partition": "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 5 [t] CONSUME BY PARTITION",
    "limit": "SELECT * FROM S WHERE A ; B+ ; C WITHIN 10 EVENTS LIMIT 2",
    "streams": "SELECT * FROM S1, S2 WHERE S1>A ; B FILTER B[v = 1]",
    "declared": "CREATE STREAM S { EVENT A { v: int }, EVENT B { v: int } } SELECT * FROM S WHERE A ; B FILTER A[v > 1]",
}

_Q = r'"((?:[^"\\]|\\.)*)"'
_NODE = re.compile(r"^\s*q(\d+) \[shape=(\w+), label=" + _Q, re.M)
_EDGE = re.compile(r"^\s*q(\d+) -> q(\d+) \[label=" + _Q + r", style=(\w+)", re.M)
_DET_NODE = re.compile(r"^\s*d(\d+) \[shape=box, style=rounded, peripheries=(\d)", re.M)
_DET_EDGE = re.compile(r"^\s*d(\d+) -> d(\d+) \[", re.M)


def parse_dot(dot):
    """(nodes {id: shape}, edges [(source, target, label, style)]) of an automaton DOT."""
    nodes = {int(i): shape for i, shape, _ in _NODE.findall(dot)}
    edges = [(int(a), int(b), label.replace("\\n", "\n").replace('\\"', '"'), style)
             for a, b, label, style in _EDGE.findall(dot)]
    return nodes, edges


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_dot_matches_the_compiled_automaton(name):
    q = ceql.compile(QUERIES[name])
    d = q.describe()
    nodes, edges = parse_dot(q.to_dot())
    assert sorted(nodes) == list(range(d["states"]))
    assert len(edges) == d["transitions"]
    states, transitions = q._native.automaton()
    assert [s["id"] for s in states] == sorted(nodes)
    finals = {s["id"] for s in states if s["final"]}
    assert finals and {i for i, shape in nodes.items() if shape == "doublecircle"} == finals
    assert 0 not in finals and states[0]["initial"]
    # Each edge is a transition of the automaton, with its label and output mark.
    assert [(a, b) for a, b, _, _ in edges] == [(t["source"], t["target"]) for t in transitions]
    for (_, _, label, style), t in zip(edges, transitions):
        assert label.split("\n")[0] == t["reads"]
        assert ("AS " + ", ".join(t["variables"]) in label) == bool(t["variables"])
        assert style == ("solid" if t["output"] else "dashed")
    # (C1) no transition enters q0, (C3) final states have no outgoing transition.
    assert all(b != 0 for _, b, _, _ in edges)
    assert all(a not in finals for a, _, _, _ in edges)
    # Every event type of the formula labels some edge.
    for ty in set(re.findall(r"\b([A-D])\b", QUERIES[name].split("WHERE")[1])):
        assert any(re.search(rf"\b{ty}\b", label) for _, _, label, _ in edges), (ty, edges)


def _triples(q):
    return sorted((a, b, label) for a, b, label, _ in parse_dot(q.to_dot())[1])


def test_sequence_is_the_construction_of_the_specification():
    # docs/language.md#s5-4: A ; B is q0 -A-> q1, the TRUE loop of `;` on q1, q1 -B-> q2 (final).
    q = ceql.compile(QUERIES["seq"])
    assert _triples(q) == [(0, 1, "A"), (1, 1, "TRUE"), (1, 2, "B")]
    # `:` has no TRUE loop.
    assert _triples(ceql.compile(QUERIES["contiguous"])) == [(0, 1, "A"), (1, 2, "B")]


def test_iteration_is_the_construction_of_the_specification():
    # docs/language.md#s5-4, ψ+ with a fresh state h: from q0 to f and h; h reads A to f and to h, and
    # loops on TRUE (without the loop for :+). Trimming drops the atom's initial state.
    plus = _triples(ceql.compile("SELECT * FROM S WHERE A+"))
    assert plus == [(0, 1, "A"), (0, 2, "A"), (2, 1, "A"), (2, 2, "A"), (2, 2, "TRUE")]
    cplus = _triples(ceql.compile("SELECT * FROM S WHERE A:+"))
    assert cplus == [(0, 1, "A"), (0, 2, "A"), (2, 1, "A"), (2, 2, "A")]


def test_labels_name_filters_variables_and_marks():
    q = ceql.compile(QUERIES["as_filter"])
    labels = {label for _, _, label, _ in parse_dot(q.to_dot())[1]}
    assert {"A[v > 1]\nAS x", "B[w = 'a']\nAS y", "C[v < 0]", "TRUE"} <= labels
    assert q._native.normalized_formula() == "A[v > 1] AS x ; B[w = 'a'] AS y ; C[v < 0]"
    # NOT: a negated guard, never captured.
    _, edges = parse_dot(ceql.compile(QUERIES["not"]).to_dot())
    nots = [e for e in edges if e[2].startswith("NOT(")]
    assert nots and all(e[2] == "NOT(C[v = 1])" and e[3] == "dashed" for e in nots)
    # Projection: y is captured but not output-marked.
    _, edges = parse_dot(ceql.compile(QUERIES["projection"]).to_dot())
    assert {(label, style) for _, _, label, style in edges if "AS" in label} == {("A\nAS x", "solid"), ("B\nAS y", "dashed")}
    assert all(style == "dashed" for _, _, _, style in parse_dot(ceql.compile(QUERIES["select_none"]).to_dot())[1])
    # FILTER ... OR ...: the filtered formula is copied (docs/language.md#s5-1), one copy per alternative.
    q = ceql.compile(QUERIES["filter_or"])
    assert q._native.normalized_formula() == "(A[v > 1] AS x ; B) OR (A[v < 0] AS x ; B)"
    assert {label for _, _, label, _ in parse_dot(q.to_dot())[1] if label.startswith("A")} == {"A[v > 1]\nAS x", "A[v < 0]\nAS x"}
    # Several streams: types are qualified.
    labels = {label for _, _, label, _ in parse_dot(ceql.compile(QUERIES["streams"]).to_dot())[1]}
    assert {"S1>A", "S1>B[v = 1]", "S2>B[v = 1]"} <= labels


def test_strict_drops_the_skip_loops():
    # STRICT (docs/language.md#s5-5): the transitions without comparison mark (the TRUE loops) are removed.
    strict = parse_dot(ceql.compile(QUERIES["strict"]).to_dot())[1]
    assert strict and all(label != "TRUE" for _, _, label, _ in strict)
    assert len(strict) == len(parse_dot(ceql.compile("SELECT * FROM S WHERE A ; B ; C").to_dot())[1]) - 2


SECTIONS = ["Query", "Formula after filter push-down", "Predicates", "Automaton", "Clauses", "Warnings"]


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_explain_has_every_section(name):
    q = ceql.compile(QUERIES[name])
    text = q.explain()
    lines = text.splitlines()
    at = [next(i for i, line in enumerate(lines) if line.startswith(s)) for s in SECTIONS]
    assert at == sorted(at)
    d = q.describe()
    assert f"{d['states']} states, {d['transitions']} transitions" in text
    finals = [f"q{s['id']}" for s in q._native.automaton()[0] if s["final"]]
    assert f"final {', '.join(finals)}" in text
    # Every transition appears under its source with its label and output mark.
    for t in q._native.automaton()[1]:
        mark = "•" if t["output"] else "∘"
        assert re.search(rf"-> q{t['target']}\s+{mark} {re.escape(t['label'])}", text), t
    for w in q.warnings:
        assert w.code in text


def test_explain_clauses():
    def clauses(name):
        text = ceql.compile(QUERIES[name]).explain()
        return text[text.index("\nClauses"):]

    assert "strategy      NEXT" in clauses("next")
    assert "strategy      MAX" in clauses("max") and "repeated complex events" in clauses("max")
    assert "select        x" in clauses("projection")
    assert "select        NONE" in clauses("select_none")
    assert "window        5 EVENTS" in clauses("partition")
    assert "partition by  [k]" in clauses("partition")
    assert "window        3 seconds of time stamps" in clauses("within_duration")
    assert "window        10 [t]" in clauses("within_attribute")
    assert "consume by    ANY" in clauses("consume_any")
    assert "consume by    PARTITION" in clauses("consume_partition")
    assert "limit         2 complex events per end position" in clauses("limit")
    assert "limit         none" in clauses("seq")
    # No WITHIN: warning W0402 is listed.
    assert "W0402" in ceql.compile(QUERIES["seq"]).explain().split("\nWarnings")[1]


def test_predicates_have_their_bit_index():
    text = ceql.compile(QUERIES["filter_or"]).explain()
    section = text[text.index("\nPredicates"):text.index("\nAutomaton")]
    assert re.search(r"A\s+bit 0\s+v > 1\n\s+bit 1\s+v < 0", section), section


def _events():
    return [{"type": t, "v": i, "w": "a", "k": i % 2, "t": i} for i, t in enumerate("ABXBCADBC")]


@pytest.mark.parametrize("name", sorted(set(QUERIES) - {"streams", "declared"}))
def test_det_states_dot_after_a_stream(name):
    q = ceql.compile(QUERIES[name])
    s = q.stream(time_field="t", time_unit="s")
    s.push_many(_events())
    stats = s.stats()
    dot = q.to_dot(stream=s)
    assert dot.startswith("digraph det_states {")
    nodes = _DET_NODE.findall(dot)
    assert sorted(int(i) for i, _ in nodes) == list(range(stats["det_states"]))
    # d0 is the virtual det-state {q0}; accepting det-states contain a final state.
    finals = {f"q{st['id']}" for st in q._native.automaton()[0] if st["final"]}
    for i, peripheries in nodes:
        label = re.search(rf'^\s*d{i} \[.*label="d{i}\\n\{{([^}}]*)\}}', dot, re.M).group(1)
        accepting = any(x in finals for x in label.split(", "))
        if name not in ("next", "last", "max"):  # strategies add their own conditions
            assert (peripheries == "2") == accepting, (i, label)
    assert _DET_EDGE.findall(dot), "cached transitions are drawn"
    text = s.explain()
    assert text.startswith(q.explain())
    cache = text[len(q.explain()):]
    assert f"{stats['det_states']} interned now, {stats['det_states_created']} built" in cache
    assert f"{stats['cache_hits']} hits, {stats['cache_misses']} misses" in cache
    assert f"clears        {stats['cache_clears']}" in cache
    assert f"mode          {stats['cache_mode']}" in cache


def test_det_states_after_clears_and_in_uncached_mode():
    # The exploding determinization of tests/test_api.py: up to 2^6 det-states, a budget of 16.
    text = "SELECT NONE FROM S WHERE A ; A" + " : (A OR B)" * 6 + " WITHIN 20 EVENTS"
    q = ceql.compile(text)
    import random

    rng = random.Random(3)
    s = q.stream(max_det_states=16)
    for _ in range(40):
        s.push_many([{"type": rng.choice("AB")} for _ in range(100)])
        stats = s.stats()
        dot = q.to_dot(stream=s)
        assert len(_DET_NODE.findall(dot)) == stats["det_states"]
        if stats["cache_mode"] == "uncached":
            assert "uncached mode" in dot and not _DET_EDGE.findall(dot)
        assert "mode          " + stats["cache_mode"] in s.explain()
    assert stats["cache_clears"] > 0


def test_to_dot_stream_must_be_of_the_query():
    q, other = ceql.compile(QUERIES["seq"]), ceql.compile(QUERIES["seq"])
    with pytest.raises(ValueError, match="Stream of this query"):
        q.to_dot(stream=other.stream())
    with pytest.raises(TypeError, match="ceql.Stream"):
        q.to_dot(stream="nope")


def test_html_table_without_graphviz(monkeypatch):
    monkeypatch.setattr(cx, "graphviz_available", lambda: False)
    q = ceql.compile(QUERIES["as_filter"])
    assert q._repr_svg_() is None
    page = q._repr_html_()
    d = q.describe()
    assert page.count("<tr>") == 1 + d["transitions"] + sum(
        1 for s in q._native.automaton()[0] if not any(t["source"] == s["id"] for t in q._native.automaton()[1]))
    assert "<code>A[v &gt; 1]</code>" in page and "<i>final</i>" in page and "<i>initial</i>" in page


@pytest.mark.skipif(not cx.graphviz_available(), reason="Graphviz (dot and the graphviz extra) is not installed")
def test_svg_with_graphviz():
    q = ceql.compile(QUERIES["as_filter"])
    svg = q._repr_svg_()
    assert "<svg" in svg and q._repr_html_() is None
    # One SVG node group per state, one edge group per transition.
    d = q.describe()
    assert svg.count('class="node"') == d["states"] + 1  # + the start point
    assert svg.count('class="edge"') == d["transitions"] + 1  # + the arrow into q0


def test_svg_errors_name_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    with pytest.raises(ImportError, match=r"ceql\[graphviz\]"):
        cx.to_svg("digraph { a }")
    assert not cx.graphviz_available()


@pytest.mark.skipif(not cx.graphviz_available(), reason="Graphviz (dot and the graphviz extra) is not installed")
def test_svg_error_without_dot(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert shutil.which("dot") is None and not cx.graphviz_available()
    with pytest.raises(ceql.CeqlError, match="`dot` was not found") as e:
        cx.to_svg("digraph { a }")
    assert e.value.code == "GRAPHVIZ"
    q = ceql.compile(QUERIES["seq"])
    assert q._repr_svg_() is None and "<table" in q._repr_html_()


def test_module_examples():
    import doctest

    result = doctest.testmod(cx, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0


def test_explain_lists_the_filters_tested_per_valuation_and_the_measures():
    """A user's review: filters between events (PREV, aggregates) and measures were absent
    from explain(), so b[v > PREV(v)] seemed to vanish after the push-down."""
    q = ceql.compile("SELECT NEXT *, avg(b.v) AS m FROM S WHERE A AS a ; (B AS b)+ ; C AS c "
                     "FILTER b[v > PREV(v)] AND c[v > max(b.v)] AND a[v > 0] WITHIN 6 seconds")
    clauses = q.explain().split("\nClauses\n", 1)[1]
    assert "  tested        b[v > PREV(v)]\n                c[v > max(b.v)]\n" in clauses
    assert "the window comes first" in clauses
    assert "  measures      m = avg(b.v)\n" in clauses
    plain = ceql.compile("SELECT * FROM S WHERE A ; B FILTER B[v > 0] WITHIN 6 seconds").explain()
    assert "tested" not in plain and "measures" not in plain
