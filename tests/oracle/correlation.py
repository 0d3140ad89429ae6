"""Predicates between events, PREV and aggregates (docs/design/correlation.md, section 2), by brute
force over the valuation.

A filter term ``x[P]`` whose ``P`` reads other events (``y.attr``, ``PREV(attr)``, an
aggregate) holds for a valuation V iff, for every event ``k`` of ``mu(x)`` (every ``k`` but
the first when ``P`` uses ``PREV``, which then reads the previous event of ``mu(x)`` by
position) and every choice of one event per variable read through ``y.attr``, ``P`` is TRUE.
An aggregate is a function of the whole set ``mu(y)``. An empty ``mu(x)`` or an empty choice
set makes the for-all vacuously true (the static check E0305 rules out the latter for
``y.attr``).
"""

import itertools
import math

from . import nodes as N
from .errors import OracleEventError
from .predicates import eval_pred, is_num, kind, _i64
from .semantics import all_of, positions_of


def _walk(n):
    """Every predicate and expression node under ``n``."""
    yield n
    for name in ("left", "right", "child", "expr", "lo", "hi"):
        c = getattr(n, name, None)
        if c is not None and not isinstance(c, (str, int, float, bool)):
            yield from _walk(c)


def reads_other_events(pred):
    """True iff ``pred`` is not unary: it has a ``y.attr``, ``PREV`` or an aggregate."""
    return any(isinstance(n, (N.Ref, N.Prev, N.Agg)) for n in _walk(pred))


def referenced(pred):
    """Variables read through ``y.attr`` (quantified) and through aggregates (whole sets)."""
    refs, aggs = set(), set()
    for n in _walk(pred):
        if isinstance(n, N.Ref):
            refs.add(n.var)
        elif isinstance(n, N.Agg):
            aggs.add(n.var)
    return refs, aggs


def uses_prev(pred):
    return any(isinstance(n, N.Prev) for n in _walk(pred))


def aggregate(agg, v, events):
    """Value of ``count(y)`` or ``f(y.attr)`` over ``mu(y)`` of valuation ``v``."""
    ps = sorted(positions_of(v, agg.var))
    if agg.func == "count":
        return len(ps)
    if agg.func in ("first", "last"):
        if not ps:
            return None
        return events[ps[0] if agg.func == "first" else ps[-1]].attrs.get(agg.name)
    values = [events[p].attrs.get(agg.name) for p in ps]
    values = [x for x in values if x is not None]  # NULLs are skipped, as in SQL
    for x in values:
        if not is_num(x):
            raise OracleEventError("%s(%s.%s): %r is not a number" % (agg.func, agg.var, agg.name, x))
    if not values:
        return None
    if agg.func == "sum":
        if all(kind(x) == "int" for x in values):
            return _i64(sum(values))  # exact, NULL when beyond 64 bits
        total = 0.0
        for x in values:  # in position order, as f64
            total += float(x)
        return total
    if agg.func == "avg":
        total = 0.0
        for x in values:
            total += float(x)
        return total / len(values)
    if any(kind(x) == "float" and math.isnan(x) for x in values):
        return float("nan")
    return min(values) if agg.func == "min" else max(values)


class _Env:
    """Resolves the non-unary terms for one anchor event and one choice of events."""

    def __init__(self, events, v, chosen, prev):
        self.events, self.v, self.chosen, self.prev = events, v, chosen, prev

    def value(self, e):
        if isinstance(e, N.Ref):
            return self.events[self.chosen[e.var]].attrs.get(e.name)
        if isinstance(e, N.Prev):
            return self.events[self.prev].attrs.get(e.name)
        return aggregate(e, self.v, self.events)


def satisfies(v, term, events, policy="must"):
    """Whether valuation ``v`` satisfies the filter term ``term`` (docs/design/correlation.md,
    section 2); which data error it raises: ``semantics.all_of``."""
    xs = sorted(positions_of(v, term.var))
    refs, _ = referenced(term.pred)
    refs = sorted(refs)
    domains = [sorted(positions_of(v, y)) for y in refs]
    if uses_prev(term.pred):
        anchors = list(zip(xs[1:], xs[:-1]))
    else:
        anchors = [(x, None) for x in xs]

    def test(x, prev, combo):
        return eval_pred(term.pred, events[x].attrs, _Env(events, v, dict(zip(refs, combo)), prev)) is True

    return all_of((lambda x=x, prev=prev, combo=combo: test(x, prev, combo)
                   for x, prev in anchors for combo in itertools.product(*domains)), policy)


#: The one NaN the measures give: a NaN equals a NaN in outputs (docs/language.md#s3-5a),
#: and Python's sets tell NaN objects apart unless they are the same object.
NAN = float("nan")


def _one_nan(x):
    return NAN if isinstance(x, float) and x != x else x


def measure_key(x):
    """A measure value with its kind, as outputs tell measures apart (docs/language.md#s3-5a):
    numbers compare as numbers (``1`` and ``1.0`` are equal), a NaN equals a NaN, and the
    kinds NULL, number, string and boolean are apart (docs/language.md#s3-4): ``True`` is not
    the number ``1``, although Python's ``True == 1`` and ``hash(True) == hash(1)``."""
    if x is None:
        return ("null",)
    if isinstance(x, bool):
        return ("bool", x)
    if isinstance(x, (int, float)):
        return ("nan",) if x != x else ("num", x)
    return ("str", x)


class Measures(tuple):
    """The measures of an output: a tuple of ``(name, value)`` whose values are the plain Python
    values (``None``, ``int``, ``float``, ``str``, ``bool``), but which compares and hashes by
    :func:`measure_key`, so that a set of outputs keeps ``f = True`` and ``f = 1`` apart and
    merges ``f = 1`` with ``f = 1.0``. It compares so with a plain tuple of pairs too, and
    hashes as the plain tuple does."""

    __slots__ = ()

    def key(self):
        return tuple((name, measure_key(x)) for name, x in self)

    def __eq__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        try:
            return self.key() == Measures(other).key()
        except (TypeError, ValueError):  # not a tuple of (name, value) pairs
            return False

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        # The hash of the plain tuple (with the one NaN), so that a set of outputs still equals
        # a set of plain tuples: True and 1 collide (hash(True) == hash(1)) but are not equal,
        # 1 and 1.0 hash alike and are equal, every NaN hashes as NAN.
        return hash(tuple((name, _one_nan(x)) for name, x in self))


def measures(q, v, events):
    """The SELECT list's measures of valuation ``v``: :class:`Measures`, a tuple of (name, value)."""
    return Measures((name, _one_nan(aggregate(agg, v, events))) for name, agg in q.measures)


# ------------------------------------------------------------------ static: definitely bound

def nonempty(node):
    """Every valuation of ``node`` captures at least one event."""
    if isinstance(node, N.Atom):
        return True
    if isinstance(node, N.Not):
        return False
    if isinstance(node, (N.As, N.Filter, N.Plus)):
        return nonempty(node.child)
    if isinstance(node, (N.Seq, N.And)):
        return nonempty(node.left) or nonempty(node.right)
    if isinstance(node, N.Or):
        return nonempty(node.left) and nonempty(node.right)
    return False  # constructs without events of their own (e.g. ABSENT)


def definitely_bound(node):
    """Variables that every valuation of ``node`` binds to at least one event."""
    if isinstance(node, N.Atom):
        out = {node.type}
        if node.stream is not None:
            out.add((node.stream, node.type))
        return out
    if isinstance(node, N.As):
        out = definitely_bound(node.child)
        return out | {node.name} if nonempty(node.child) else out
    if isinstance(node, (N.Filter, N.Plus)):
        return definitely_bound(node.child)
    if isinstance(node, (N.Seq, N.And)):
        return definitely_bound(node.left) | definitely_bound(node.right)
    if isinstance(node, N.Or):
        return definitely_bound(node.left) & definitely_bound(node.right)
    return set()
