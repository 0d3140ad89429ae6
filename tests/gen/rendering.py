"""Formula trees rendered to CEQL text with the fewest parentheses that keep the intended
tree under the precedence rules of docs/language.md#s2-3 (or, at random, with more)."""

from __future__ import annotations

from typing import Optional, Tuple

from .trees import var_text

POW_POSTFIX = 60  # AS, +, :+
POW = {"seq;": 50, "seq:": 40, "and": 35, "or": 30, "filter": 20}
INF = 1000


def render_theta(theta, top=True) -> str:
    if theta[0] == "term":
        return "%s[%s]" % (var_text(theta[1]), theta[2])
    if theta[0] == "and":
        l = render_theta(theta[1], False)
        r = render_theta(theta[2], False)
        # AND binds tighter than OR: an OR operand of AND needs parentheses
        if theta[1][0] == "or":
            l = "(%s)" % l
        if theta[2][0] in ("or", "and"):
            r = "(%s)" % r  # left-associative
        return "%s AND %s" % (l, r)
    l = render_theta(theta[1], False)
    r = render_theta(theta[2], False)
    if theta[2][0] == "or":
        r = "(%s)" % r
    return "%s OR %s" % (l, r)


def render(node, kw, extra_parens=None) -> Tuple[str, int, Optional[int]]:
    """(text, top power, infix power of the top node or None).

    top power = the lowest power of an operator at the top level of the text (INF for an
    atom or a parenthesised formula); see docs/language.md#s2-3 for why these rules are sufficient: a right
    operand of an infix of power p is parsed with parse(p+1), so all its top-level operators
    must be > p; a left operand must not end inside an infix of power < p (its right operand
    would swallow the operator), while a top-level postfix seals it."""
    k = node[0]

    def paren(t):
        return ("(%s)" % t[0], INF, None)

    def maybe_extra(t):
        if extra_parens is not None and t[1] != INF and extra_parens():
            return paren(t)
        return t

    if k == "atom":
        return (("%s>%s" % (node[1], node[2])) if node[1] else node[2], INF, None)
    if k == "not":
        return ("%s(%s)" % (kw("NOT"), render_atomic(node[1], kw)), INF, None)
    if k in ("as", "plus"):
        c = maybe_extra(render(node[1], kw, extra_parens))
        if c[1] < POW_POSTFIX:
            c = paren(c)
        if k == "as":
            return ("%s %s %s" % (c[0], kw("AS"), node[2]), POW_POSTFIX, None)
        return ("%s%s" % (c[0], ":+" if node[2] else "+"), POW_POSTFIX, None)
    if k == "filter":
        c = maybe_extra(render(node[1], kw, extra_parens))
        return ("%s %s %s" % (c[0], kw("FILTER"), render_theta(node[2])), POW["filter"], None)
    if k == "absent_seq":
        p = POW["seq;"]
        l = maybe_extra(render(node[1], kw, extra_parens))
        r = maybe_extra(render(node[3], kw, extra_parens))
        if l[2] is not None and l[2] < p:
            l = paren(l)
        if r[1] <= p:
            r = paren(r)
        return ("%s ; %s(%s) ; %s" % (l[0], kw("ABSENT"), render_atomic(node[2], kw), r[0]), min(p, l[1]), p)
    if k == "seq":
        p = POW["seq:" if node[3] else "seq;"]
        op = ":" if node[3] else ";"
    elif k == "and":
        p = POW["and"]
        op = kw("AND")
    else:
        p = POW["or"]
        op = kw("OR")
    l = maybe_extra(render(node[1], kw, extra_parens))
    r = maybe_extra(render(node[2], kw, extra_parens))
    if l[2] is not None and l[2] < p:
        l = paren(l)
    if r[1] <= p:
        r = paren(r)
    return ("%s %s %s" % (l[0], op, r[0]), min(p, l[1]), p)


def render_atomic(node, kw) -> str:
    if node[0] == "any":  # ABSENT's alternatives
        return "%s %s %s" % (render_atomic(node[1], kw), kw("OR"), render_atomic(node[2], kw))
    if node[0] == "atom":
        return render(node, kw)[0]
    assert node[0] == "filter"
    return "%s %s %s" % (render_atomic(node[1], kw), kw("FILTER"), render_theta(node[2]))
