"""Random queries whose filters hold equalities between variables (docs/language.md#s3-4b), some
routable and some not, with the clauses around them (strategies, projection, PARTITION BY,
WITHIN, CONSUME BY, LIMIT); and streams over the types A, B, C (and noise D) whose key
attributes mix integers, doubles of integral and fractional value, -0.0, NaN and NULL, so that
the engine's routing keys are tested against ``=`` as the oracle evaluates it.

A strategy of its own (:func:`routing_cases`), so that the other generators' distributions do not
change. The expected values come from the oracle, which knows nothing of routing.
"""

from __future__ import annotations

import math
import random

from hypothesis import strategies as st

from .case import Case, join_clauses

#: (formula with a {f} slot for the filter, its variables as filters name them).
SHAPES = [
    ("A AS a ; B AS b{f}", ["a", "b"]),
    ("A AS a ; B AS b ; C AS c{f}", ["a", "b", "c"]),
    ("A AS a ; (B AS b)+ ; C AS c{f}", ["a", "b", "c"]),
    ("A AS a ; (B AS b)+{f}", ["a", "b"]),
    ("(A AS a ; B AS b)+{f}", ["a", "b"]),
    ("(A AS a OR B AS a) ; C AS c{f}", ["a", "c"]),
    ("A AS a ; (B AS b OR C AS b){f}", ["a", "b"]),
    ("A AS a ; B AS b ; A AS c{f}", ["a", "b", "c"]),
    ("A ; B AS b ; C{f}", ["A", "b", "C"]),
    ("(A AS a ; B AS b) AS x ; C AS c{f}", ["a", "b", "x", "c"]),
    # Not routable: they look at unmarked events, or the filter covers part of the formula
    # (the last four; ROUTABLE leaves them out).
    ("A AS a : B AS b{f}", ["a", "b"]),
    ("A AS a ; NOT(D) ; B AS b{f}", ["a", "b"]),
    ("(A AS a ; B AS b{f}) ; C AS c", ["a", "b"]),
    ("A AS a ; (B AS b OR C AS c){f}", ["a", "b", "c"]),
]

#: The shapes whose every atom a filter on the whole formula can reach.
ROUTABLE = SHAPES[:-4]

#: Attributes: ``k`` and ``m`` numeric keys (mixed int / double / NaN / NULL), ``s`` a string
#: key, ``v`` a small integer for the other comparisons.
KEYS = ["k", "k", "k", "m", "s"]


@st.composite
def _conjunct(draw, vs, residual=True):
    x = draw(st.sampled_from(vs))
    kind = draw(st.integers(0, 9 if residual else 8))
    if kind <= 5:  # an equality between two variables (the routing candidates)
        # Mostly another variable: `x[k = x.k]` is a residual test.
        y = draw(st.sampled_from([v for v in vs if v != x] * 3 + [x]))
        a = draw(st.sampled_from(KEYS))
        b = a if draw(st.integers(0, 4)) else draw(st.sampled_from(["k", "m"] if a != "s" else ["s"]))
        if a == "s" or b == "s":
            a = b = "s"
        if draw(st.booleans()):
            return "%s[%s = %s.%s]" % (x, a, y, b)
        return "%s[%s.%s = %s]" % (x, y, b, a)
    if kind <= 8:  # unary
        return "%s[v %s %d]" % (x, draw(st.sampled_from(["<", ">=", "!=", "!="])), draw(st.integers(0, 3)))
    # a residual comparison (keeps the residual test, hence ALL only)
    y = draw(st.sampled_from(vs))
    return "%s[v %s %s.v]" % (x, draw(st.sampled_from(["!=", "<", ">="])), y)


@st.composite
def _spanning(draw, vs):
    """Equalities on one attribute that connect every variable (a routable filter, unless
    the shape or another conjunct stands in the way)."""
    order = draw(st.permutations(vs))
    a = draw(st.sampled_from(["k", "k", "s"]))
    out = []
    for i in range(1, len(order)):
        x, y = order[i], draw(st.sampled_from(order[:i]))
        if draw(st.booleans()):
            x, y = y, x
        out.append("%s[%s = %s.%s]" % (x, a, y, a))
    return out


@st.composite
def _filter(draw, vs, residual=True, routable=False):
    """With ``routable``, the spanning equalities always and no OR."""
    n = draw(st.sampled_from([0, 0, 1, 1, 2] if routable else [0, 1, 1, 2, 3]))
    terms = [draw(_conjunct(vs, residual)) for _ in range(n)]
    if routable or draw(st.integers(0, 3)) != 3 or not terms:
        terms += draw(_spanning(vs))
        terms = draw(st.permutations(terms))
    # Now and then put two conjuncts into one term (`x[P AND Q]`) or join them with OR.
    out = terms[0]
    for t in terms[1:]:
        out = "%s %s %s" % (out, "OR" if not routable and draw(st.integers(0, 5)) == 5 else "AND", t)
    return out


#: Key values: equal under `=` across kinds of number (1, 1.0; 0, 0.0, -0.0), never equal
#: (NaN, NULL), and a fraction.
NUMBERS = [1, 1, 1, 1, 1.0, 1.0, 1.0, 1.0, 2, 2.0, 0, 0.0, -0.0, 1.5, float("nan"), None]
#: Fewer distinct keys: several candidates of one key per end, for the strategies to choose from.
DENSE = [1, 1, 1, 1.0, 1.0, 1.0, 0, -0.0, 2.0, float("nan"), None]


def _events(rnd, n, numbers=NUMBERS):
    """``n`` events drawn with ``rnd``, a ``random.Random`` seeded by hypothesis (its own draws
    lean to their smallest values, which here means keyless events of one type and no match
    at all; the seed keeps the runs reproducible)."""
    out, t = [], 0
    for i in range(n):
        # As in the shapes, As tend to come first and Cs last.
        ev = {"type": rnd.choice("AAABD" if 3 * i < n else "ABBBCD" if 3 * i < 2 * n else "BBCCCD")}
        for a in ("k", "m"):
            if rnd.randrange(7):
                ev[a] = rnd.choice(numbers)
        if rnd.randrange(6):
            ev["s"] = rnd.choice(["x", "x", "y"])
        ev["v"] = rnd.randrange(4)
        ev["p"] = rnd.randrange(2)
        t += rnd.choice([0, 1, 1, 2])
        ev["t"] = t
        out.append(ev)
    return out


def _window(draw, clauses):
    """Draws an optional WITHIN into ``clauses``: in events, over the attribute ``t``, or a
    duration over the time stamp ``t`` in seconds. Returns the case's ``time_field``."""
    w = draw(st.integers(0, 4))
    if w == 1:
        clauses["window"] = " WITHIN %d EVENTS" % (6 - draw(st.integers(0, 6)))
    elif w == 2:
        clauses["window"] = " WITHIN %d [t]" % (5 - draw(st.integers(0, 5)))
    elif w == 3:
        clauses["window"] = " WITHIN %d SECONDS" % (5 - draw(st.integers(0, 4)))
        return "t"
    return None


def _select(draw, strategy, vs):
    sel_kind = draw(st.integers(0, 5))
    names = [v for v in vs if v not in ("x",)]
    if sel_kind == 5:
        select = "NONE"
    elif sel_kind == 4:
        select = ", ".join(draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)))
    else:
        select = "*"
    return "SELECT %s%s FROM S" % (strategy + " " if strategy else "", select)


@st.composite
def routing_cases(draw, strategies=("", "", "", "ALL", "ANY", "NEXT", "LAST", "MAX", "STRICT"), max_events=10,
                  residual=True, shapes=SHAPES, routable=False, dense=False):
    """A :class:`Case` whose filter holds equalities between variables; with ``residual``
    false, no comparison between events other than equalities; with ``routable``, the
    equalities connect every variable and nothing but the shape keeps the query from being
    routed (no OR, no CONSUME BY PARTITION); with ``dense``, fewer distinct key values and
    at least 6 events."""
    shape, vs = draw(st.sampled_from(shapes))
    where = shape.format(f=" FILTER " + draw(_filter(vs, residual, routable)))
    strategy = draw(st.sampled_from(list(strategies)))
    clauses = {"head": _select(draw, strategy, vs), "where": " WHERE " + where}
    # Optional clauses on the largest draw: hypothesis leans to the smallest.
    if draw(st.integers(0, 3)) == 3:
        clauses["partition"] = " PARTITION BY [p]"
    time_field = _window(draw, clauses)
    if draw(st.integers(0, 5)) == 5:
        clauses["consume"] = " CONSUME BY %s" % ("ANY" if routable else draw(st.sampled_from(["ANY", "PARTITION"])))
    if draw(st.integers(0, 7)) == 7:
        clauses["limit"] = " LIMIT %d" % draw(st.integers(0, 2))
    # The seed mixes the query in: hypothesis draws seed 0 often, and one event list for every
    # query would test little.
    rnd = random.Random("%d/%s" % (draw(st.integers(0, 2 ** 32), label="event seed"), join_clauses(clauses)))
    events = _events(rnd, rnd.randint(6 if dense else 3, max_events), DENSE if dense else NUMBERS)
    return Case(text=join_clauses(clauses), events=events, schema=None, time_field=time_field,
                time_unit="s" if time_field else "ns", clauses=clauses)


def routing_key(v):
    """The routing key of a value, from the table of docs/language.md#s3-4b (here as a
    Python value that PARTITION BY keys by value and type, docs/language.md#s3-8): None
    for NULL and NaN, the integer for an integral double below 2^53 (-0.0 is 0), the value
    otherwise."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float) and v.is_integer() and abs(v) < 2.0 ** 53:
        return int(v)
    return v


@st.composite
def rewrite_cases(draw, max_events=10):
    """``(case, rewrite, tautology)`` where ``case`` is routed by one attribute (equalities
    connecting every variable of a routable shape, unary conjuncts besides) and ``rewrite``
    is the same query without the equalities, ``PARTITION BY`` the routing key as the
    text of docs/language.md#s3-4b defines it: each event of a type the shape captures
    gets the attribute ``rk``, its routing key (none without one); other types get none
    (their events have no routing key). ``tautology`` is ``rewrite`` with ``x[rk = x.rk]``
    added, TRUE on every valuation of a substream of ``rk`` but a filter between events:
    under NEXT, LAST and MAX the window then comes first (docs/language.md#s3-6a), as for
    ``case``."""
    shape, vs = draw(st.sampled_from(ROUTABLE))
    attr = draw(st.sampled_from(["k", "k", "m", "s"]))
    order = draw(st.permutations(vs))
    eqs = []
    for i in range(1, len(order)):
        x, y = order[i], draw(st.sampled_from(order[:i]))
        eqs.append("%s[%s = %s.%s]" % (x, attr, y, attr) if draw(st.booleans()) else
                   "%s[%s.%s = %s]" % (x, y, attr, attr))
    unary = [draw(_conjunct(vs, residual=False)) for _ in range(draw(st.integers(0, 2)))]
    unary = [u for u in unary if "." not in u]  # `_conjunct` may draw an equality: keep the unary ones
    terms = draw(st.permutations(eqs + unary))
    strategy = draw(st.sampled_from(["", "ALL", "NEXT", "LAST", "MAX", "NEXT", "LAST", "MAX"]))
    head = _select(draw, strategy, vs)
    clauses = {"head": head, "where": " WHERE " + shape.format(f=" FILTER " + " AND ".join(terms))}
    groups = []
    if draw(st.integers(0, 3)) == 3:
        groups.append("[p]")
    time_field = _window(draw, clauses)
    if draw(st.integers(0, 5)) == 5:
        clauses["consume"] = " CONSUME BY ANY"
    if draw(st.integers(0, 7)) == 7:
        clauses["limit"] = " LIMIT %d" % draw(st.integers(0, 2))
    if groups:
        clauses["partition"] = " PARTITION BY " + ", ".join(groups)
    rnd = random.Random("%d/%s" % (draw(st.integers(0, 2 ** 32), label="event seed"), join_clauses(clauses)))
    events = _events(rnd, rnd.randint(5, max_events), DENSE)
    captured = {t for t in "ABC" if t in shape.replace("AS", "")}
    keyed = []
    for ev in events:
        ev = dict(ev)
        key = routing_key(ev.get(attr)) if ev["type"] in captured else None
        if key is not None:
            ev["rk"] = key
        keyed.append(ev)

    def case_of(cl, evs):
        return Case(text=join_clauses(cl), events=evs, schema=None, time_field=time_field,
                    time_unit="s" if time_field else "ns", clauses=cl)

    rw = dict(clauses)
    rw["where"] = " WHERE " + shape.format(f=" FILTER " + " AND ".join(unary) if unary else "")
    rw["partition"] = " PARTITION BY " + ", ".join(groups + ["[rk]"])
    taut = dict(rw)
    taut["where"] = " WHERE " + shape.format(f=" FILTER " + " AND ".join(unary + ["%s[rk = %s.rk]" % (vs[0], vs[0])]))
    return case_of(clauses, events), case_of(rw, keyed), case_of(taut, keyed)
