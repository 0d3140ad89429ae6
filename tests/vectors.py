"""The 67 test vectors of the CEQL reference specification (docs/ceql-reference.md §7), as data.

Each vector is a dict:

* ``id`` ("V01".."V67"), ``phase`` ("core" | "later"), ``what`` (short description)
* ``query``: the query text (for V25-V33, φ1/φ2/φ3 are substituted)
* ``schema``: a full ``CREATE STREAM`` text for the schema the vector uses (§7 "Schemas")
* ``events``: list of event dicts (``"type"``, optional ``"stream"``, attributes). Attributes the
  spec does not show are materialised with their default (0 / 0.0 / ''); ``k=null`` is ``None``.
* ``expected``: the complete set of complex events as a sorted list of
  ``(start, end, (data positions...))``, transcribed from the spec's table, or
  ``error``: the expected static error code (V44)
* ``limit``: the LIMIT n of the query, or None. For LIMIT vectors ``expected`` is the listed set
  that the emitted events are drawn from (the pre-LIMIT output), with min(n, listed) per end.
* ``time_field`` (V46, V49 only): ``"t"`` — the time stamp is the int attribute ``t`` of the
  default schema, taken in ns through the API's ``time_field=`` (choice made for this file: the
  default schema keeps ``t:int`` rather than declaring it ``primary_time``).
* ``events_text`` / ``expected_text``: the spec's notation, kept for readability.

The notation strings below are copied verbatim from the spec table and expanded by ``_events``
and ``_expected``.
"""

import re

# ----------------------------------------------------------------------------- schemas (§7)

DEFAULT_SCHEMA = """CREATE STREAM S {
  EVENT A { v:int, k:int, t:int, s:string },
  EVENT B { v:int, k:int, t:int, s:string },
  EVENT C { v:int, k:int, t:int, s:string },
  EVENT D { v:int, k:int, t:int, s:string },
  EVENT X { v:int, k:int, t:int, s:string }
}"""
_DEFAULT_ATTRS = {"v": 0, "k": 0, "t": 0, "s": ""}

# V17, V18, V53, V54
KW_SCHEMA = """CREATE STREAM S {
  EVENT A { k:int, w:int },
  EVENT B { k:int },
  EVENT Y { z:int }
}"""

# V25-V33: Figure 1 of [FCEP]
FIG1_SCHEMA = """CREATE STREAM S {
  EVENT T { id:int, temp:int },
  EVENT H { id:int, hum:int }
}"""

# V63
TWO_STREAMS_SCHEMA = """CREATE STREAM S1 {
  EVENT A { v:int },
  EVENT B { v:int }
}
CREATE STREAM S2 {
  EVENT A { v:int },
  EVENT C { v:int }
}"""

# V64
STOCK_SCHEMA = """CREATE STREAM S {
  EVENT BUY  { name:string, price:double, volume:int },
  EVENT SELL { name:string, price:double, volume:int }
}"""

# schema key -> (CREATE STREAM text, {(stream, type): default attribute values})
SCHEMAS = {
    "default": (DEFAULT_SCHEMA, {("S", t): _DEFAULT_ATTRS for t in "ABCDX"}),
    "kw": (KW_SCHEMA, {("S", "A"): {"k": 0, "w": 0}, ("S", "B"): {"k": 0}, ("S", "Y"): {"z": 0}}),
    "fig1": (FIG1_SCHEMA, {("S", "T"): {"id": 0, "temp": 0}, ("S", "H"): {"id": 0, "hum": 0}}),
    "two_streams": (TWO_STREAMS_SCHEMA, {("S1", "A"): {"v": 0}, ("S1", "B"): {"v": 0},
                                         ("S2", "A"): {"v": 0}, ("S2", "C"): {"v": 0}}),
    "stock": (STOCK_SCHEMA, {("S", "BUY"): {"name": "", "price": 0.0, "volume": 0},
                             ("S", "SELL"): {"name": "", "price": 0.0, "volume": 0}}),
}

FIG1_EVENTS = ("0:H(id=2,hum=25) 1:T(id=0,temp=45) 2:H(id=0,hum=20) 3:H(id=1,hum=25) 4:T(id=1,temp=40) "
               "5:T(id=0,temp=42) 6:T(id=1,temp=25) 7:H(id=1,hum=70) 8:H(id=0,hum=18)")

PHI1 = "(T AS x ; H AS y) FILTER x[temp > 40] AND y[hum <= 25] AND x[id = 0] AND y[id = 0]"
PHI2 = ("((T AS x ; H AS y) OR (H AS y ; T AS x)) FILTER x[temp > 40] AND y[hum <= 25] "
        "AND x[id = 0] AND y[id = 0]")
PHI3 = ("H AS x ; (T AS y FILTER y[id = 1])+ ; H AS z FILTER x[hum < 30] AND z[hum > 60] "
        "AND x[id = 1] AND z[id = 1]")


# ----------------------------------------------------------------------------- notation

def _value(text):
    if text == "null":
        return None
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"-?[0-9]+\.[0-9]+", text):
        return float(text)
    return text


def _events(notation, schema_key):
    """'0:A 1:B(v=5) 2:S2>C' -> list of event dicts, defaults filled in from the schema."""
    defaults = SCHEMAS[schema_key][1]
    streams = {s for (s, _) in defaults}
    out = []
    for pos, item in enumerate(notation.split()):
        m = re.fullmatch(r"([0-9]+):(?:([A-Za-z0-9_]+)>)?([A-Za-z0-9_]+)(?:\((.*)\))?", item)
        assert m, item
        assert int(m.group(1)) == pos, item
        stream, etype, args = m.group(2), m.group(3), m.group(4)
        key = (stream if stream else next(iter(streams)), etype)
        assert stream or len(streams) == 1, item
        ev = {}
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


def _expected(notation):
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


def _v(vid, phase, what, query, schema_key, events, expected=None, error=None, limit=None, time_field=None):
    v = {
        "id": vid,
        "phase": phase,
        "what": what,
        "query": query,
        "schema": SCHEMAS[schema_key][0],
        "schema_key": schema_key,
        "events": _events(events, schema_key),
        "events_text": events,
        "limit": limit,
    }
    if error is not None:
        v["error"] = error
    else:
        v["expected"] = _expected(expected)
        v["expected_text"] = expected
    if time_field is not None:
        v["time_field"] = time_field
    return v


# ----------------------------------------------------------------------------- the vectors

VECTORS = [
    _v('V01', 'core', 'non-contiguous sequencing (skip-till-any-match)', "SELECT * FROM S WHERE A ; B ; C",
       "default", '0:A 1:A 2:B 3:B 4:C 5:C',
       expected='[0,4]{0,2,4}; [0,4]{0,3,4}; [1,4]{1,2,4}; [1,4]{1,3,4}; [0,5]{0,2,5}; [0,5]{0,3,5}; [1,5]{1,2,5}; [1,5]{1,3,5}'),
    _v('V02', 'core', 'contiguous sequencing', "SELECT * FROM S WHERE A : B",
       "default", '0:A 1:B 2:A 3:C 4:B',
       expected='[0,1]{0,1}'),
    _v('V03', 'core', 'iteration', "SELECT * FROM S WHERE A ; B+ ; C",
       "default", '0:A 1:B 2:B 3:C',
       expected='[0,3]{0,1,2,3}; [0,3]{0,1,3}; [0,3]{0,2,3}'),
    _v('V04', 'core', "contiguous iteration after ';'", "SELECT * FROM S WHERE A ; B:+ ; C",
       "default", '0:A 1:B 2:X 3:B 4:C',
       expected='[0,4]{0,1,4}; [0,4]{0,3,4}'),
    _v('V05', 'core', 'iteration of a single type', "SELECT * FROM S WHERE A+",
       "default", '0:A 1:A 2:A',
       expected='[0,0]{0}; [0,1]{0,1}; [1,1]{1}; [0,2]{0,1,2}; [0,2]{0,2}; [1,2]{1,2}; [2,2]{2}'),
    _v('V06', 'core', 'iteration of a sequence', "SELECT * FROM S WHERE (A ; B)+",
       "default", '0:A 1:B 2:A 3:B',
       expected='[0,1]{0,1}; [0,3]{0,1,2,3}; [0,3]{0,3}; [2,3]{2,3}'),
    _v('V07', 'core', 'disjunction inside a sequence', "SELECT * FROM S WHERE A ; (B OR C) ; D",
       "default", '0:A 1:B 2:C 3:D',
       expected='[0,3]{0,1,3}; [0,3]{0,2,3}'),
    _v('V08', 'core', "precedence: ';' binds tighter than OR", "SELECT * FROM S WHERE A ; B OR C",
       "default", '0:A 1:B 2:C',
       expected='[0,1]{0,1}; [2,2]{2}'),
    _v('V09', 'core', 'precedence: AS binds tighter than OR; projection may give empty data', "SELECT x FROM S WHERE A OR B AS x",
       "default", '0:A 1:B',
       expected='[0,0]{}; [1,1]{1}'),
    _v('V10', 'core', 'projection on an AS variable', "SELECT x FROM S WHERE A ; B AS x",
       "default", '0:A 1:B',
       expected='[0,1]{1}'),
    _v('V11', 'core', 'projection on event-type variables merges duplicates', "SELECT A, C FROM S WHERE A ; B ; C",
       "default", '0:A 1:B 2:B 3:C',
       expected='[0,3]{0,3}'),
    _v('V12', 'core', 'SELECT NONE', "SELECT NONE FROM S WHERE A ; B ; C",
       "default", '0:A 1:B 2:C',
       expected='[0,2]{}'),
    _v('V13', 'core', 'FILTER on a variable bound to a sub-formula is for-all', "SELECT * FROM S WHERE (A ; B) AS x FILTER x[v > 2]",
       "default", '0:A(v=5) 1:B(v=5) 2:A(v=1) 3:B(v=5)',
       expected='[0,1]{0,1}; [0,3]{0,3}'),
    _v('V14', 'core', 'FILTER outside + on a variable bound inside + (all iterations)', "SELECT * FROM S WHERE A ; (B AS b)+ ; C FILTER b[v > 2]",
       "default", '0:A 1:B(v=5) 2:B(v=1) 3:C',
       expected='[0,3]{0,1,3}'),
    _v('V15', 'core', 'arithmetic, integer division, IN RANGE inclusive, LIKE is an unanchored regex', "SELECT * FROM S WHERE A FILTER A[v / 2 = 1 AND v IN RANGE(2, 3)] OR A[s LIKE 'b.r']",
       "default", '0:A(v=1) 1:A(v=2) 2:A(v=3) 3:A(v=4) 4:A(s=xbarx) 5:A(s=BAR)',
       expected='[1,1]{1}; [2,2]{2}; [4,4]{4}'),
    _v('V16', 'core', 'predicate precedence: NOT > AND > OR', "SELECT * FROM S WHERE A FILTER A[NOT v > 5 AND v > 2 OR v = 9]",
       "default", '0:A(v=1) 1:A(v=9) 2:A(v=3) 3:A(v=7)',
       expected='[1,1]{1}; [2,2]{2}'),
    _v('V17', 'core', 'missing attribute is NULL: comparisons are UNKNOWN, NOT UNKNOWN is UNKNOWN', "SELECT * FROM S WHERE (A OR B) AS x FILTER x[NOT w > 1]",
       "kw", '0:A(k=0,w=5) 1:B(k=0) 2:A(k=0,w=0)',
       expected='[2,2]{2}'),
    _v('V18', 'core', 'NULL inside OR: UNKNOWN OR TRUE is TRUE', "SELECT * FROM S WHERE (A OR B) AS x FILTER x[w > 1 OR k = 0]",
       "kw", '0:A(k=1,w=5) 1:B(k=0) 2:A(k=1,w=0) 3:B(k=1)',
       expected='[0,0]{0}; [1,1]{1}'),
    _v('V19', 'core', 'negative constants and unary minus', "SELECT * FROM S WHERE A FILTER A[-v > 0 AND v > -3]",
       "default", '0:A(v=-2) 1:A(v=-5) 2:A(v=2)',
       expected='[0,0]{0}'),
    _v('V20', 'core', 'IN set, NOT IN, open range', "SELECT * FROM S WHERE A FILTER A[v IN {1, 3} OR v NOT IN {..10}]",
       "default", '0:A(v=1) 1:A(v=2) 2:A(v=3) 3:A(v=11)',
       expected='[0,0]{0}; [2,2]{2}; [3,3]{3}'),
    _v('V21', 'core', 'NOT(...) consumes one unmarked event', "SELECT * FROM S WHERE A ; NOT(B) ; C",
       "default", '0:A 1:X 2:B 3:C 4:A 5:B 6:C',
       expected='[0,3]{0,3}; [0,6]{0,6}'),
    _v('V22', 'core', 'no B strictly between A and C (at least one event between)', "SELECT * FROM S WHERE A : NOT(B):+ : C",
       "default", '0:A 1:X 2:C 3:A 4:B 5:C 6:A 7:X 8:X 9:C',
       expected='[0,2]{0,2}; [6,9]{6,9}'),
    _v('V23', 'core', 'NOT with a filter', "SELECT * FROM S WHERE A : NOT(B FILTER B[v > 5]) : C",
       "default", '0:A 1:B(v=9) 2:C 3:A 4:B(v=1) 5:C',
       expected='[3,5]{3,5}'),
    _v('V24', 'core', 'NOT(...) as first element: interval starts at the unmarked event', "SELECT * FROM S WHERE NOT(B) ; C",
       "default", '0:X 1:B 2:C',
       expected='[0,2]{2}'),
    _v('V25', 'core', 'Foundations phi1', "SELECT * FROM S WHERE " + PHI1,
       "fig1", FIG1_EVENTS,
       expected='[1,2]{1,2}; [1,8]{1,8}; [5,8]{5,8}'),
    _v('V26', 'core', 'Foundations phi2', "SELECT * FROM S WHERE " + PHI2,
       "fig1", FIG1_EVENTS,
       expected='[1,2]{1,2}; [2,5]{2,5}; [1,8]{1,8}; [5,8]{5,8}'),
    _v('V27', 'core', 'Foundations phi3 (filter inside +)', "SELECT * FROM S WHERE " + PHI3,
       "fig1", FIG1_EVENTS,
       expected='[3,7]{3,4,6,7}; [3,7]{3,4,7}; [3,7]{3,6,7}'),
    _v('V28', 'later', 'Foundations STRICT(phi1)', "SELECT STRICT * FROM S WHERE " + PHI1,
       "fig1", FIG1_EVENTS,
       expected='[1,2]{1,2}'),
    _v('V29', 'later', 'Foundations NEXT(phi1)', "SELECT NEXT * FROM S WHERE " + PHI1,
       "fig1", FIG1_EVENTS,
       expected='[1,2]{1,2}; [1,8]{1,8}'),
    _v('V30', 'later', 'Foundations LAST(phi1)', "SELECT LAST * FROM S WHERE " + PHI1,
       "fig1", FIG1_EVENTS,
       expected='[1,2]{1,2}; [5,8]{5,8}'),
    _v('V31', 'later', 'Foundations MAX(phi1)', "SELECT MAX * FROM S WHERE " + PHI1,
       "fig1", FIG1_EVENTS,
       expected='[1,2]{1,2}; [1,8]{1,8}; [5,8]{5,8}'),
    _v('V32', 'later', 'Foundations NEXT(phi3) = LAST(phi3) = MAX(phi3)', "SELECT MAX * FROM S WHERE " + PHI3,
       "fig1", FIG1_EVENTS,
       expected='[3,7]{3,4,6,7}'),
    _v('V33', 'later', 'Foundations NEXT(phi2)', "SELECT NEXT * FROM S WHERE " + PHI2,
       "fig1", FIG1_EVENTS,
       expected='[1,2]{1,2}; [2,5]{2,5}; [1,8]{1,8}'),
    _v('V34', 'later', 'STRICT on A ; B', "SELECT STRICT * FROM S WHERE A ; B",
       "default", '0:A 1:A 2:B 3:B',
       expected='[1,2]{1,2}'),
    _v('V35', 'later', 'NEXT on A ; B', "SELECT NEXT * FROM S WHERE A ; B",
       "default", '0:A 1:A 2:B 3:B',
       expected='[0,2]{0,2}; [0,3]{0,3}'),
    _v('V36', 'later', 'LAST on A ; B', "SELECT LAST * FROM S WHERE A ; B",
       "default", '0:A 1:A 2:B 3:B',
       expected='[1,2]{1,2}; [1,3]{1,3}'),
    _v('V37', 'later', 'MAX on A ; B', "SELECT MAX * FROM S WHERE A ; B",
       "default", '0:A 1:A 2:B 3:B',
       expected='[0,2]{0,2}; [1,2]{1,2}; [0,3]{0,3}; [1,3]{1,3}'),
    _v('V38', 'later', 'same-end MAX keeps {0}', "SELECT MAX * FROM S WHERE A+",
       "default", '0:A 1:A',
       expected='[0,0]{0}; [0,1]{0,1}'),
    _v('V39', 'later', 'NEXT on Kleene keeps the run with all B', "SELECT NEXT * FROM S WHERE A ; B+ ; C",
       "default", '0:A 1:B 2:B 3:A 4:B 5:C',
       expected='[0,5]{0,1,2,4,5}'),
    _v('V40', 'later', 'strategy before window: preferred match outside the window suppresses output', "SELECT NEXT * FROM S WHERE A ; B WITHIN 2 EVENTS",
       "default", '0:A 1:X 2:A 3:B',
       expected='(none)'),
    _v('V41', 'later', 'STRICT contiguity is measured in the partition', "SELECT STRICT * FROM S WHERE A ; B PARTITION BY [k]",
       "default", '0:A(k=1) 1:X(k=2) 2:B(k=1) 3:A(k=1) 4:X(k=1) 5:B(k=1)',
       expected='[0,2]{0,2}'),
    _v('V42', 'core', 'unsafe but satisfiable: x captures both events (set semantics)', "SELECT * FROM S WHERE (A AS x OR B AS y) ; A AS x",
       "default", '0:B 1:A 2:A',
       expected='[0,1]{0,1}; [0,2]{0,2}; [1,2]{1,2}'),
    _v('V43', 'core', 'duplicate runs give one complex event', "SELECT * FROM S WHERE (A AS x) OR (A AS y)",
       "default", '0:A',
       expected='[0,0]{0}'),
    _v('V44', 'core', 'filter on a variable bound only outside the filtered sub-formula is rejected', "SELECT * FROM S WHERE (A FILTER B[v > 5]) ; B",
       "default", '0:A 1:B(v=9)',
       error="E0301"),
    _v('V45', 'core', 'WITHIN n EVENTS is inclusive', "SELECT * FROM S WHERE A ; C WITHIN 2 EVENTS",
       "default", '0:A 1:B 2:C 3:A 4:B 5:B 6:C',
       expected='[0,2]{0,2}'),
    _v('V46', 'core', 'time-unit window is inclusive (time stamps in ns)', "SELECT * FROM S WHERE A ; B WITHIN 2 SECONDS",
       "default", '0:A(t=0) 1:B(t=2000000000) 2:B(t=2000000001)',
       expected='[0,1]{0,1}', time_field="t"),
    _v('V47', 'core', 'attribute window is inclusive: t_j - t_i <= n', "SELECT * FROM S WHERE A ; B WITHIN 2 [t]",
       "default", '0:A(t=0) 1:B(t=1) 2:B(t=2) 3:B(t=3)',
       expected='[0,1]{0,1}; [0,2]{0,2}'),
    _v('V48', 'core', 'late event (time decreases) is dropped', "SELECT * FROM S WHERE A ; B WITHIN 100 [t]",
       "default", '0:A(t=5) 1:B(t=3) 2:B(t=6)',
       expected='[0,2]{0,2}'),
    _v('V49', 'core', 'no WITHIN: unbounded', "SELECT * FROM S WHERE A ; B",
       "default", '0:A(t=0) 1:B(t=1000000000) 2:B(t=1000000001)',
       expected='[0,1]{0,1}; [0,2]{0,2}', time_field="t"),
    _v('V50', 'core', 'window on global positions also under PARTITION BY', "SELECT * FROM S WHERE A ; B PARTITION BY [k] WITHIN 2 EVENTS",
       "default", '0:A(k=1) 1:X(k=2) 2:X(k=2) 3:B(k=1) 4:A(k=1) 5:B(k=1)',
       expected='[4,5]{4,5}'),
    _v('V51', 'core', 'PARTITION BY reports global positions', "SELECT * FROM S WHERE A ; B PARTITION BY [k]",
       "default", '0:X(k=5) 1:A(k=1) 2:A(k=2) 3:B(k=2) 4:B(k=1)',
       expected='[2,3]{2,3}; [1,4]{1,4}'),
    _v('V52', 'core', "':' contiguity is measured inside the partition", "SELECT * FROM S WHERE A : B PARTITION BY [k]",
       "default", '0:A(k=1) 1:X(k=2) 2:B(k=1) 3:A(k=2) 4:X(k=1) 5:B(k=1)',
       expected='[0,2]{0,2}'),
    _v('V53', 'core', 'events without the partition attribute belong to no partition', "SELECT * FROM S WHERE A : B PARTITION BY [k] WITHIN 5 EVENTS",
       "kw", '0:A(k=1) 1:Y(z=7) 2:B(k=1)',
       expected='[0,2]{0,2}'),
    _v('V54', 'core', 'attribute group: first declared attribute of the group is the key', "SELECT * FROM S WHERE A ; B PARTITION BY [w, k]",
       "kw", '0:A(k=1,w=3) 1:B(k=3) 2:B(k=1)',
       expected='[0,1]{0,1}'),
    _v('V55', 'core', 'two key groups', "SELECT * FROM S WHERE A ; B PARTITION BY [k], [v]",
       "default", '0:A(k=1,v=1) 1:A(k=1,v=2) 2:B(k=1,v=2) 3:B(k=2,v=2)',
       expected='[1,2]{1,2}'),
    _v('V56', 'core', 'CONSUME BY ANY', "SELECT * FROM S WHERE A ; B ; C CONSUME BY ANY",
       "default", '0:A 1:A 2:B 3:B 4:C 5:C 6:A 7:B 8:C',
       expected='[0,4]{0,2,4}; [0,4]{0,3,4}; [1,4]{1,2,4}; [1,4]{1,3,4}; [6,8]{6,7,8}'),
    _v('V57', 'core', 'CONSUME BY ANY discards Kleene extensions', "SELECT * FROM S WHERE A ; B+ CONSUME BY ANY",
       "default", '0:A 1:B 2:B',
       expected='[0,1]{0,1}'),
    _v('V58', 'core', 'CONSUME BY PARTITION resets only the matching partition', "SELECT * FROM S WHERE A ; B PARTITION BY [k] CONSUME BY PARTITION",
       "default", '0:A(k=1) 1:A(k=2) 2:B(k=1) 3:B(k=1) 4:B(k=2) 5:B(k=2)',
       expected='[0,2]{0,2}; [1,4]{1,4}'),
    _v('V59', 'core', 'CONSUME BY ANY resets every partition', "SELECT * FROM S WHERE A ; B PARTITION BY [k] CONSUME BY ANY",
       "default", '0:A(k=1) 1:A(k=2) 2:B(k=1) 3:B(k=1) 4:B(k=2) 5:B(k=2)',
       expected='[0,2]{0,2}'),
    _v('V60', 'core', 'LIMIT n bounds the complex events emitted per position', "SELECT * FROM S WHERE A ; B LIMIT 1",
       "default", '0:A 1:A 2:B 3:B',
       expected='[0,2]{0,2}; [1,2]{1,2}; [0,3]{0,3}; [1,3]{1,3}', limit=1),
    _v('V61', 'core', 'LIMIT 0 emits nothing', "SELECT * FROM S WHERE A ; B LIMIT 0",
       "default", '0:A 1:B',
       expected='[0,1]{0,1}', limit=0),
    _v('V62', 'core', 'stream-qualified event type', "SELECT * FROM S WHERE S>A ; B FILTER S>A[v = 1]",
       "default", '0:A(v=1) 1:A(v=2) 2:B',
       expected='[0,2]{0,2}'),
    _v('V63', 'core', 'two streams: unqualified type matches both, qualified only one', "SELECT * FROM S1, S2 WHERE S2>A ; (A AS y) FILTER y[v > 0]",
       "two_streams", '0:S2>A 1:S1>A(v=1) 2:S2>C 3:S2>A(v=2) 4:S1>B',
       expected='[0,1]{0,1}; [0,3]{0,3}'),
    _v('V64', 'core', 'CORE paper Q1 shape (stock)', "SELECT * FROM S WHERE SELL AS msft ; SELL AS intel ; SELL AS amzn FILTER msft[name = 'MSFT'] AND msft[price > 100] AND intel[name = 'INTC'] AND amzn[name = 'AMZN'] AND amzn[price < 2000]",
       "stock", '0:SELL(name=MSFT,price=101) 1:SELL(name=INTC,price=5) 2:BUY(name=AMZN,price=10) 3:SELL(name=MSFT,price=99) 4:SELL(name=AMZN,price=1999.5) 5:SELL(name=AMZN,price=2000)',
       expected='[0,4]{0,1,4}'),
    _v('V65', 'core', 'FILTER on S>T also applies to events matched by an unqualified T', "SELECT * FROM S WHERE A FILTER S>A[v = 1]",
       "default", '0:A(v=1) 1:A(v=2)',
       expected='[0,0]{0}'),
    _v('V66', 'core', 'NOT over a filter disjunction negates the whole disjunction', "SELECT * FROM S WHERE A : NOT(B FILTER B[v > 5] OR B[v < 2]) : C",
       "default", '0:A 1:B(v=3) 2:C 3:A 4:B(v=9) 5:C',
       expected='[0,2]{0,2}'),
    _v('V67', 'core', 'NULL partition key value: the event belongs to no partition', "SELECT * FROM S WHERE A ; B PARTITION BY [k]",
       "default", '0:A(k=null) 1:A(k=1) 2:B(k=null) 3:B(k=1)',
       expected='[1,3]{1,3}'),
]

BY_ID = {v["id"]: v for v in VECTORS}

assert len(VECTORS) == 67 and [v["id"] for v in VECTORS] == ["V%02d" % i for i in range(1, 68)]
