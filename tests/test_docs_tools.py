"""docs/tools/rewrite_citations.py: reference citations become links to docs/language.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from docs_snippets import ROOT

_spec = importlib.util.spec_from_file_location("rewrite_citations", ROOT / "docs/tools/rewrite_citations.py")
rc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rc)


def test_every_numbered_section_of_language_md_has_its_anchor():
    text = (ROOT / "docs/language.md").read_text(encoding="utf-8")
    import re

    for number, anchor in re.findall(r"^#{2,3} (\d+(?:\.\d+[a-z]?)?)\.? .*\{#(s[0-9a-z-]+)\}$", text, re.M):
        assert anchor == rc.anchor(number), (number, anchor)
    for section in ["1.1a", "3.6", "3.13", "4.2", "5.5", "6.7", "7"]:
        assert rc.anchor(section) in rc.anchors()


def test_code_and_markdown_rewrites(tmp_path: Path):
    known = rc.anchors()
    rs = tmp_path / "x.rs"
    rs.write_text(
        "//! Partition states (reference §6.5, §6.7): one table.\n"
        "//! The tECS of [CORE] §5 (reference §6.2–6.4).\n"
        "// the reference's §6.1 says ε = n − 1, which contradicts §3.7\n"
        "// late (§3.7) and keys (§3.8); CORE paper (§6)\n",
        encoding="utf-8",
    )
    assert rc.rewrite(rs, known).splitlines() == [
        "//! Partition states (docs/language.md#s6-5, #s6-7): one table.",
        "//! The tECS of [CORE] §5 (docs/language.md#s6-2 to #s6-4).",
        "// the reference's §6.1 says ε = n − 1, which contradicts §3.7",
        "// late (docs/language.md#s3-7) and keys (docs/language.md#s3-8); CORE paper (§6)",
    ]
    kept = [c.reason for c in rc.changes(rs, known) if c.new is None]
    assert kept == ["cites a paper", "about the external reference's own text", "about the external reference's own text",
                    "cites a paper"]
    md = tmp_path / "docs" / "page.md"
    md.parent.mkdir()
    md.write_text("see reference §3.6 and [§3.7](x.md#s3-7)\n", encoding="utf-8")
    target = Path(rc.os.path.relpath(rc.LANGUAGE, md.parent)).as_posix()
    assert rc.rewrite(md, known) == f"see [§3.6]({target}#s3-6) and [§3.7](x.md#s3-7)\n"


def test_dry_run_on_the_repository_finds_only_known_sections(capsys):
    assert rc.main([]) == 0
    out = capsys.readouterr().out
    edits = {line.split()[1].split(":")[0] for line in out.splitlines() if line.startswith("EDIT ")}
    # The citations were rewritten (--apply); what is left on purpose: the explain
    # output's own text ("reference §5.2" means the language reference; the guide
    # page shows that output verbatim), the README's and architecture page's code
    # blocks (no links there), and this file's fixtures.
    assert edits <= {
        "README.md", "docs/architecture.md", "docs/guide/explain.md", "python/ceql/explain.py",
        "crates/ceql-engine/src/explain/cache.rs", "crates/ceql-engine/src/explain/formula.rs",
        "crates/ceql-engine/src/explain/mod.rs", "crates/ceql-engine/src/explain/text.rs",
        "tests/test_docs_tools.py",
    }, edits
    assert "no such section" not in out
