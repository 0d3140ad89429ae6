"""The query pipeline (docs/language.md#s3-9): FROM, accepted positions, PARTITION BY, WHERE, strategy,
WITHIN, projection, CONSUME BY; LIMIT is only recorded (outputs are the pre-LIMIT sets O_j)."""

from .checks import check_query, walk_cel, filter_terms, trailing_absence
from .errors import OracleEventError
from .correlation import measures, reads_other_events
from .events import ingest, partition_key
from .parser import parse_query
from .predicates import eval_pred
from .schema import parse_schema
from .semantics import SubstreamSemantics, _correlated, all_of, conjuncts, data, reads_other
from .strategies import select
from . import nodes as N


class OracleResult:
    """outputs: {end position j: O_j} for every j with a non-empty O_j, where O_j is a set of
    (start, sorted tuple of data positions); limit: the query's LIMIT n (or None).

    With captures (docs/language.md#s3-2a), O_j is a set of (start, valuation), where the
    valuation is a sorted tuple of (position, sorted tuple of variable names). With measures
    in the SELECT list (docs/design/correlation.md), the tuple of (name, value) measures is a
    third member."""

    def __init__(self, outputs, limit):
        self.outputs = outputs
        self.limit = limit

    def matches(self):
        """All complex events (start, end, positions) sorted by end, start, positions; with
        measures in the SELECT list, (start, end, positions, ((name, value), ...))."""
        out = [(o_[0], j) + tuple(o_[1:]) for j, o in self.outputs.items() for o_ in o]
        return sorted(out, key=lambda m: (m[1], m[0], m[2], repr(m[3:])))

    def __repr__(self):
        return "OracleResult(%r, limit=%r)" % (self.matches(), self.limit)


def _binding_events(psi, var, events, accepted, under_as=frozenset()):
    """Accepted positions whose event some atom of psi (outside NOT) stores into `var`."""
    out = set()
    if isinstance(psi, N.Atom):
        for p in accepted:
            ev = events[p]
            if ev.type != psi.type or (psi.stream is not None and ev.stream != psi.stream):
                continue
            if var in under_as or var == psi.type or var == (ev.stream, psi.type):
                out.add(p)
    elif isinstance(psi, N.As):
        out |= _binding_events(psi.child, var, events, accepted, under_as | {psi.name})
    elif isinstance(psi, (N.Filter, N.Plus)):
        out |= _binding_events(psi.child, var, events, accepted, under_as)
    elif isinstance(psi, (N.Seq, N.Or, N.And)):
        out |= _binding_events(psi.left, var, events, accepted, under_as)
        out |= _binding_events(psi.right, var, events, accepted, under_as)
    return out


def _window_coordinate(window, ev):
    if window[0] == "EVENTS":
        return ev.pos
    if window[0] == "ATTR":
        # docs/language.md#s3-7: the coordinate is "an integer"; without declarations "a value
        # that is not an integer rejects the event (CeqlEventError): the check is on the value's
        # type, so a double is rejected even when it is whole (1.0)". Rejected, not dropped: the
        # oracle raises TypeError, as for any rejected input value (CeqlEventError is a
        # TypeError, docs/language.md#s1-2). With declarations E0206 leaves only integers.
        v = ev.attrs.get(window[2])
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError("window attribute %s=%r is not an integer (event %d)" % (window[2], v, ev.pos))
        return v
    if not ev.has_time_source:
        raise ValueError("time-unit window: event %d has no time stamp (give a primary_time "
                         "attribute or time_field=)" % ev.pos)
    return ev.ts


def _written_qualified(q):
    """The qualified variables ``(S, T)`` the query writes: in an atom, a filter or SELECT."""
    out = set()
    for node in walk_cel(q.where):
        if isinstance(node, N.Atom) and node.stream is not None:
            out.add((node.stream, node.type))
        if isinstance(node, N.Filter):
            out |= {t.var for t in filter_terms(node.theta) if isinstance(t.var, tuple)}
    if isinstance(q.select, list):
        out |= {x for x in q.select if isinstance(x, tuple)}
    return out


def _eager_terms(theta):
    """The filter terms of theta in a conjunct (theta split at the AND not under an OR) that
    reads no other event: the automaton's one-event filters."""
    return [t for c in conjuncts(theta) if not reads_other(c) for t in filter_terms(c)]


def tested_per_valuation(q):
    """Whether the query has a filter tested per valuation (docs/language.md#s3-6a): a filter term
    that reads other events (``y.attr``, ``PREV``, an aggregate), in a FILTER or in an ABSENT."""
    for node in walk_cel(q.where):
        if isinstance(node, N.Filter) and any(reads_other_events(t.pred) for t in filter_terms(node.theta)):
            return True
    return False


def evaluate(query_text, events, *, schema=None, time_field=None, time_unit="ns",
             compat_ignore_strategy=False, close_deadlines=False, captures=False, data_errors="must"):
    """close_deadlines: for a trailing ABSENT ... FOR, also report the outputs whose deadline
    the input does not reach (docs/language.md#s3-3b). captures: report valuations
    (docs/language.md#s3-2a). data_errors: "must" raises the data errors of filters between
    events that every order of evaluation reaches, "may" those that some order reaches
    (``semantics.all_of``); the outputs are those of "must" when it raises nothing."""
    if data_errors not in ("must", "may"):
        raise ValueError("data_errors must be 'must' or 'may'")
    q = parse_query(query_text)
    sch = parse_schema(schema) if schema is not None else None
    ctx = check_query(q, sch)
    evs = ingest(events, ctx, time_field=time_field, time_unit=time_unit)

    # ---- accepted positions (docs/language.md#s3-1, #s3-7 late events, docs/language.md#s3-8 keys), in the order of ON_EVENT
    time_based = q.window is not None and q.window[0] in ("ATTR", "TIME")
    coord = {}
    key_of = {}
    max_w = None
    for ev in evs:
        if not ev.in_input:
            continue
        if q.window is not None:
            w = _window_coordinate(q.window, ev)
            if time_based:
                if w is None or (max_w is not None and w < max_w):
                    continue  # late event (or no coordinate): dropped
                max_w = w if max_w is None else max(max_w, w)
            coord[ev.pos] = w
        k = partition_key(ev, q.partition) if q.partition else ()
        if k is None:
            continue
        key_of[ev.pos] = k
    accepted = sorted(key_of)

    # ---- predicates: evaluated once per (filter term, event it may be tested on), eagerly,
    # except in a conjunct that reads other events (docs/language.md#s3-4a): such a conjunct,
    # one-event terms under its OR included, is tested per valuation (its errors deferred)
    table = {}
    for node in walk_cel(q.where):
        if isinstance(node, N.Filter):
            for term in _eager_terms(node.theta):
                for p in sorted(_binding_events(node.child, term.var, evs, accepted)):
                    table[(id(term), p)] = eval_pred(term.pred, evs[p].attrs)

    def truth(term, p):
        k = (id(term), p)
        if k not in table:
            table[k] = eval_pred(term.pred, evs[p].attrs)
        return table[k]

    # ---- WHERE on every substream (a trailing absence: the positive part, and where beta holds)
    positive, trailing = trailing_absence(q.where)
    substreams = {}
    for p in accepted:
        substreams.setdefault(key_of[p], []).append(p)
    by_end = {}
    beta = set()
    sems = {}
    # docs/language.md#s3-3b with s3-3a: a trailing ABSENT whose filters read the match is
    # tested on each valuation (spec note 17); otherwise beta is a set of positions.
    beta_reads_match = trailing is not None and _correlated(trailing)
    deferred = {}  # valuation -> the data error its test raised (docs/language.md#s3-4a)
    for k, sub in substreams.items():
        sem = sems[k] = SubstreamSemantics(evs, sub, truth, data_errors)
        for v in sem.sem(positive):
            by_end.setdefault(v.end, []).append(v)
        deferred.update(sem.errors(positive))
        if trailing is not None and not beta_reads_match:
            for b in trailing.branches:
                beta |= {v.start for v in sem.sem(b) if v.start == v.end}

    strategy = "ALL" if compat_ignore_strategy else q.strategy
    # docs/language.md#s3-6a: with filters tested per valuation, NEXT/LAST/MAX choose among the
    # valuations in the window (the window is applied first).
    window_first = strategy in ("NEXT", "LAST", "MAX") and tested_per_valuation(q)

    def in_window(v):
        w = q.window
        if w is None:
            return True
        if w[0] == "EVENTS":
            return v.end - v.start <= w[1]
        if w[0] == "ATTR":
            return coord[v.end] - coord[v.start] <= w[1]
        return coord[v.end] - coord[v.start] <= w[1]

    def project(v):
        if q.select == "*":
            return tuple(sorted(data(v)))
        if q.select == "NONE":
            return ()
        wanted = set(q.select)
        return tuple(sorted({p for x, p in v.mu if x in wanted}))

    written = _written_qualified(q)

    def reported(x):
        """docs/language.md#s3-2a: type and AS names, S>T only where the query writes it."""
        if isinstance(x, tuple) and x not in written:
            return False
        return q.select == "*" or (q.select != "NONE" and x in q.select)

    def restrict(v):
        """The valuation restricted to the reported variables of the SELECT list."""
        names = {}
        for x, p in v.mu:
            if reported(x):
                names.setdefault(p, set()).add(N.var_name(x))
        return tuple(sorted((p, tuple(sorted(ns))) for p, ns in names.items()))

    output_of = restrict if captures else project

    def dropped_by_absence(v, k):
        """docs/language.md#s3-3b: an output of valuation v (ending at j) needs no later beta
        of the partition until the deadline, and the deadline reached by the input (an event
        after it) unless closed. When beta reads the match, "satisfies beta (as for
        docs/language.md#s3-3a)" is tested on v: the absent event's own variables hold the
        candidate event, every other variable what v binds; its data errors (the policy's,
        semantics.all_of) are raised here."""
        if trailing is None:
            return False
        j = v.end
        deadline = coord[j] + trailing.deadline
        later = [p for p in substreams[k] if p > j and coord[p] <= deadline]
        if beta_reads_match:
            sem = sems[k]
            if not all_of((lambda p=p: not sem.absent_holds(v, trailing, p) for p in later), data_errors):
                return True
        elif any(p in beta for p in later):
            return True
        return not (close_deadlines or (max_w is not None and max_w > deadline))

    def survives_absence(v, k):
        """Whether the absence keeps v's output, for deciding on a deferred error: a data error
        of the absence's own test counts as keeping it (an error is raised either way)."""
        try:
            return not dropped_by_absence(v, k)
        except OracleEventError:
            return True

    # ---- docs/language.md#s3-9 / docs/language.md#s3-10: position by position
    outputs = {}
    reset_all = -1
    reset_part = {}
    for j in accepted:
        k = key_of[j]
        r = max(reset_all, reset_part.get(k, -1))
        xs = [v for v in by_end.get(j, []) if v.start > r]
        # docs/language.md#s3-4a: a valuation whose test raised raises once the partition,
        # the window and, under STRICT, contiguity keep it (whatever the strategy chooses);
        # with "must", only if a trailing absence does not drop the output either.
        tested = [v for v in xs if v in deferred and in_window(v)]
        if strategy == "STRICT":
            tested = select("STRICT", tested, substreams[k])
        if data_errors == "must":
            tested = [v for v in tested if survives_absence(v, k)]
        if tested:
            raise deferred[min(tested, key=lambda v: (v.start, sorted(data(v))))]
        if window_first:
            ws = select(strategy, [v for v in xs if in_window(v)], substreams[k])
        else:
            ys = select(strategy, xs, substreams[k])
            ws = [v for v in ys if in_window(v)]
        # docs/language.md#s3-5a: with a trailing absence, the measures are computed when the
        # complex event ends, before its deadline is known: under "may", the data errors of
        # the measures of outputs the absence drops are raised too.
        if q.measures and trailing is not None and data_errors == "may":
            for v in ws:
                measures(q, v, evs)
        # docs/language.md#s3-3b: the absence acts on the outputs of psi, after the strategy
        # and the window; an output is kept if one of the valuations giving it passes.
        ws = [v for v in ws if not dropped_by_absence(v, k)]
        if q.measures:
            o = {(v.start, output_of(v), measures(q, v, evs)) for v in ws}
        else:
            o = {(v.start, output_of(v)) for v in ws}
        if o:
            outputs[j] = o
            if q.consume == "ANY" or (q.consume == "PARTITION" and not q.partition):
                reset_all = j
            elif q.consume == "PARTITION":
                reset_part[k] = j
    return OracleResult(outputs, q.limit)
