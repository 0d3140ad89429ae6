"""Redraws the automaton picture of the README (docs/images/automaton-readme.png).

    python docs/tools/make_automaton.py

The README's first query, drawn by ``Query.to_dot()`` and Graphviz's ``dot`` (which must be on
PATH: ``apt-get install graphviz``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import ceql

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "docs" / "images" / "automaton-readme.png"


def readme_query() -> str:
    """The query of the README's first code block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    return re.search(r'ceql\.compile\("""(.*?)"""\)', block, re.S).group(1)


def main() -> None:
    dot = ceql.compile(readme_query()).to_dot()
    subprocess.run(["dot", "-Tpng", "-Gdpi=110", "-o", str(IMAGE)], input=dot, text=True, check=True)
    print(f"wrote {IMAGE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
