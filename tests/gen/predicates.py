"""Predicates in the syntax of docs/language.md#s2-2 over the attributes v, k, t, s, b and d."""

from __future__ import annotations

from hypothesis import strategies as st

LIKE_PATTERNS = ["a", "b", "^a", "b$", "^ab$", "a.c", "a|c", "[ab]c", "^[^a]", "x*", "^$",
                 "a+b", "(ab)+", "b.r", "a?b", ".", "^.b", "c{1,2}", "\\.", "A", "^.$", "é", "a.$",
                 "(?i)a", "\\d", "^a*$"]
STRINGS = ["", "a", "b", "ab", "ba", "abc", "aab", "xbarx", "c", "acc", "A", "é", "aé"]


def _str_lit(draw, s=None) -> str:
    if s is None:
        s = draw(st.sampled_from(STRINGS + ["it's", 'say "x"']))
    if draw(st.integers(0, 4)) == 0:
        return '"%s"' % s.replace('"', '""')
    return "'%s'" % s.replace("'", "''")


@st.composite
def num_literal(draw) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["1.5", "0.5", ".5", "2.0", "1.e1", "2.5e-1", "10",
                                     "9223372036854775807"]))
    return str(draw(st.integers(0, 5)))


@st.composite
def num_expr(draw, depth) -> str:
    """Numeric expression over v (and rarely k / t)."""
    if depth <= 0 or draw(st.integers(0, 1)) == 0:
        return draw(st.sampled_from(["v", "v", "v", "v", "k", "t", "d"]) if draw(st.booleans()) else num_literal())
    kind = draw(st.integers(0, 5))
    if kind == 0:  # unary
        e = draw(num_expr(depth - 1))
        op = draw(st.sampled_from(["-", "-", "+"]))
        if e[0] in "-+" or " " in e:
            e = "(%s)" % e
        return op + e
    op = draw(st.sampled_from(["+", "-", "*", "/", "%", "+", "-"]))
    l = draw(num_expr(depth - 1))
    r = draw(num_expr(depth - 1))
    # parenthesise compound operands: the tree is then the intended one whatever the
    # precedence (precedence of arithmetic is a unit-test matter)
    if " " in l:
        l = "(%s)" % l
    if " " in r:
        r = "(%s)" % r
    return "%s %s %s" % (l, op, r)


@st.composite
def signed(draw) -> str:
    n = draw(st.integers(-3, 6))
    return str(n)


@st.composite
def pred_atom(draw, allow_str=True, negated=False) -> str:
    kind = draw(st.integers(0, 14 if allow_str else 7))
    if kind == 13:  # boolean attribute
        return draw(st.sampled_from(["b", "b", "NOT b", "b = TRUE", "b != FALSE", "b <> true", "FALSE = b",
                                     "b = b"]))
    if kind == 14:  # double attribute
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "=", "!="]))
        return "d %s %s" % (op, draw(st.sampled_from(["1", "1.0", "0.5", "v", "v / 2", "-d"])))
    if kind <= 1:  # the common simple case
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "=", "==", "!=", "<>"]))
        return "v %s %s" % (op, draw(num_literal()))
    if kind <= 3:
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "=", "==", "!=", "<>"]))
        return "%s %s %s" % (draw(num_expr(2)), op, draw(num_expr(1)))
    if kind == 4:
        neg = draw(st.booleans())
        vals = draw(st.lists(st.sampled_from(["0", "1", "2", "3", "-1", "1.0", "2.5"]), min_size=1, max_size=3))
        return "%s %sIN {%s}" % (draw(num_expr(1)), "NOT " if neg else "", ", ".join(vals))
    if kind == 5:
        neg = draw(st.booleans())
        form = draw(st.integers(0, 2))
        a, b = draw(signed()), draw(signed())
        rng = ["%s..%s" % (a, b), "%s..", "..%s"][form]
        if form == 1:
            rng = "%s.." % a
        elif form == 2:
            rng = "..%s" % b
        return "%s %sIN {%s}" % (draw(num_expr(1)), "NOT " if neg else "", rng)
    if kind == 6:
        return "%s IN RANGE(%s, %s)" % (draw(num_expr(1)), draw(num_expr(1)), draw(num_expr(1)))
    if kind == 7:
        # constants, and IS [NOT] NULL (docs/language.md#s3-4): of an attribute, of arithmetic that
        # overflows or divides by zero (NULL), in any case of the words
        forms = ["TRUE", "FALSE", "true", "v IS NULL", "v IS NOT NULL", "v * 4611686018427387904 IS NULL",
                 "v / (v - 1) is null", "(v + 1) IS NOT NULL", "d IS NULL"]
        if allow_str:
            forms += ["s IS NULL", "s IS NOT NULL", "b IS NOT NULL"]
        return draw(st.sampled_from(forms))
    if kind <= 9:
        op = draw(st.sampled_from(["=", "==", "!=", "<>"]))
        lit = _str_lit(draw)
        if draw(st.booleans()):
            return "s %s %s" % (op, lit)
        return "%s %s s" % (lit, op)
    if kind == 10:
        neg = draw(st.booleans())
        vals = [_str_lit(draw) for _ in range(draw(st.integers(1, 3)))]
        return "s %sIN {%s}" % ("NOT " if neg else "", ", ".join(vals))
    pat = draw(st.sampled_from(LIKE_PATTERNS))
    return "s LIKE '%s'" % pat


@st.composite
def pred(draw, depth, allow_str=True, negated=False) -> str:
    """A predicate in the syntax of docs/language.md#s2-2, rendered with the parentheses its tree needs.
    negated: under a predicate NOT."""
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        return draw(pred_atom(allow_str, negated))
    kind = draw(st.integers(0, 4))
    if kind == 0:
        c = draw(pred(depth - 1, allow_str, True))
        return "NOT %s" % (c if _is_pred_atom_text(c) and not c.startswith("NOT") else "(%s)" % c)
    l = draw(pred(depth - 1, allow_str, negated))
    r = draw(pred(depth - 1, allow_str, negated))
    op = "AND" if kind <= 2 else "OR"
    # parenthesise compound operands unless AND under OR (precedence does it)
    if not _is_pred_atom_text(l) and not (op == "OR" and draw(st.booleans()) and " OR " not in l):
        l = "(%s)" % l
    if not _is_pred_atom_text(r):
        r = "(%s)" % r
    return "%s %s %s" % (l, op, r)


def _is_pred_atom_text(t: str) -> bool:
    return " AND " not in t and " OR " not in t and not t.startswith("NOT")
