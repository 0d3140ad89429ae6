"""Formula trees and what they bind (docs/language.md#s4-2).

("atom", stream|None, type) | ("not", atomic) | ("as", f, name) | ("plus", f, contiguous)
| ("filter", f, theta) | ("seq", l, r, contiguous) | ("or", l, r)
| ("absent_seq", l, atomic, r): `l ; ABSENT(atomic) ; r` | ("and", l, r): `l AND r`
theta: ("term", var, pred_text) | ("and", l, r) | ("or", l, r); var: "A" | "x" | ("S", "A")
"""

from __future__ import annotations

from .schemas import TYPES


def var_text(v) -> str:
    return "%s>%s" % v if isinstance(v, tuple) else v


SINGLE_DECL = {"S": frozenset(TYPES)}  # stream -> event types it declares (of A, B, C)


def bindable(node, decl=SINGLE_DECL) -> frozenset:
    """docs/language.md#s4-2; decl: the FROM streams and the types they declare (open mode: every type)."""
    k = node[0]
    if k == "atom":
        if node[1] is not None:
            return frozenset({node[2], (node[1], node[2])})
        return frozenset({node[2]} | {(st_, node[2]) for st_, ts in decl.items() if node[2] in ts})
    if k == "not":
        return frozenset()
    if k == "as":
        b = bindable(node[1], decl)
        return b | {node[2]} if b else b
    if k in ("plus", "filter"):
        return bindable(node[1], decl)
    if k == "absent_seq":
        return bindable(node[1], decl) | bindable(node[3], decl)
    return bindable(node[1], decl) | bindable(node[2], decl)


def atoms(node, inside_not=False):
    """(atom, inside_not) pairs."""
    k = node[0]
    if k == "atom":
        yield node, inside_not
    elif k == "not":
        yield from atoms(node[1], True)
    elif k in ("as", "plus", "filter"):
        yield from atoms(node[1], inside_not)
    elif k == "absent_seq":
        yield from atoms(node[1], inside_not)
        yield from atoms(node[2], True)
        yield from atoms(node[3], inside_not)
    else:
        yield from atoms(node[1], inside_not)
        yield from atoms(node[2], inside_not)


def as_names(node) -> set:
    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n[0] == "as":
            out.add(n[2])
        if n[0] in ("not", "as", "plus", "filter"):
            stack.append(n[1])
        elif n[0] in ("seq", "or", "and"):
            stack += [n[1], n[2]]
        elif n[0] == "absent_seq":
            stack += [n[1], n[3]]
    return out


def theta_vars(theta):
    if theta[0] == "term":
        yield theta[1]
    else:
        yield from theta_vars(theta[1])
        yield from theta_vars(theta[2])
