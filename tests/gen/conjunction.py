"""Formulas rooted at a conjunction ``l AND r`` (docs/language.md#s3-3c), for the profiles with
``conjunction=True`` (tests/test_differential_conjunction.py).

:func:`formulas.formula` calls :func:`conjunction_root` for the root of such a profile's
formula. Half of the roots are a conjunction, in one of these shapes, whose operands are
ordinary random formulas (which may hold more ``AND`` through the profile's ``ops``):

* ``f1 AND f2 [AND f3]`` (the paper's ``AND(A a, B b, C c)`` when the operands are atoms);
* the paper's partial sequence ``(x1 ; y1) AND (x2 ; y2) AND z``;
* an operand that is an absence chain ``l ; ABSENT(β) ; r``, so that absence and
  conjunction meet (the absence reads the stream between ``l`` and ``r``, whatever the
  other side captures);
* a conjunction under a postfix: ``(l AND r)+``, ``(l AND r):+``, ``(l AND r) AS x``,
  ``(l AND r) FILTER θ`` (a filter over variables of both sides);
* a conjunction inside a sequence: ``a ; (l AND r)``, ``(l AND r) : a``.

The other half (``None``) leaves the root to :func:`formulas.formula`.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .formulas import absent_atomic, atom, formula, theta
from .profiles import Profile, prof_decl
from .schemas import AS_NAMES
from .trees import bindable


def _and_all(operands):
    node = operands[0]
    for o in operands[1:]:
        node = ("and", node, o)
    return node


@st.composite
def conjunction_root(draw, prof: Profile, depth: int, state: dict):
    if draw(st.booleans()):
        return None
    # operands of mixed depth: small ones (atoms, pairs) keep many conjunctions satisfiable
    sub = lambda: draw(formula(prof, draw(st.integers(max(0, depth - 2), depth - 1)), state))  # noqa: E731
    shape = draw(st.sampled_from(["nary", "nary", "partial", "absent", "postfix", "postfix", "inside"]))
    if shape == "nary":
        return _and_all([sub() for _ in range(draw(st.integers(2, 3)))])
    if shape == "partial":
        seqs = [("seq", draw(atom(prof)), draw(atom(prof)), False) for _ in range(draw(st.integers(1, 2)))]
        return _and_all(seqs + [draw(atom(prof))])
    if shape == "absent":
        chain = ("absent_seq", draw(atom(prof)), draw(absent_atomic(prof)), draw(atom(prof)))
        other = sub()
        return ("and", chain, other) if draw(st.booleans()) else ("and", other, chain)
    conj = ("and", sub(), sub())
    if shape == "inside":
        a = sub()
        if draw(st.booleans()):
            return ("seq", a, conj, draw(st.booleans()))
        return ("seq", conj, a, draw(st.booleans()))
    kind = draw(st.sampled_from(["plus", "cplus", "as", "filter"]))
    if kind == "plus":
        return ("plus", conj, False)
    if kind == "cplus":
        return ("plus", conj, True)
    if kind == "as":
        return ("as", conj, draw(st.sampled_from(AS_NAMES)))
    cands = sorted(bindable(conj, prof_decl(prof)), key=str)
    if not prof.qualified:
        cands = [v for v in cands if not isinstance(v, tuple)]
    if not cands or not prof.filters:
        return conj
    return ("filter", conj, draw(theta(cands, prof)))
