"""Random queries with predicates between events (docs/design/correlation.md): ``y.attr``,
``PREV(attr)`` and aggregates, with arithmetic, ``AND``/``OR``/``NOT``, inside and outside
``+``, under CEL ``OR``, with projection, strategies, ``PARTITION BY``, ``WITHIN``,
``CONSUME BY`` and ``LIMIT``; and streams over the types A, B, C (and noise D) with the
attributes ``v`` (int, sometimes NULL), ``w`` (double), ``s`` (string) and ``k`` (key).

A separate strategy (:func:`correlation_cases`), so that the distributions of the other
generators do not change. The expected values come from the oracle, never from the engine.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .case import Case, join_clauses

#: A declared schema for the same events (E0300/E0204 at compile time).
SCHEMA_CORR = ("CREATE STREAM S { EVENT A { v:int, w:double, s:string, k:int }, "
               "EVENT B { v:int, w:double, s:string, k:int }, EVENT C { v:int, w:double, s:string, k:int }, "
               "EVENT D { v:int, k:int } }")

#: (formula with a {f} slot for the filter, its AS variables). `{f}` is " FILTER θ" or "".
SHAPES = [
    ("A AS a ; B AS b{f}", "ab"),
    ("A AS a ; B AS b ; C AS c{f}", "abc"),
    ("A AS a ; (B AS b)+ ; C AS c{f}", "abc"),
    ("(B AS b)+{f}", "b"),
    ("A AS a ; (B AS b)+{f}", "ab"),
    ("(A AS a ; B AS b)+{f}", "ab"),
    ("(A AS a OR B AS b) ; C AS c{f}", "abc"),
    ("A AS a : B AS b{f}", "ab"),
    ("A AS a ; NOT(C) ; B AS b{f}", "ab"),
    ("A AS a ; (B AS b OR C AS b){f}", "ab"),
    ("(A AS a ; B AS b{f}) OR C AS c", "ab"),
    ("(A AS a ; B AS b{f}) ; C AS c", "ab"),
    ("(A AS a ; B AS b{f})+", "ab"),  # re-binding per iteration (docs/language.md#s3-4c)
    ("A ; B AS b{f}", "b"),
    ("(A AS a ; B AS b{f}) ; A", "ab"),  # A is also bound outside the filtered formula
]

#: Filters between events inside an iteration (docs/language.md#s3-4c): re-bound per
#: iteration, with several decompositions of one valuation (nested +, OR in the body), next
#: to a filter outside the +, `:+`, and the form still refused with E0500 (a body that can
#: start with NOT).
ITERATION_SHAPES = [
    ("(A AS a ; B AS b{f})+", "ab"),
    ("((A AS a ; B AS b){f})+ ; C AS c", "ab"),
    ("C AS c ; (A AS a ; B AS b{f})+", "ab"),
    ("(A AS a ; (B AS b)+{f})+", "ab"),
    ("((A AS a ; (B AS b)+){f})+", "ab"),
    ("((B AS b)+{f})+", "b"),
    ("((A AS a OR B AS a) ; B AS b{f})+", "ab"),
    ("(A AS a ; B AS b{f})+ ; (A AS a ; B AS b{f})+", "ab"),
    ("((A AS a ; B AS b{f})+ ; C AS c)+", "ab"),
    ("(A AS a ; B AS b{f})+ FILTER b[v >= PREV(v)]", "ab"),
    ("(A AS a : B AS b{f})+", "ab"),
    ("(A AS a ; B AS b{f}):+", "ab"),
    ("(NOT(C) ; A AS a ; B AS b{f})+", "ab"),  # refused (E0500)
]

CMP = ["<", "<=", ">", ">=", "=", "!="]
AGGS = ["sum", "avg", "min", "max", "first", "last"]


@st.composite
def _num_read(draw, x, vs, prev_ok=True):
    """A numeric term of x's filter: a bare attribute, y.attr, PREV or an aggregate."""
    kind = draw(st.integers(0, 9))
    attr = draw(st.sampled_from(["v", "v", "v", "w"]))
    if kind <= 1:
        return attr
    if kind <= 5:
        return "%s.%s" % (draw(st.sampled_from(vs)), attr)
    if kind == 6 and prev_ok:
        return "PREV(%s)" % attr
    if kind == 7:
        return "count(%s)" % draw(st.sampled_from(vs))
    return "%s(%s.%s)" % (draw(st.sampled_from(AGGS)), draw(st.sampled_from(vs)), attr)


@st.composite
def _num_expr(draw, x, vs):
    a = draw(_num_read(x, vs))
    r = draw(st.integers(0, 5))
    if r == 0:
        return "%s + %d" % (a, draw(st.integers(-2, 2)))
    if r == 1:
        return "%s - %s" % (a, draw(_num_read(x, vs)))
    if r == 2:
        return "%s * 2" % a
    return a


@st.composite
def _atom(draw, x, vs):
    kind = draw(st.integers(0, 9))
    if kind == 0:  # unary, stays with the automaton unless under OR with a non-unary term
        return "v %s %d" % (draw(st.sampled_from(CMP)), draw(st.integers(0, 4)))
    if kind == 1:  # strings: equality joins
        other = draw(st.sampled_from(vs + ["'a'"]))
        rhs = other if other.startswith("'") else "%s.s" % other
        return "s %s %s" % (draw(st.sampled_from(["=", "!="])), rhs)
    if kind == 2:  # equality on the key, or IS [NOT] NULL of a term (docs/language.md#s3-4)
        if draw(st.integers(0, 3)) == 0:
            return "%s IS %sNULL" % (draw(_num_expr(x, vs)), draw(st.sampled_from(["", "NOT "])))
        return "k = %s.k" % draw(st.sampled_from(vs))
    lhs = draw(_num_expr(x, vs))
    rhs = draw(_num_expr(x, vs)) if draw(st.booleans()) else str(draw(st.integers(0, 5)))
    return "%s %s %s" % (lhs, draw(st.sampled_from(CMP)), rhs)


@st.composite
def _pred(draw, x, vs, depth=1):
    if depth <= 0 or draw(st.integers(0, 2)) > 0:
        return draw(_atom(x, vs))
    op = draw(st.sampled_from(["AND", "OR", "NOT"]))
    if op == "NOT":
        return "NOT (%s)" % draw(_pred(x, vs, depth - 1))
    return "(%s) %s (%s)" % (draw(_pred(x, vs, depth - 1)), op, draw(_pred(x, vs, depth - 1)))


@st.composite
def _filter(draw, vs):
    n = draw(st.sampled_from([1, 1, 1, 2, 2, 3]))
    terms = []
    for _ in range(n):
        x = draw(st.sampled_from(vs))
        terms.append("%s[%s]" % (x, draw(_pred(x, vs))))
    out = terms[0]
    for t in terms[1:]:
        out = "%s %s %s" % (out, draw(st.sampled_from(["AND", "AND", "OR"])), t)
    return out


@st.composite
def _event(draw, schema: bool, mismatches: bool = False):
    ty = draw(st.sampled_from("AABBBCCD"))
    ev = {"type": ty, "k": draw(st.integers(0, 1))}
    v = draw(st.one_of(st.integers(0, 5), st.none())) if draw(st.integers(0, 7)) == 0 else draw(st.integers(0, 5))
    if mismatches and not schema and draw(st.integers(0, 9)) == 0:
        v = "x"  # a data error wherever a valuation compares or adds it to a number
    ev["v"] = v
    if ty != "D":
        ev["w"] = draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]))
        ev["s"] = draw(st.sampled_from(["a", "b"]))
    return ev


@st.composite
def _measures(draw, vs):
    """One to three measures of the SELECT list (docs/language.md#s3-5a), named m0, m1, ..."""
    out = []
    for i in range(draw(st.integers(1, 3))):
        y = draw(st.sampled_from(vs + ["B"]))
        f = draw(st.sampled_from(["count"] + AGGS))
        attr = draw(st.sampled_from(["v", "v", "w", "s"] if f in ("first", "last") else ["v", "v", "w"]))
        agg = "count(%s)" % y if f == "count" else "%s(%s.%s)" % (f, y, attr)
        out.append("%s AS m%d" % (agg, i))
    return out


@st.composite
def correlation_cases(draw, strategies=("", "", "", "", "ALL", "ANY", "NEXT", "LAST", "MAX", "STRICT"),
                      max_events=11, measures=False, shapes=None, mismatches=False):
    """A :class:`Case` with a filter between events (and the clauses around it). With
    ``measures``, the SELECT list also has measures, and the filter is there half the time.
    ``shapes`` replaces :data:`SHAPES` (e.g. :data:`ITERATION_SHAPES`). With ``mismatches``,
    about one event in ten has the string ``"x"`` as ``v`` when there is no schema: data
    errors, which must surface exactly for the valuations the window and STRICT keep
    (docs/language.md#s3-4a)."""
    shape, letters = draw(st.sampled_from(shapes or SHAPES))
    vs = list(letters)
    with_filter = not measures or draw(st.booleans())
    where = shape.format(f=" FILTER " + draw(_filter(vs)) if with_filter else "")
    strategy = draw(st.sampled_from(list(strategies)))
    sel_kind = draw(st.integers(0, 5))
    if sel_kind == 0:
        select = "NONE"
    elif sel_kind == 1:
        select = ", ".join(draw(st.lists(st.sampled_from(vs + ["A", "B"]), min_size=1, max_size=2, unique=True)))
    else:
        select = "*"
    if measures:
        ms = draw(_measures(vs))
        select = ", ".join(ms) if select == "NONE" else select + ", " + ", ".join(ms)
    head = "SELECT %s%s FROM S" % (strategy + " " if strategy else "", select)
    clauses = {"head": head, "where": " WHERE " + where}
    if draw(st.integers(0, 3)) == 0:
        clauses["partition"] = " PARTITION BY [k]"
    if draw(st.integers(0, 2)) == 0:
        clauses["window"] = " WITHIN %d EVENTS" % draw(st.integers(0, 6))
    if draw(st.integers(0, 5)) == 0:
        clauses["consume"] = " CONSUME BY %s" % draw(st.sampled_from(["ANY", "PARTITION"]))
    if draw(st.integers(0, 7)) == 0:
        clauses["limit"] = " LIMIT %d" % draw(st.integers(0, 2))
    schema = SCHEMA_CORR if draw(st.integers(0, 3)) == 0 else None
    events = draw(st.lists(_event(schema is not None, mismatches), min_size=0, max_size=max_events))
    return Case(text=join_clauses(clauses), events=events, schema=schema, time_field=None, time_unit="ns",
                clauses=clauses)
