"""Code examples of the documentation pages, for tests/test_docs.py.

A page's ```` ```python ```` blocks are run in order in one namespace, from the repository
root. A block followed (blank lines apart) by a ```` ```text title="Output" ```` block must
print exactly that text. A page containing ``<!-- docs-test: spark -->`` needs Spark.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# A fence may be indented (a block inside a list item): its body is dedented.
_FENCE = re.compile(r"^([ \t]*)```([\w-]*)([^\n]*)\n(.*?)^\1```[ \t]*$", re.M | re.S)


@dataclass
class Snippet:
    """One runnable block and the output the page shows for it (None: not shown)."""

    page: str
    line: int
    code: str
    expected: Optional[str]


def page_text(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def needs_spark(page: str) -> bool:
    """The page's examples run Spark (it says ``<!-- docs-test: spark -->``)."""
    return "<!-- docs-test: spark -->" in page_text(page)


def needs_plot(page: str) -> bool:
    """The page's examples draw with ``ceql.plot`` (the ``plot`` extra, matplotlib)."""
    return any("ceql.plot" in s.code for s in snippets(page))


def snippets(page: str) -> List[Snippet]:
    """The python blocks of ``page`` (relative to docs/) with their shown outputs."""
    text = page_text(page)
    out: List[Snippet] = []
    fences = list(_FENCE.finditer(text))
    for k, f in enumerate(fences):
        lang, info, body = f.group(2), f.group(3), textwrap.dedent(f.group(4))
        if lang == "python":
            out.append(Snippet(page, text.count("\n", 0, f.start()) + 1, body, None))
        elif lang == "text" and 'title="Output"' in info and out and k > 0 and fences[k - 1].group(2) == "python":
            between = text[fences[k - 1].end():f.start()]
            if not between.strip() and out[-1].expected is None:
                out[-1].expected = body
    return out


def normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def run_snippets(items: List[Snippet], namespace: Dict) -> None:
    """Runs the blocks in ``namespace``; asserts each shown output."""
    for s in items:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(s.code, f"{s.page}:{s.line}", "exec"), namespace)
        if s.expected is not None:
            got, want = normalise(buf.getvalue()), normalise(s.expected)
            assert got == want, f"{s.page}:{s.line}: the block prints\n{got}\n--- but the page shows\n{want}"


def guide_pages() -> List[str]:
    return sorted(str(p.relative_to(DOCS)) for p in (DOCS / "guide").glob("*.md"))


def tutorial_pages() -> List[str]:
    return sorted(str(p.relative_to(DOCS)) for p in (DOCS / "tutorials").glob("*.md"))
