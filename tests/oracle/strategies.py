"""Selection strategies (docs/language.md#s3-6), by brute force over the valuations with a common end.

For V = ([i, j], mu): D(V) = all(mu), K(V) = D(V) | {i}; pairs (K, D) are compared
lexicographically. A <next B iff min(A ^ B) in B; A <last B iff max(A ^ B) in B.
"""

from .semantics import data


def key_pair(v):
    d = data(v)
    return (d | {v.start}, d)


def less_next(a, b):
    return a != b and min(a ^ b) in b


def less_last(a, b):
    return a != b and max(a ^ b) in b


def pair_less(p, q, less):
    if p[0] != q[0]:
        return less(p[0], q[0])
    return less(p[1], q[1])


def _best(xs, less):
    pairs = [key_pair(v) for v in xs]
    best = None
    for p in pairs:
        if best is None or pair_less(best, p, less):
            best = p
    return [v for v, p in zip(xs, pairs) if p == best]


def select(strategy, xs, substream):
    """SEL_strategy(X) for a list X of valuations of one substream ending at the same position.
    ``substream`` is the increasing list of the substream's global positions."""
    xs = list(xs)
    if not xs or strategy in ("ALL", "ANY"):
        return xs
    if strategy == "STRICT":
        out = []
        for v in xs:
            d = data(v)
            if all(p in d for p in substream if v.start < p <= v.end):
                out.append(v)
        return out
    if strategy == "NEXT":
        return _best(xs, less_next)
    if strategy == "LAST":
        return _best(xs, less_last)
    if strategy == "MAX":
        pairs = [key_pair(v) for v in xs]
        out = []
        for v, (kv, dv) in zip(xs, pairs):
            dominated = any(kv <= kw and dv <= dw and (kv, dv) != (kw, dw) for (kw, dw) in pairs)
            if not dominated:
                out.append(v)
        return out
    raise AssertionError("unknown strategy %s" % strategy)
