"""mkdocs hooks of the documentation site (mkdocs.yml: ``hooks``).

The package's docstrings use Sphinx cross-reference roles (``:meth:`run```); mkdocstrings
renders the reference as code but keeps the role's prefix. This drops the prefix.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:meth|func|class|attr|mod|exc|data|obj):(?=<code>)")


def on_page_content(html: str, **kwargs) -> str:
    """Removes Sphinx role prefixes in front of inline code."""
    return _ROLE.sub("", html)
