"""Hypothesis strategies of formula trees for a profile, with filters on variables the
filtered sub-formula can bind (or, for ill-formed queries, cannot)."""

from __future__ import annotations

from typing import Any, List

from hypothesis import strategies as st

from .predicates import pred
from .profiles import Profile, prof_decl
from .schemas import AS_NAMES
from .trees import SINGLE_DECL, as_names, atoms, bindable


@st.composite
def theta(draw, candidates: List[Any], prof: Profile, depth=1):
    if depth <= 0 or draw(st.integers(0, 3)) != 0:
        var = draw(st.sampled_from(candidates))
        return ("term", var, draw(pred(prof.pred_depth)))
    op = draw(st.sampled_from(["and", "or"]))
    return (op, draw(theta(candidates, prof, depth - 1)), draw(theta(candidates, prof, depth - 1)))


def known_variables(node, decl=SINGLE_DECL):
    """Variables the query knows (E0203 otherwise): atom types, AS names, S>T of atom types."""
    types = {a[2] for a, _ in atoms(node)}
    qual = {(st_, t) for t in types for st_, ts in decl.items() if t in ts}
    return sorted(types | as_names(node) | qual, key=str)


@st.composite
def atom(draw, prof: Profile):
    decl = prof_decl(prof)
    t = draw(st.sampled_from(sorted(set().union(*decl.values()))))
    if prof.qualified and draw(st.integers(0, 5)) == 0:
        return ("atom", draw(st.sampled_from(sorted(s for s, ts in decl.items() if t in ts))), t)
    return ("atom", None, t)


@st.composite
def not_formula(draw, prof: Profile):
    a = draw(atom(prof))
    if prof.filters and draw(st.booleans()):
        cands = sorted(bindable(a, prof_decl(prof)), key=str)
        if not prof.qualified:
            cands = [c for c in cands if not isinstance(c, tuple)]
        a = ("filter", a, draw(theta(cands, prof)))
    return ("not", a)


@st.composite
def absent_atomic(draw, prof: Profile):
    """The operand of ABSENT: as for NOT, but more often of the rarest type of the event streams
    (C), so that gaps without it, and so matches, are common; one in four has alternatives,
    ``("any", a, b)``, ``ABSENT(a OR b)`` (docs/language.md#s3-3a; b may be another "any")."""
    if draw(st.integers(0, 3)) == 0:
        return ("any", draw(_one_absent_atomic(prof)), draw(absent_atomic(prof)))
    return draw(_one_absent_atomic(prof))


@st.composite
def _one_absent_atomic(draw, prof: Profile):
    a = draw(not_formula(prof))[1]
    if draw(st.booleans()):
        node = a
        while node[0] == "filter":
            node = node[1]
        if node[2] != "C" and "C" in prof_decl(prof).get(node[1] or "", frozenset("C")):
            a = _retype(a, "C")
    return a


def _retype(atomic, t):
    """The atomic with its atom's type replaced by `t` (filters on the old type are dropped)."""
    if atomic[0] == "filter":
        return _retype(atomic[1], t)
    return ("atom", atomic[1], t)


@st.composite
def formula(draw, prof: Profile, depth: int, state: dict):
    if prof.conjunction and depth == prof.max_depth:
        from .conjunction import conjunction_root  # imports this module

        root = draw(conjunction_root(prof, depth, state))
        if root is not None:
            return root
    if prof.absent and depth == prof.max_depth and draw(st.booleans()):
        # half of the absence profile's formulas are an absence at the root
        l = draw(formula(prof, depth - 1, state))
        r = draw(formula(prof, depth - 1, state))
        return ("absent_seq", l, draw(absent_atomic(prof)), r)
    if depth <= 0 or draw(st.integers(0, 3)) == 0:
        if prof.not_ and draw(st.integers(0, 3)) == 0:
            return draw(not_formula(prof))
        return draw(atom(prof))
    ops = list(prof.ops) + (["FILTER"] * 2 if prof.filters else [])
    op = draw(st.sampled_from(ops))
    if op in (";", ":", "OR", "AND"):
        l = draw(formula(prof, depth - 1, state))
        r = draw(formula(prof, depth - 1, state))
        if op == "OR":
            return ("or", l, r)
        if op == "AND":
            return ("and", l, r)
        if op == ";" and prof.absent and draw(st.integers(0, 2)) != 0:
            return ("absent_seq", l, draw(absent_atomic(prof)), r)
        return ("seq", l, r, op == ":")
    c = draw(formula(prof, depth - 1, state))
    if op in ("+", ":+"):
        return ("plus", c, op == ":+")
    if op == "AS":
        return ("as", c, draw(st.sampled_from(AS_NAMES)))
    # FILTER
    cands = sorted(bindable(c, prof_decl(prof)), key=str)
    if not prof.qualified:
        cands = [v for v in cands if not isinstance(v, tuple)]
    if prof.ill_formed and draw(st.integers(0, 2)) == 0:
        state["ill"] = True
        # a variable the sub-formula cannot bind: known elsewhere in the query (resolved later)
        return ("filter", c, draw(theta(["?"], prof)))
    if not cands:
        return c
    return ("filter", c, draw(theta(cands, prof)))


def resolve_ill(node, universe, draw, decl=SINGLE_DECL):
    """Replace "?" filter variables by a known variable the filtered formula cannot bind
    (or, if there is none, by any bindable one: the query is then well-formed)."""
    k = node[0]
    if k == "atom":
        return node
    if k == "not":
        return node
    if k == "filter":
        c = resolve_ill(node[1], universe, draw, decl)
        b = bindable(c, decl)

        def fix(t):
            if t[0] == "term":
                if t[1] != "?":
                    return t
                bad = [v for v in universe if v not in b]
                pool = bad or sorted(b, key=str) or ["A"]
                return ("term", draw(st.sampled_from(pool)), t[2])
            return (t[0], fix(t[1]), fix(t[2]))

        return ("filter", c, fix(node[2]))
    if k in ("as", "plus"):
        return (k, resolve_ill(node[1], universe, draw, decl), node[2])
    if k == "seq":
        return ("seq", resolve_ill(node[1], universe, draw, decl), resolve_ill(node[2], universe, draw, decl),
                node[3])
    if k == "absent_seq":
        return ("absent_seq", resolve_ill(node[1], universe, draw, decl), node[2],
                resolve_ill(node[3], universe, draw, decl))
    if k == "and":
        return ("and", resolve_ill(node[1], universe, draw, decl), resolve_ill(node[2], universe, draw, decl))
    return ("or", resolve_ill(node[1], universe, draw, decl), resolve_ill(node[2], universe, draw, decl))
