"""Formula semantics on one substream (docs/language.md#s3-2, #s3-3), by explicit valuation sets.

A valuation is ``Valuation(start, end, mu)`` with global positions and ``mu`` a frozenset of
``(variable, position)`` pairs (the variable -> set-of-positions map, listed pointwise).
"""

from collections import namedtuple

from . import nodes as N

Valuation = namedtuple("Valuation", "start end mu")


def data(v):
    """D(V) = all(mu): every position stored in some variable."""
    return frozenset(p for _, p in v.mu)


def positions_of(v, var):
    return [p for x, p in v.mu if x == var]


class SubstreamSemantics:
    """Computes [[phi]](S_kappa) for one substream.

    events: list of event objects (attributes .stream, .type) indexed by global position;
    substream: increasing list of the substream's global positions;
    truth(term, pos): truth value (True/False/None) of filter term ``term`` on the event at pos.
    """

    def __init__(self, events, substream, truth):
        self.events = events
        self.sub = list(substream)
        self.local = {p: k for k, p in enumerate(self.sub)}  # global position -> local index
        self.truth = truth
        self.memo = {}

    @staticmethod
    def by_start(vals):
        d = {}
        for v in vals:
            d.setdefault(v.start, []).append(v)
        return d

    def successors(self, v1, right_by_start, contiguous):
        """The valuations V2 (grouped by start) that may follow v1: with ';' those with
        v1.end < V2.start, with ':' those starting at the next position of the substream."""
        k = self.local[v1.end]
        if contiguous:
            starts = self.sub[k + 1:k + 2]
        else:
            starts = self.sub[k + 1:]
        for p in starts:
            for v2 in right_by_start.get(p, ()):
                yield v2

    def sem(self, node):
        key = id(node)
        if key not in self.memo:
            self.memo[key] = frozenset(self._sem(node))
        return self.memo[key]

    def _sem(self, node):
        if isinstance(node, N.Atom):
            out = set()
            for p in self.sub:
                ev = self.events[p]
                if ev.type != node.type:
                    continue
                if node.stream is not None and ev.stream != node.stream:
                    continue
                mu = {(node.type, p)}
                if ev.stream is not None:
                    mu.add(((ev.stream, node.type), p))
                out.add(Valuation(p, p, frozenset(mu)))
            return out
        if isinstance(node, N.Not):
            matched = {v.start for v in self.sem(node.inner) if v.start == v.end}
            return {Valuation(p, p, frozenset()) for p in self.sub if p not in matched}
        if isinstance(node, N.As):
            out = set()
            for v in self.sem(node.child):
                out.add(Valuation(v.start, v.end, v.mu | {(node.name, p) for p in data(v)}))
            return out
        if isinstance(node, N.Filter):
            return {v for v in self.sem(node.child) if self.satisfies(v, node.theta)}
        if isinstance(node, N.Or):
            return self.sem(node.left) | self.sem(node.right)
        if isinstance(node, N.And):
            # docs/language.md#s3-3c: the union of one valuation of each side whose data are
            # disjoint (distinct events), over the hull of the two intervals
            out = set()
            right = [(v2, data(v2)) for v2 in self.sem(node.right)]
            for v1 in self.sem(node.left):
                d1 = data(v1)
                for v2, d2 in right:
                    if not d1 & d2:
                        out.add(Valuation(min(v1.start, v2.start), max(v1.end, v2.end), v1.mu | v2.mu))
            return out
        if isinstance(node, N.Seq) and not node.contiguous:
            chain = self.chain(node)
            if any(isinstance(e, N.Absent) for e in chain):
                return self.absent_chain(chain)
        if isinstance(node, N.Seq):
            right = self.by_start(self.sem(node.right))
            out = set()
            for v1 in self.sem(node.left):
                for v2 in self.successors(v1, right, node.contiguous):
                    out.add(Valuation(v1.start, v2.end, v1.mu | v2.mu))
            return out
        if isinstance(node, N.Plus):
            # least set containing [[psi]] and closed under V ; V' (resp. V : V'), V' in [[psi]].
            # A filter inside psi (docs/language.md#s3-4c) is part of [[psi]]: it was tested on
            # each iteration's valuation alone (its variables re-bound per iteration), and a
            # union reached through several decompositions is one valuation (some decomposition
            # passes).
            base = self.sem(node.child)
            base_by_start = self.by_start(base)
            result = set(base)
            frontier = set(base)
            while frontier:
                new = set()
                for v in frontier:
                    for w in self.successors(v, base_by_start, node.contiguous):
                        u = Valuation(v.start, w.end, v.mu | w.mu)
                        if u not in result:
                            result.add(u)
                            new.add(u)
                frontier = new
            return result
        raise AssertionError("unknown formula node %r" % (node,))

    @classmethod
    def chain(cls, node):
        """The elements of the maximal ';' chain rooted at node (';' is associative)."""
        if isinstance(node, N.Seq) and not node.contiguous:
            return cls.chain(node.left) + cls.chain(node.right)
        return [node]

    def absent_chain(self, chain):
        """psi_1 ; ... ; psi_n with ABSENT(beta) elements (docs/language.md#s3-3a): the rule of ';' between
        consecutive patterns, keeping the pairs with no position k, v1.end < k < v2.start, of the
        substream where some beta of the ABSENTs between them holds. (The placement check
        guarantees that the chain starts and ends with a pattern.)

        An ABSENT whose filters read other events (docs/language.md#s3-3a, "Absence with a
        condition on the match") is tested on the whole chain's valuation: each partial valuation
        carries its gaps (local lo..hi-1 and the correlated ABSENTs there), and a valuation of the
        chain is kept if some way of building it passes every gap."""
        from . import correlation  # imports this module

        vals = {(v, ()) for v in self.sem(chain[0])}
        pending = []
        for e in chain[1:]:
            if isinstance(e, N.Absent):
                pending.append(e)
                continue
            plain = [a for a in pending if not _correlated(a)]
            tested = tuple(a for a in pending if _correlated(a))
            # bad[k]: local index k satisfies one of the pending betas; prefix counts
            bad = set()
            for a in plain:
                bad |= {v.start for v in self.sem(a.inner) if v.start == v.end}
            prefix = [0]
            for p in self.sub:
                prefix.append(prefix[-1] + (p in bad))
            right = self.by_start(self.sem(e))
            out = set()
            for v1, gaps in vals:
                for v2 in self.successors(v1, right, False):
                    lo, hi = self.local[v1.end] + 1, self.local[v2.start]  # local (lo..hi-1) strictly between
                    if prefix[hi] - prefix[lo] == 0:
                        more = gaps + ((lo, hi, tested),) if tested else gaps
                        out.add((Valuation(v1.start, v2.end, v1.mu | v2.mu), more))
            vals = out
            pending = []
        return {v for v, gaps in vals if all(self.gap_passes(v, g) for g in gaps)}

    def gap_passes(self, v, gap):
        """No event of the gap (local lo..hi-1) satisfies a correlated ABSENT of it, its own
        variables holding that event and the others those of the chain's valuation v."""
        lo, hi, absents = gap
        for k in range(lo, hi):
            p = self.sub[k]
            for a in absents:
                if self.absent_holds(v, a, p):
                    return False
        return True

    def absent_holds(self, v, a, p):
        """Whether the event at p satisfies ABSENT(a)'s atomic, read against valuation v."""
        inner, thetas = a.inner, []
        while isinstance(inner, N.Filter):
            thetas.append(inner.theta)
            inner = inner.child
        own = set()
        if isinstance(inner, N.As):  # ABSENT(B AS b ...): b is one of its own variables
            own.add(inner.name)
            inner = inner.child
        ev = self.events[p]
        if ev.type != inner.type or (inner.stream is not None and ev.stream != inner.stream):
            return False
        own |= {inner.type} | ({(ev.stream, inner.type)} if ev.stream is not None else set())
        mu = frozenset((x, q) for x, q in v.mu if x not in own) | {(x, p) for x in own}
        w = Valuation(v.start, v.end, mu)
        return all(self.satisfies(w, theta) for theta in thetas)

    def satisfies(self, v, theta):
        if isinstance(theta, N.FTerm):
            from . import correlation  # imports this module

            if correlation.reads_other_events(theta.pred):
                return correlation.satisfies(v, theta, self.events)
            # for-all over mu(X): vacuously true when X is unbound
            return all(self.truth(theta, p) is True for p in positions_of(v, theta.var))
        if isinstance(theta, N.FAnd):
            return self.satisfies(v, theta.left) and self.satisfies(v, theta.right)
        if isinstance(theta, N.FOr):
            return self.satisfies(v, theta.left) or self.satisfies(v, theta.right)
        raise AssertionError("unknown filter %r" % (theta,))


def _correlated(absent):
    """Whether an ABSENT's filters read other events of the match (docs/language.md#s3-3a)."""
    from . import correlation  # imports this module

    inner = absent.inner
    while isinstance(inner, N.Filter):
        from .checks import filter_terms

        if any(correlation.reads_other_events(t.pred) for t in filter_terms(inner.theta)):
            return True
        inner = inner.child
    return False
