"""Redraws the automaton pictures of the documentation (docs/images/automaton-*.png,
docs/images/det-states-guide.png).

    python docs/tools/make_automaton.py

The README's first query, and the small example of docs/guide/explain.md with the det-states
of its stream, drawn by ``Query.to_dot()`` and Graphviz's ``dot`` (which must be on PATH:
``apt-get install graphviz``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import ceql

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"
#: The example of docs/guide/explain.md and the events its stream reads there.
GUIDE_QUERY = "SELECT * FROM S WHERE A AS x ; B+ ; C FILTER x[v > 1] WITHIN 5 EVENTS"
GUIDE_EVENTS = [{"type": "A", "v": 2}, {"type": "B"}, {"type": "X"}, {"type": "B"}, {"type": "C"}]


def readme_query() -> str:
    """The query of the README's first code block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    return re.search(r'ceql\.compile\("""(.*?)"""\)', block, re.S).group(1)


def draw(dot: str, name: str) -> None:
    path = IMAGES / name
    subprocess.run(["dot", "-Tpng", "-Gdpi=110", "-o", str(path)], input=dot, text=True, check=True)
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    draw(ceql.compile(readme_query()).to_dot(), "automaton-readme.png")
    guide = ceql.compile(GUIDE_QUERY)
    draw(guide.to_dot(), "automaton-guide.png")
    stream = guide.stream()
    stream.push_many(GUIDE_EVENTS)
    draw(guide.to_dot(stream=stream), "det-states-guide.png")


if __name__ == "__main__":
    main()
