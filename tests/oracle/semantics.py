"""Formula semantics on one substream (docs/language.md#s3-2, #s3-3), by explicit valuation sets.

A valuation is ``Valuation(start, end, mu)`` with global positions and ``mu`` a frozenset of
``(variable, position)`` pairs (the variable -> set-of-positions map, listed pointwise).

Data errors of filters between events (docs/language.md#s3-4a) are deferred: "a valuation is
tested, and can raise, only once the rest of the query holds for it". A test that raises keeps
its valuation, which carries the error (:meth:`SubstreamSemantics.errors`) into every valuation
built from it; the pipeline raises it only if such a valuation survives the partition, the
window and, under ``STRICT``, contiguity. Which tests raise depends on the order of evaluation,
which the spec leaves open (:func:`all_of`): the policy ``"must"`` gives the errors every order
raises (a valuation reached without an error by another derivation carries none, and one that
another test finds FALSE is dropped), ``"may"`` those some order raises (an error wins, and a
failing valuation whose test raised stays, to carry it).
"""

from collections import namedtuple

from . import nodes as N
from .errors import OracleEventError

Valuation = namedtuple("Valuation", "start end mu")


def data(v):
    """D(V) = all(mu): every position stored in some variable."""
    return frozenset(p for _, p in v.mu)


def positions_of(v, var):
    return [p for x, p in v.mu if x == var]


def all_of(tests, policy):
    """The conjunction of ``tests`` (callables returning a bool or raising OracleEventError),
    where a data error may come from any of them: the engine evaluates the conjuncts of a test
    (and the choices of events of a for-all) in an order the spec leaves open, and stops at the
    first FALSE (docs/language.md#s3-4a). ``policy="must"``: FALSE if some test is FALSE, else
    the first error, else TRUE (an error every order reaches). ``policy="may"``: the first error
    if some test raises, else the conjunction (an error some order reaches). A disjunction is
    ``not all_of(not t ...)``."""
    err, false = None, False
    for t in tests:
        try:
            ok = t()
        except OracleEventError as e:
            if policy == "may":
                raise
            err = err or e
            continue
        if not ok:
            if policy == "must":
                return False
            false = True
    if err is not None:
        raise err
    return not false


class SubstreamSemantics:
    """Computes [[phi]](S_kappa) for one substream.

    events: list of event objects (attributes .stream, .type) indexed by global position;
    substream: increasing list of the substream's global positions;
    truth(term, pos): truth value (True/False/None) of filter term ``term`` on the event at pos;
    policy: which data errors a test raises (:func:`all_of`).
    """

    def __init__(self, events, substream, truth, policy="must"):
        self.policy = policy
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
        """[[node]] on the substream: a frozenset of valuations."""
        return self._both(node)[0]

    def errors(self, node):
        """{valuation of [[node]]: the deferred data error it carries} (module docstring)."""
        return self._both(node)[1]

    def _both(self, node):
        key = id(node)
        if key not in self.memo:
            outer, self.errs = getattr(self, "errs", None), {}
            out = frozenset(self._sem(node))
            self.memo[key] = (out, {v: e for v, e in self.errs.items() if v in out})
            self.errs = outer
        return self.memo[key]

    def _err(self, node, v):
        return self.errors(node).get(v)

    def _put(self, out, u, err):
        """Adds u to out. With the policy "must", u carries err unless it is (or was) reached
        without an error; with "may", it carries an error if some derivation raised one.
        Returns whether out changed (u new, or its error newly gone or come)."""
        errs = self.errs
        if u in out:
            if self.policy == "must" and err is None and u in errs:
                del errs[u]
                return True
            if self.policy == "may" and err is not None and u not in errs:
                errs[u] = err
                return True
            return False
        out.add(u)
        if err is not None:
            errs[u] = err
        return True

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
                self._put(out, Valuation(v.start, v.end, v.mu | {(node.name, p) for p in data(v)}),
                          self._err(node.child, v))
            return out
        if isinstance(node, N.Filter):
            out = set()
            for v in self.sem(node.child):
                err = self._err(node.child, v)
                try:
                    ok = self.test(v, node.theta)
                except OracleEventError as e:  # deferred (module docstring)
                    ok, err = True, err or e
                if ok or (err is not None and self.policy == "may"):
                    self._put(out, v, err)  # with "may", a failing v whose test may raise stays
            return out
        if isinstance(node, N.Or):
            out = set()
            for side in (node.left, node.right):
                for v in self.sem(side):
                    self._put(out, v, self._err(side, v))
            return out
        if isinstance(node, N.And):
            # docs/language.md#s3-3c: the union of one valuation of each side whose data are
            # disjoint (distinct events), over the hull of the two intervals
            out = set()
            right = [(v2, data(v2)) for v2 in self.sem(node.right)]
            for v1 in self.sem(node.left):
                d1 = data(v1)
                for v2, d2 in right:
                    if not d1 & d2:
                        self._put(out, Valuation(min(v1.start, v2.start), max(v1.end, v2.end), v1.mu | v2.mu),
                                  self._err(node.left, v1) or self._err(node.right, v2))
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
                    self._put(out, Valuation(v1.start, v2.end, v1.mu | v2.mu),
                              self._err(node.left, v1) or self._err(node.right, v2))
            return out
        if isinstance(node, N.Plus):
            # least set containing [[psi]] and closed under V ; V' (resp. V : V'), V' in [[psi]].
            # A filter inside psi (docs/language.md#s3-4c) is part of [[psi]]: it was tested on
            # each iteration's valuation alone (its variables re-bound per iteration), and a
            # union reached through several decompositions is one valuation (some decomposition
            # passes; one without a deferred error, if there is one, and a valuation that
            # becomes free of errors is extended again).
            base = self.sem(node.child)
            base_by_start = self.by_start(base)
            result = set()
            for v in base:
                self._put(result, v, self._err(node.child, v))
            frontier = set(base)
            while frontier:
                new = set()
                for v in frontier:
                    for w in self.successors(v, base_by_start, node.contiguous):
                        u = Valuation(v.start, w.end, v.mu | w.mu)
                        if self._put(result, u, self.errs.get(v) or self._err(node.child, w)):
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

        first = self.errors(chain[0])
        vals = {(v, (), first.get(v)) for v in self.sem(chain[0])}
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
                for b in a.branches:
                    bad |= {v.start for v in self.sem(b) if v.start == v.end}
            prefix = [0]
            for p in self.sub:
                prefix.append(prefix[-1] + (p in bad))
            right = self.by_start(self.sem(e))
            errs = self.errors(e)
            out = set()
            for v1, gaps, err in vals:
                for v2 in self.successors(v1, right, False):
                    lo, hi = self.local[v1.end] + 1, self.local[v2.start]  # local (lo..hi-1) strictly between
                    if prefix[hi] - prefix[lo] == 0:
                        more = gaps + ((lo, hi, tested),) if tested else gaps
                        out.add((Valuation(v1.start, v2.end, v1.mu | v2.mu), more, err or errs.get(v2)))
            vals = out
            pending = []
        result = set()
        for v, gaps, err in vals:
            try:
                ok = all_of((lambda g=g: self.gap_passes(v, g) for g in gaps), self.policy)
            except OracleEventError as e:  # deferred (module docstring)
                ok, err = True, err or e
            if ok or (err is not None and self.policy == "may"):
                self._put(result, v, err)
        return result

    def gap_passes(self, v, gap):
        """No event of the gap (local lo..hi-1) satisfies a correlated ABSENT of it, its own
        variables holding that event and the others those of the chain's valuation v."""
        lo, hi, absents = gap
        tests = (lambda p=self.sub[k], a=a: not self.absent_holds(v, a, p) for k in range(lo, hi) for a in absents)
        return all_of(tests, self.policy)

    def absent_holds(self, v, a, p):
        """Whether the event at p satisfies one of ABSENT(a)'s alternatives, read against
        valuation v (a data error as the policy says, as for an OR of filters)."""
        return not all_of((lambda b=b: not self.branch_holds(v, b, p) for b in a.branches), self.policy)

    def branch_holds(self, v, branch, p):
        """Whether the event at p satisfies one alternative of an ABSENT, read against v."""
        inner, thetas = branch, []
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
        return all_of((lambda t=theta: self.test(w, t) for theta in thetas), self.policy)

    def test(self, v, theta):
        """A filter's test of v: its one-event conjuncts (theta split at the AND not under an
        OR or NOT, docs/language.md#s3-4b) are the automaton's, so a FALSE one means v is no
        valuation at all, and nothing else is tested; then the conjuncts that read other
        events, with the policy's data errors."""
        parts = conjuncts(theta)
        one_event = [c for c in parts if not reads_other(c)]
        if not all(self.satisfies(v, c) for c in one_event):
            return False
        return all_of((lambda c=c: self.satisfies(v, c) for c in parts if reads_other(c)), self.policy)

    def satisfies(self, v, theta):
        """Whether v satisfies theta; raises the data error the policy says a test of v
        raises (:func:`all_of`)."""
        if isinstance(theta, N.FTerm):
            from . import correlation  # imports this module

            if correlation.reads_other_events(theta.pred):
                return correlation.satisfies(v, theta, self.events, self.policy)
            # for-all over mu(X): vacuously true when X is unbound
            return all_of((lambda p=p: self.truth(theta, p) is True for p in positions_of(v, theta.var)),
                          self.policy)
        if isinstance(theta, N.FAnd):
            return all_of((lambda t=t: self.satisfies(v, t) for t in (theta.left, theta.right)), self.policy)
        if isinstance(theta, N.FOr):
            return not all_of((lambda t=t: not self.satisfies(v, t) for t in (theta.left, theta.right)),
                              self.policy)
        raise AssertionError("unknown filter %r" % (theta,))


def conjuncts(theta):
    """theta split at the AND not under an OR (its top-level conjuncts)."""
    if isinstance(theta, N.FAnd):
        return conjuncts(theta.left) + conjuncts(theta.right)
    return [theta]


def reads_other(theta):
    """Whether a filter conjunct has a term that reads other events."""
    from . import correlation  # imports this module
    from .checks import filter_terms

    return any(correlation.reads_other_events(t.pred) for t in filter_terms(theta))


def _correlated(absent):
    """Whether an ABSENT's filters read other events of the match (docs/language.md#s3-3a)."""
    from . import correlation  # imports this module

    from .checks import filter_terms

    for inner in absent.branches:
        while isinstance(inner, N.Filter):
            if any(correlation.reads_other_events(t.pred) for t in filter_terms(inner.theta)):
                return True
            inner = inner.child
    return False
