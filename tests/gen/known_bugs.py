"""Known engine bugs whose triggers the generator steers around, narrowly, so that the
differential suite stays green and keeps finding *other* disagreements.

Each entry of :data:`KNOWN_BUGS` names an engine bug (see tests/test_regressions.py).
Remove an entry once the engine is fixed (or set CEQL_DIFF_KNOWN_BUGS=include to generate
the triggers anyway)."""

from __future__ import annotations

import os as _os
from typing import List

KNOWN_BUGS = {
    # (all engine bugs found so far are fixed; see tests/test_regressions.py)
    # not an engine bug but an oracle/engine disagreement on an unclear point: NULL op 'str'
    # (oracle: NULL, no data error; engine: data error). Avoided: no NULL next to a bad value.
    "null_operand_type_error",
}
# Substrings of CeqlInternalError messages (engine panics) of known bugs: such cases are
# discarded (hypothesis.assume) rather than failed. Empty: the one found so far is fixed.
KNOWN_PANICS: List[str] = []
if _os.environ.get("CEQL_DIFF_KNOWN_BUGS") == "include":
    KNOWN_BUGS = set()
    KNOWN_PANICS = []


def avoid(bug: str) -> bool:
    """Whether the generator steers around the trigger of the known bug ``bug``."""
    return bug in KNOWN_BUGS


def is_known_panic(exc: BaseException) -> bool:
    """A CeqlInternalError of a known engine bug (KNOWN_PANICS)."""
    return any(p in str(exc) for p in KNOWN_PANICS)
