"""The documentation cannot rot: every python block of the site's pages runs, and prints the
output its page shows (tests/docs_snippets.py says how blocks are found). The language guide's
examples are run a second time on the brute-force oracle (tests/oracle), so that the outputs
it shows are those of the specification, not only those of the engine."""

from __future__ import annotations

import pytest

from docs_snippets import ROOT, guide_pages, needs_spark, run_snippets, snippets, tutorial_pages
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


@pytest.mark.parametrize("page", [_param(p) for p in PAGES])
def test_page_examples(page, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "__docs__"}
    if page.startswith("guide/") and page != "guide/index.md":
        run_snippets(_helpers()[0], namespace)
    run_snippets(snippets(page), namespace)


def _oracle_show(events):
    """``show`` of the guide, evaluated by the oracle instead of the engine."""

    def show(query, stream, schema=None, **options):
        unknown = set(options) - {"time_field", "time_unit", "late"}
        assert not unknown, f"the oracle version of show() does not take {unknown}"
        # The oracle drops late events (reference semantics), which is the engine's late="drop".
        assert options.get("late", "drop") == "drop"
        res = evaluate(query, events(stream), schema=schema, time_field=options.get("time_field"),
                       time_unit=options.get("time_unit", "ns"))
        assert res.limit is None, "show() examples must not use LIMIT: which events it keeps is not specified"
        for start, end, data in res.matches():
            print(f"[{start},{end}]{{{','.join(map(str, data))}}}")
        if not res.matches():
            print("(none)")

    return show


@pytest.mark.parametrize("page", guide_pages())
def test_guide_outputs_are_the_oracles(page, monkeypatch):
    monkeypatch.chdir(ROOT)
    helper, others = _helpers()
    namespace = {"__name__": "__docs__"}
    run_snippets(helper, namespace)
    namespace["show"] = _oracle_show(namespace["events"])
    run_snippets(others if page == "guide/index.md" else snippets(page), namespace)
