"""Rewrites the citations of the external CEQL reference ("reference §3.6", "spec §7", a bare
"§3.6") in code, tests and docs into links to this project's specification,
``docs/language.md#s3-6``. docs/language.md keeps the reference's section numbers, so the
mapping is one to one: §N.M -> ``docs/language.md#sN-M`` (§1.1a -> ``#s1-1a``).

    python docs/tools/rewrite_citations.py            # dry run: prints every change, writes nothing
    python docs/tools/rewrite_citations.py --apply    # writes the changes
    python docs/tools/rewrite_citations.py --apply crates/ceql-engine   # only under these paths

In code and tests, ``(reference §6.5, §6.7)`` becomes ``(docs/language.md#s6-5, #s6-7)``; in
Markdown files it becomes a relative link, ``([§6.5](docs/language.md#s6-5), ...)``.

Not rewritten, and listed in the dry run for a person to decide:

* citations of the papers: a ``§`` right after ``[CORE]``, ``[FCEP]``, ``CORE`` or ``paper``,
  and everything under ``benches/`` (which cites the CORE paper's §6);
* lines about the external reference's own text, which docs/language.md departs from or
  comments on ("the reference's §6.1 says ...", "falls back", "contradicts", "literally"):
  pointing them at docs/language.md would change their meaning;
* sections that docs/language.md does not have.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Iterator, List, NamedTuple, Optional, Set

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE = ROOT / "docs" / "language.md"
DEFAULT_PATHS = ["crates", "python", "tests", "benches", "README.md", "docs"]
SUFFIXES = {".rs", ".py", ".pyi", ".pest", ".md", ".toml"}
SKIP = {LANGUAGE, Path(__file__).resolve()}

_SECTION = r"\d+(?:\.\d+[a-z]?)?"
_PREFIX = r"(?:(?:the\s+)?(?:[Rr]eference|[Ss]pec(?:ification)?|``docs/ceql-reference\.md``|docs/ceql-reference\.md)\s+)?"
CITATION = re.compile(
    rf"(?P<prefix>{_PREFIX})§(?P<first>{_SECTION})(?P<rest>(?:\s*(?:,|and|-|–)\s*§?{_SECTION}(?![\d.]\d))*)"
)
_ITEM = re.compile(rf"(?P<sep>\s*(?:,|and|-|–)\s*)§?(?P<sec>{_SECTION})")
PAPER_BEFORE = re.compile(r"(\[CORE\]|\[FCEP\]|\bCORE|paper'?s?)\s*\(?\s*$")
EXTERNAL_TEXT = re.compile(r"reference's|\bsays\b|contradict|literally|falls back", re.I)


class Change(NamedTuple):
    """One citation: where, what, and its replacement (None: kept, with the reason)."""

    path: Path
    line: int
    old: str
    new: Optional[str]
    reason: str


def anchors() -> Set[str]:
    """The explicit anchors of docs/language.md (``s3-6``...)."""
    return set(re.findall(r"\{#(s[0-9a-z-]+)\}", LANGUAGE.read_text(encoding="utf-8")))


def anchor(section: str) -> str:
    return "s" + section.replace(".", "-")


def files(paths: List[str]) -> Iterator[Path]:
    for p in paths:
        path = (ROOT / p).resolve()
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for f in candidates:
            if f.is_file() and f.suffix in SUFFIXES and f not in SKIP and "target" not in f.parts:
                yield f


def _replacement(path: Path, m: "re.Match[str]") -> str:
    items = [("", m.group("first"))] + [(i.group("sep"), i.group("sec")) for i in _ITEM.finditer(m.group("rest"))]
    if path.suffix == ".md":
        target = os.path.relpath(LANGUAGE, path.parent).replace(os.sep, "/")
        parts = []
        for sep, sec in items:
            sep = " to " if sep.strip() in ("-", "–") else sep
            parts.append(f"{sep}[§{sec}]({target}#{anchor(sec)})")
        return "".join(parts)
    parts = []
    for k, (sep, sec) in enumerate(items):
        sep = " to " if sep.strip() in ("-", "–") else sep
        parts.append(f"{sep}{'docs/language.md' if k == 0 else ''}#{anchor(sec)}")
    return "".join(parts)


def _in_benches(path: Path) -> bool:
    try:
        return "benches" in path.resolve().relative_to(ROOT).parts
    except ValueError:
        return False


def _linked(path: Path, line: str, m: "re.Match[str]") -> bool:
    """In Markdown, a citation that is already the text of a link (``[§3.6](...)``)."""
    return path.suffix == ".md" and re.match(r"[^\[\]]*\]\(", line[m.end():]) is not None


def _where(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def changes(path: Path, known: Set[str]) -> Iterator[Change]:
    """The citations of one file, with their replacements or the reason to keep them."""
    text = path.read_text(encoding="utf-8")
    in_benches = _in_benches(path)
    for n, line in enumerate(text.splitlines(), 1):
        for m in CITATION.finditer(line):
            if _linked(path, line, m):
                continue
            sections = [m.group("first")] + [i.group("sec") for i in _ITEM.finditer(m.group("rest"))]
            before = line[: m.start()]
            if in_benches or (not m.group("prefix") and PAPER_BEFORE.search(before)):
                yield Change(path, n, m.group(0), None, "cites a paper")
            elif EXTERNAL_TEXT.search(line):
                yield Change(path, n, m.group(0), None, "about the external reference's own text")
            elif any(anchor(s) not in known for s in sections):
                yield Change(path, n, m.group(0), None, "no such section in docs/language.md")
            else:
                yield Change(path, n, m.group(0), _replacement(path, m), "")


def rewrite(path: Path, known: Set[str]) -> str:
    """The text of ``path`` with its rewritable citations replaced."""
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        def sub(m: "re.Match[str]") -> str:
            before = line[: m.start()]
            sections = [m.group("first")] + [i.group("sec") for i in _ITEM.finditer(m.group("rest"))]
            if (_linked(path, line, m) or _in_benches(path) or (not m.group("prefix") and PAPER_BEFORE.search(before))
                    or EXTERNAL_TEXT.search(line) or any(anchor(s) not in known for s in sections)):
                return m.group(0)
            return _replacement(path, m)

        out.append(CITATION.sub(sub, line))
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apply", action="store_true", help="write the changes (default: dry run)")
    ap.add_argument("paths", nargs="*", default=DEFAULT_PATHS, help="files or directories, relative to the repository")
    args = ap.parse_args(argv)
    known = anchors()
    done, kept, mapping = 0, 0, {}
    for f in files(args.paths):
        found = list(changes(f, known))
        if not found:
            continue
        for c in found:
            where = f"{_where(c.path)}:{c.line}"
            if c.new is None:
                kept += 1
                print(f"KEEP {where}: {c.old!r} ({c.reason})")
            else:
                done += 1
                print(f"EDIT {where}: {c.old!r} -> {c.new!r}")
                for s in re.findall(_SECTION, c.old.split("§", 1)[1]):
                    mapping[s] = f"docs/language.md#{anchor(s)}"
        if args.apply and any(c.new for c in found):
            f.write_text(rewrite(f, known), encoding="utf-8")
    print(f"\n{done} citations {'rewritten' if args.apply else 'to rewrite'}, {kept} kept for review")
    for s in sorted(mapping, key=lambda s: [int(x) if x.isdigit() else x for x in re.findall(r"\d+|[a-z]", s)]):
        print(f"  §{s:<5} -> {mapping[s]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
