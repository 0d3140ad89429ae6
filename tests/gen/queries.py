"""The entry point: :func:`cases`, a Hypothesis strategy of :class:`Case` for a profile
(formula, clauses, schema, options and events)."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from hypothesis import strategies as st

from .case import CLAUSE_ORDER, Case, join_clauses
from .event_streams import events_strategy
from .formulas import formula, known_variables, resolve_ill
from .profiles import Profile, prof_decl
from .rendering import render
from .schemas import SCHEMA, SCHEMA_MULTI, SCHEMA_PRIMARY_TIME
from .static_errors import inject_static_error
from .trees import var_text


def _kw_caser(draw, enabled: bool):
    mode = draw(st.integers(0, 5)) if enabled else 0
    if mode == 1:
        return lambda w: w.lower()
    if mode == 2:
        return lambda w: w.capitalize()
    return lambda w: w


@st.composite
def window_clause(draw, prof: Profile, kw, schema: bool):
    """(clause text, kind, time_field, time_unit, primary_time schema?)"""
    kinds = ([] if prof.window_required else [None]) + list(prof.windows)
    kind = draw(st.sampled_from(kinds))
    if kind is None:
        return "", None, None, "ns", False
    if kind == "events":
        n = draw(st.integers(0, 6))
        return " %s %d %s" % (kw("WITHIN"), n, kw("EVENTS")), "events", None, "ns", False
    if kind == "attr":
        n = draw(st.integers(0, 5))
        return " %s %d [t]" % (kw("WITHIN"), n), "attr", None, "ns", False
    # duration: the coordinate is ts, in ticks; see events() for the scale
    # ts is given in ticks of 0.5 s converted to the unit (declared ts:int needs integers)
    unit = draw(st.sampled_from(["ms", "us", "ns"] if schema else ["s", "ms", "us", "ns"]))
    text = draw(st.sampled_from([
        "2 SECONDS", "1 SECOND", "3 seconds", "1500 MS", "2000 milliseconds", "1.5 seconds",
        "1 second 500 ms", "0.5 SECONDS 1 SECOND", "1 MILLISECOND 999 MS",
    ]))
    primary = schema and draw(st.integers(0, 2)) == 0
    return " %s %s" % (kw("WITHIN"), text), "time", ("ts" if not primary else None), unit, primary


@st.composite
def select_list(draw, prof: Profile, tree, kw):
    if not prof.projection:
        return "*"
    r = draw(st.integers(0, 5))
    if r == 0:
        return "*"
    if r == 1:
        return kw("NONE")
    universe = known_variables(tree, prof_decl(prof))
    if not prof.qualified:
        universe = [v for v in universe if not isinstance(v, tuple)]
    if prof.schema:
        universe = sorted(set(universe) | set().union(*prof_decl(prof).values()), key=str)  # declared types
    if not universe:
        return "*"
    items = draw(st.lists(st.sampled_from(universe), min_size=1, max_size=3, unique=True))
    out = []
    for v in items:
        payload = ""
        if draw(st.integers(0, 5)) == 0:  # SELECT x[a, ...]: payload only, positions unaffected
            payload = "[%s]" % ", ".join(draw(st.lists(st.sampled_from(["v", "s", "k", "ts"]), min_size=1,
                                                       max_size=2, unique=True)))
        out.append(var_text(v) + payload)
    return ", ".join(out)


@st.composite
def cases(draw, prof: Profile):
    kw = _kw_caser(draw, prof.keyword_case)
    state: Dict[str, Any] = {}
    tree = draw(formula(prof, prof.max_depth, state))
    if state.get("ill"):
        tree = resolve_ill(tree, known_variables(tree, prof_decl(prof)), draw, prof_decl(prof))
    extra = draw(st.integers(0, 3))
    if extra == 0:
        seen = iter(draw(st.lists(st.booleans(), min_size=64, max_size=64)))
        extra_parens = lambda: next(seen, False)  # noqa: E731
    else:
        extra_parens = None
    where = render(tree, kw, extra_parens)[0]

    strategy = draw(st.sampled_from(prof.strategies))
    sel = draw(select_list(prof, tree, kw))
    parts = [kw("SELECT")]
    if strategy:
        parts.append(kw(strategy))
    parts.append(sel)
    if prof.multi_stream:
        parts.append("%s %s" % (kw("FROM"), draw(st.sampled_from(["S1, S2", "S2, S1", "S1,S2"]))))
    elif prof.from_clause and draw(st.booleans()):
        parts.append("%s S" % kw("FROM"))
    clauses = {"head": " ".join(parts), "where": " %s %s" % (kw("WHERE"), where)}

    partition_attrs: Tuple[str, ...] = ()
    if prof.partition and draw(st.integers(0, 3)) != 0:
        g = draw(st.sampled_from(["[k]", "[k]", "[k], [v]", "[w, k]", "[k],[s]", "[d]", "[b], [k]"]))
        clauses["partition"] = " %s %s" % (kw("PARTITION BY"), g)
        partition_attrs = tuple(a for a in "kvwsdb" if a in g)

    wtext, wkind, time_field, time_unit, primary = draw(window_clause(prof, kw, prof.schema))
    if wtext:
        clauses["window"] = wtext
    if prof.consume and draw(st.integers(0, 2)) != 0:
        clauses["consume"] = " %s %s" % (kw("CONSUME BY"), kw(draw(st.sampled_from(["ANY", "PARTITION", "NONE"]))))
    if prof.limit and draw(st.integers(0, 2)) != 0:
        clauses["limit"] = " %s %d" % (kw("LIMIT"), draw(st.integers(0, 3)))

    if prof.static_error:
        inject_static_error(draw, prof, tree, clauses)

    # comments and line breaks between clauses (docs/language.md#s2-1)
    for c in CLAUSE_ORDER[1:]:
        if c in clauses and draw(st.integers(0, 9)) == 0:
            sep = draw(st.sampled_from(["\n", "\n\t", " /* comment */ ", " -- comment\n", "/**/"]))
            clauses[c] = sep + clauses[c][1:]

    schema = None
    if prof.schema:
        schema = SCHEMA_PRIMARY_TIME if primary else SCHEMA
        if prof.multi_stream:
            schema = SCHEMA_MULTI.replace("ts:int", "ts:primary_time") if primary else SCHEMA_MULTI
        if draw(st.integers(0, 4)) == 0:
            schema = _schema_variant(draw, schema)
    late = "drop" if wkind == "time" and draw(st.integers(0, 2)) == 0 else None
    evs = draw(events_strategy(prof, wkind, time_unit, primary, partition_attrs, late_drop=late == "drop"))
    compat = strategy not in ("", "ALL", "ANY") and draw(st.integers(0, 4)) == 0
    return Case(text=join_clauses(clauses), events=evs, schema=schema, time_field=time_field, time_unit=time_unit,
                tree=tree, window=wkind, clauses=clauses, late=late, compat=compat)


def _schema_variant(draw, schema: str) -> str:
    """The same declarations spelled differently (docs/language.md#s1-1: type aliases, case-insensitive
    declaration keywords, whitespace)."""
    import re

    aliases = {"int": ["int", "long", "integer"], "string": ["string", "str"], "bool": ["bool", "boolean"],
               "double": ["double", "float"]}

    def sub(m):
        return ":" + draw(st.sampled_from(aliases[m.group(1)]))

    out = re.sub(r":(int|string|bool|double)\b", sub, schema)
    out = out.replace("CREATE STREAM", draw(st.sampled_from(["CREATE STREAM", "create stream", "Create Stream"])))
    out = out.replace("EVENT ", draw(st.sampled_from(["EVENT ", "event ", "Event "])))
    out = out.replace(", ", draw(st.sampled_from([", ", ",", " ,\n  "])))
    return out
