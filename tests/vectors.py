"""The test vectors of the CEQL specification, read from ``docs/language.md`` docs/language.md#s7.

The page is the single source: its docs/language.md#s7-1 holds the schemas (fenced ``sql`` blocks titled with
the schema's name), the Fig. 1 input and the formulas φ1-φ3; its docs/language.md#s7-2 table holds one row per
vector. Nothing here restates a vector, so the documentation cannot drift from the tests.

Each vector is a dict:

* ``id`` ("V01"...), ``phase`` ("core", or "later" for the table's ``strategy`` group),
  ``what`` (short description)
* ``query``: the query text (φ1/φ2/φ3 substituted)
* ``schema``: the ``CREATE STREAM`` text of the schema the vector uses; ``schema_key`` its name
* ``events``: list of event dicts (``"type"``, optional ``"stream"``, attributes). Attributes
  the table does not show are materialised with their default (0 / 0.0 / '' / False);
  ``k=null`` is ``None``.
* ``expected``: the complete set of complex events as a sorted list of
  ``(start, end, (data positions...))``, or ``error``: the expected static error code
* ``limit``: the LIMIT n of the query, or None. For LIMIT vectors ``expected`` is the listed
  set the emitted events are drawn from (min(n, listed) per end).
* ``time_field`` (only where the schema column says ``time `t```): ``"t"``, the time stamp in
  ns through the API's ``time_field=``.
* ``events_text`` / ``expected_text``: the page's notation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Tuple

LANGUAGE_MD = Path(__file__).resolve().parent.parent / "docs" / "language.md"

_DEFAULTS = {"int": 0, "long": 0, "integer": 0, "double": 0.0, "float": 0.0, "string": "", "str": "",
             "boolean": False, "bool": False, "primary_time": 0}


def _section(text: str, anchor: str, next_anchor: str) -> str:
    """The text between the headings with ``{#anchor}`` and ``{#next_anchor}``."""
    start = re.search(r"^#+ .*\{#%s\}\s*$" % re.escape(anchor), text, re.M)
    end = re.search(r"^#+ .*\{#%s\}\s*$" % re.escape(next_anchor), text, re.M)
    assert start and end and start.end() < end.start(), f"language.md: sections {anchor}..{next_anchor} not found"
    return text[start.end():end.start()]


def _schemas(section: str) -> Dict[str, str]:
    """``sql title="name"`` fenced blocks -> {name: CREATE STREAM text}."""
    blocks = re.findall(r'^```sql title="([A-Za-z0-9_]+)"\n(.*?)^```', section, re.M | re.S)
    assert blocks, "language.md docs/language.md#s7-1: no schema blocks"
    return {name: body.strip() for name, body in blocks}


def _defaults(schema_text: str) -> Dict[Tuple[str, str], Dict[str, object]]:
    """{(stream, type): {attribute: default value}} of a CREATE STREAM text."""
    out: Dict[Tuple[str, str], Dict[str, object]] = {}
    for stream, body in re.findall(r"CREATE STREAM (\w+) \{(.*?)\n\}", schema_text, re.S):
        for etype, attrs in re.findall(r"EVENT (\w+)\s*\{([^}]*)\}", body):
            decl = [a.split(":") for a in attrs.split(",") if a.strip()]
            out[(stream, etype)] = {n.strip(): _DEFAULTS[t.strip()] for n, t in decl}
    return out


def _value(text: str):
    if text == "null":
        return None
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"-?[0-9]+\.[0-9]+", text):
        return float(text)
    return text


def _events(notation: str, defaults) -> List[dict]:
    """'0:A 1:B(v=5) 2:S2>C' -> list of event dicts, defaults filled in from the schema."""
    streams = {s for (s, _) in defaults}
    out = []
    for pos, item in enumerate(notation.split()):
        m = re.fullmatch(r"([0-9]+):(?:([A-Za-z0-9_]+)>)?([A-Za-z0-9_]+)(?:\((.*)\))?", item)
        assert m, item
        assert int(m.group(1)) == pos, item
        stream, etype, args = m.group(2), m.group(3), m.group(4)
        assert stream or len(streams) == 1, item
        key = (stream if stream else next(iter(streams)), etype)
        ev: dict = {}
        if stream:
            ev["stream"] = stream
        ev["type"] = etype
        ev.update(defaults[key])
        if args:
            for kv in args.split(","):
                k, v = kv.split("=", 1)
                assert k in defaults[key], (item, k)
                ev[k] = _value(v)
        out.append(ev)
    return out


def _expected(notation: str) -> List[Tuple[int, int, Tuple[int, ...]]]:
    """'[0,4]{0,2,4}; [0,0]{}' -> [(0, 4, (0, 2, 4)), (0, 0, ())]; '(none)' -> []."""
    if notation.strip() == "(none)":
        return []
    out = []
    for item in notation.split(";"):
        m = re.fullmatch(r"\s*\[([0-9]+),([0-9]+)\]\{([0-9,]*)\}\s*", item)
        assert m, item
        d = tuple(int(x) for x in m.group(3).split(",")) if m.group(3) else ()
        out.append((int(m.group(1)), int(m.group(2)), d))
    return sorted(out, key=lambda c: (c[1], c[0], c[2]))


def _code(cell: str) -> str:
    """The text of a table cell that is one inline code span."""
    m = re.fullmatch(r"`([^`]*)`", cell.strip())
    assert m, cell
    return m.group(1)


def _parse(text: str):
    setup = _section(text, "s7-1", "s7-2")
    table = _section(text, "s7-2", "s7-3")
    schemas = _schemas(setup)
    m = re.search(r"\*\*Fig\. 1\*\* is the input\s+`([^`]+)`", setup)
    assert m, "language.md docs/language.md#s7-1: Fig. 1 input not found"
    fig1 = m.group(1)
    phis = dict(re.findall(r"^\* `(φ[0-9]) = (.*)`$", setup, re.M))
    assert set(phis) == {"φ1", "φ2", "φ3"}, phis

    vectors = []
    for line in table.splitlines():
        if not re.match(r"\| V[0-9]+ \|", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 8, line
        vid, group, what, schema_cell, query_cell, input_cell, expected_cell, _core_cpp = cells
        assert group in ("core", "strategy"), line
        sm = re.fullmatch(r"(\w+)(, time `(\w+)`)?", schema_cell)
        assert sm and sm.group(1) in schemas, line
        key = sm.group(1)
        query = _code(query_cell)
        for name, phi in phis.items():
            query = query.replace(name, phi)
        events_text = fig1 if input_cell == "Fig. 1" else _code(input_cell)
        lm = re.search(r"\bLIMIT ([0-9]+)\s*$", query)
        v = {
            "id": vid,
            "phase": "core" if group == "core" else "later",
            "what": what,
            "query": query,
            "schema": schemas[key],
            "schema_key": key,
            "events": _events(events_text, _defaults(schemas[key])),
            "events_text": events_text,
            "limit": int(lm.group(1)) if lm else None,
        }
        em = re.fullmatch(r"error `(E[0-9]{4})`", expected_cell)
        if em:
            v["error"] = em.group(1)
        else:
            lim = re.fullmatch(r"at most ([0-9]+) per end, out of (`[^`]*`)", expected_cell)
            if lim:
                assert v["limit"] == int(lim.group(1)), line
                expected_cell = lim.group(2)
            expected_text = "(none)" if expected_cell == "(none)" else _code(expected_cell)
            v["expected"] = _expected(expected_text)
            v["expected_text"] = expected_text
        if sm.group(3):
            v["time_field"] = sm.group(3)
        vectors.append(v)
    return schemas, fig1, phis, vectors


SCHEMA_TEXTS, FIG1_EVENTS, _PHIS, VECTORS = _parse(LANGUAGE_MD.read_text(encoding="utf-8"))

DEFAULT_SCHEMA = SCHEMA_TEXTS["default"]
KW_SCHEMA = SCHEMA_TEXTS["kw"]
FIG1_SCHEMA = SCHEMA_TEXTS["fig1"]
TWO_STREAMS_SCHEMA = SCHEMA_TEXTS["two_streams"]
STOCK_SCHEMA = SCHEMA_TEXTS["stock"]
# schema name -> (CREATE STREAM text, {(stream, type): default attribute values})
SCHEMAS = {k: (t, _defaults(t)) for k, t in SCHEMA_TEXTS.items()}
PHI1, PHI2, PHI3 = _PHIS["φ1"], _PHIS["φ2"], _PHIS["φ3"]

BY_ID = {v["id"]: v for v in VECTORS}

# The ids are consecutive (V01, V02, ...); new constructs add rows at the end.
assert len(VECTORS) >= 67 and [v["id"] for v in VECTORS] == ["V%02d" % i for i in range(1, len(VECTORS) + 1)]
