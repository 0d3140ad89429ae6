"""Static checks (docs/language.md#s4), in the order syntax (parser), ABSENT placement, names, types, scope.

Implemented: E0200, E0201, E0202, E0203, E0204, E0205, E0206, E0207, E0208 (names, windows,
partitions), E0300 (a simple type checker, with a schema; IN-list mixing also without one) and
E0301 (well-formedness, docs/language.md#s4-2), E0302-E0304 (ABSENT placement and the trailing
ABSENT ... FOR, docs/language.md#s3-3a, #s3-3b), E0305 (a `y.attr` whose `y` some valuation leaves
empty, docs/design/correlation.md). Lints (W04xx) are not produced. E0500 is never raised.
"""

from .errors import OracleError
from .lexer import I64_MAX
from .schema import RESERVED_FIELDS
from . import nodes as N
from .nodes import var_name
from .correlation import definitely_bound, reads_other_events, uses_prev


class Context:
    """What the evaluator needs to know about the query's environment.

    from_streams: the effective FROM list (None: schema-less query without FROM, a single
    implicit stream); known_types: event type names of the FROM streams (with a schema) or the
    event types named by the query's atoms (without one)."""

    def __init__(self, query, schema, from_streams, known_types):
        self.query = query
        self.schema = schema
        self.from_streams = from_streams
        self.known_types = known_types

    def stream_declares(self, stream, etype):
        """Can an atom of type `etype` capture events of `stream` (used for S>T variables)?"""
        if self.schema is not None:
            return stream in self.from_streams and self.schema.declares(stream, etype)
        if self.from_streams is not None:
            return stream in self.from_streams
        return True  # implicit stream of a schema-less query: any qualifier is accepted

    def types_of_atom(self, atom):
        """Set of (stream, type) pairs an atom can capture (schema mode)."""
        if atom.stream is not None:
            return {(atom.stream, atom.type)}
        return {(s, atom.type) for s in self.from_streams if self.schema.declares(s, atom.type)}


# ------------------------------------------------------------------ tree walks

def walk_cel(node):
    """All CEL nodes (including those inside NOT), pre-order."""
    yield node
    if isinstance(node, N.Absent):
        for b in node.branches:
            yield from walk_cel(b)
    elif isinstance(node, N.Not):
        yield from walk_cel(node.inner)
    elif isinstance(node, (N.As, N.Plus, N.Filter)):
        yield from walk_cel(node.child)
    elif isinstance(node, (N.Seq, N.Or, N.And)):
        yield from walk_cel(node.left)
        yield from walk_cel(node.right)


def filter_terms(theta):
    if isinstance(theta, N.FTerm):
        yield theta
    else:
        yield from filter_terms(theta.left)
        yield from filter_terms(theta.right)


def walk_pred(p):
    yield p
    if isinstance(p, (N.PAnd, N.POr)):
        yield from walk_pred(p.left)
        yield from walk_pred(p.right)
    elif isinstance(p, N.PNot):
        yield from walk_pred(p.child)


def pred_exprs(p):
    if isinstance(p, N.Cmp):
        return [p.left, p.right]
    if isinstance(p, (N.Like, N.InSet, N.Bare, N.IsNull)):
        return [p.expr]
    if isinstance(p, N.InRange):
        return [p.expr, p.lo, p.hi]
    return []


def walk_expr(e):
    yield e
    if isinstance(e, N.Unary):
        yield from walk_expr(e.expr)
    elif isinstance(e, N.Bin):
        yield from walk_expr(e.left)
        yield from walk_expr(e.right)


def pred_attrs(p):
    """Attributes of the filtered variable's own events (bare names and ``PREV(a)``)."""
    out = []
    for q in walk_pred(p):
        for e in pred_exprs(q):
            for x in walk_expr(e):
                if isinstance(x, (N.Attr, N.Prev)) and x.name not in out:
                    out.append(x.name)
    return out


def other_reads(p):
    """The ``y.attr`` and aggregate nodes of a predicate (they read other variables)."""
    return [x for q in walk_pred(p) for e in pred_exprs(q) for x in walk_expr(e) if isinstance(x, (N.Ref, N.Agg))]


def under_not(node, inside=False):
    """Ids of the CEL nodes inside a NOT."""
    out = set()
    if inside:
        out.add(id(node))
    if isinstance(node, N.Not):
        out |= under_not(node.inner, True)
    elif isinstance(node, (N.As, N.Plus, N.Filter)):
        out |= under_not(node.child, inside)
    elif isinstance(node, (N.Seq, N.Or, N.And)):
        out |= under_not(node.left, inside) | under_not(node.right, inside)
    return out


def atoms_outside_not(node):
    if isinstance(node, N.Atom):
        yield node
    elif isinstance(node, (N.Not, N.Absent)):
        return
    elif isinstance(node, (N.As, N.Plus, N.Filter)):
        yield from atoms_outside_not(node.child)
    elif isinstance(node, (N.Seq, N.Or, N.And)):
        yield from atoms_outside_not(node.left)
        yield from atoms_outside_not(node.right)


# ------------------------------------------------------------------ docs/language.md#s4-2 bindable

def binds_any(node):
    return any(True for _ in atoms_outside_not(node))


def is_bindable(ctx, var, node):
    if isinstance(node, N.Atom):
        if var == node.type:
            return True
        if not isinstance(var, tuple) or var[1] != node.type:
            return False
        if node.stream is not None:
            return var[0] == node.stream
        return ctx.stream_declares(var[0], node.type)
    if isinstance(node, (N.Not, N.Absent)):
        return False
    if isinstance(node, N.As):
        return is_bindable(ctx, var, node.child) or (var == node.name and binds_any(node.child))
    if isinstance(node, (N.Filter, N.Plus)):
        return is_bindable(ctx, var, node.child)
    if isinstance(node, (N.Seq, N.Or, N.And)):
        return is_bindable(ctx, var, node.left) or is_bindable(ctx, var, node.right)
    raise AssertionError(node)


# ------------------------------------------------------------------ the checks

def absent_chains(where):
    """{id of a Filter node inside an ABSENT of a ';' chain: the chain's patterns as one Seq}
    (docs/language.md#s3-3a): the scope of what that filter reads besides its own event."""
    out = {}

    def walk(node):
        if isinstance(node, N.Seq) and not node.contiguous:
            chain = seq_chain(node)
            patterns = [e for e in chain if not isinstance(e, N.Absent)]
            scope = patterns[0]
            for e in patterns[1:]:
                scope = N.Seq(scope, e, False)
            for e in chain:
                if isinstance(e, N.Absent):
                    for inner in e.branches:
                        while isinstance(inner, N.Filter):
                            out[id(inner)] = scope
                            inner = inner.child
                else:
                    walk(e)
        elif isinstance(node, (N.As, N.Plus, N.Filter)):
            walk(node.child)
        elif isinstance(node, (N.Seq, N.Or)):
            walk(node.left)
            walk(node.right)

    walk(where)
    return out


def seq_chain(node):
    """The elements of the maximal ';' chain rooted at node (';' is associative)."""
    if isinstance(node, N.Seq) and not node.contiguous:
        return seq_chain(node.left) + seq_chain(node.right)
    return [node]


def trailing_absence(where):
    """(positive formula, Absent) for `psi ; ABSENT(beta) FOR d` (docs/language.md#s3-3b), else (where, None).
    The positive formula is the chain before the absence (placement checked)."""
    chain = seq_chain(where)
    if len(chain) > 1 and isinstance(chain[-1], N.Absent) and chain[-1].deadline is not None:
        positive = chain[0]
        for e in chain[1:-1]:
            positive = N.Seq(positive, e, False)
        return positive, chain[-1]
    return where, None


def check_absent_formula(where):
    """E0302/E0303 for the whole formula: a trailing ABSENT ... FOR ends the top-level chain,
    every other ABSENT stands strictly inside a chain, without FOR."""
    chain = seq_chain(where)
    if len(chain) == 1 and isinstance(chain[0], N.Absent):
        raise OracleError("E0302", "ABSENT is the whole formula")
    if len(chain) > 1 and isinstance(chain[-1], N.Absent) and chain[-1].deadline is not None:
        if isinstance(chain[-2], N.Absent):
            raise OracleError("E0302", "ABSENT right before the trailing ABSENT ... FOR")
        _check_chain(chain[:-1])
        return chain[-1].deadline
    check_absent_placement(where)
    return None


def _check_chain(chain):
    for e in chain:
        if isinstance(e, N.Absent) and e.deadline is not None:
            raise OracleError("E0303", "FOR on an ABSENT that does not end the formula")
    if isinstance(chain[0], N.Absent) or isinstance(chain[-1], N.Absent):
        raise OracleError("E0302", "ABSENT starts or ends a ';' sequence")
    for e in chain:
        if not isinstance(e, N.Absent):
            check_absent_placement(e)


def check_absent_placement(node):
    """E0302 (docs/language.md#s3-3a): every ABSENT has a pattern before and after it in its ';' chain;
    E0303: FOR only on the trailing one."""
    if isinstance(node, N.Absent):
        if node.deadline is not None:
            raise OracleError("E0303", "FOR on an ABSENT that does not end the formula")
        raise OracleError("E0302", "ABSENT is not an operand of a ';' sequence")
    if isinstance(node, N.Seq) and not node.contiguous:
        _check_chain(seq_chain(node))
    elif isinstance(node, (N.As, N.Plus, N.Filter)):
        check_absent_placement(node.child)
    elif isinstance(node, (N.Seq, N.Or, N.And)):
        check_absent_placement(node.left)
        check_absent_placement(node.right)


def check_query(q, schema):
    # ---- ABSENT placement (E0302, E0303): structural, before names
    deadline = check_absent_formula(q.where)
    # ---- FROM
    if schema is not None:
        if q.from_streams is not None:
            for s in q.from_streams:
                if s not in schema.streams:
                    raise OracleError("E0200", "unknown stream `%s`" % s)
            from_streams = list(dict.fromkeys(q.from_streams))
        else:
            if len(schema.streams) != 1:
                raise OracleError("E0208", "FROM omitted while %d streams are declared" % len(schema.streams))
            from_streams = list(schema.streams)
        known = set()
        for s in from_streams:
            known.update(schema.streams[s])
    else:
        from_streams = list(dict.fromkeys(q.from_streams)) if q.from_streams is not None else None
        known = {n.type for n in walk_cel(q.where) if isinstance(n, N.Atom)}
    ctx = Context(q, schema, from_streams, known)

    nodes_ = list(walk_cel(q.where))
    as_names = {n.name for n in nodes_ if isinstance(n, N.As)}

    def check_qualified(var):
        s, t = var
        if from_streams is not None and s not in from_streams:
            raise OracleError("E0202", "`%s`: stream `%s` is not in FROM" % (var_name(var), s))
        if schema is not None and not schema.declares(s, t):
            raise OracleError("E0202", "stream `%s` does not declare `%s`" % (s, t))

    def check_var(var):
        if isinstance(var, tuple):
            check_qualified(var)
        elif var not in known and var not in as_names:
            raise OracleError("E0203", "unknown variable `%s`" % var)

    # ---- names: atoms, AS names, filter variables, SELECT list
    for n in nodes_:
        if isinstance(n, N.Atom):
            if n.stream is not None:
                check_qualified((n.stream, n.type))
            elif schema is not None and n.type not in known:
                raise OracleError("E0201", "unknown event type `%s`" % n.type)
        elif isinstance(n, N.As):
            if n.name in known:
                raise OracleError("E0205", "AS name `%s` is an event type name" % n.name)
        elif isinstance(n, N.Filter):
            for term in filter_terms(n.theta):
                check_var(term.var)
                for x in other_reads(term.pred):
                    check_var(x.var)
    if isinstance(q.select, list):
        for var in q.select:
            check_var(var)
    for _, agg in q.measures:
        check_var(agg.var)
    # NOT reads one event: its filters cannot read other variables. ABSENT's may read the
    # variables of its chain (docs/language.md#s3-3a), but not PREV (one event).
    inside_not = under_not(q.where)
    chains = absent_chains(q.where)
    for n in nodes_:
        if isinstance(n, N.Filter) and id(n) in inside_not:
            for term in filter_terms(n.theta):
                if reads_other_events(term.pred):
                    raise OracleError("E0301", "a filter inside NOT reads another event")
        if isinstance(n, N.Filter) and id(n) in chains:
            for term in filter_terms(n.theta):
                if uses_prev(term.pred):
                    raise OracleError("E0301", "a filter inside ABSENT reads PREV")

    # ---- names: attributes (E0204), windows (E0206), partitions (E0207)
    # `type` and `stream` name the event's type and stream, not attributes (docs/language.md#s1-2).
    for n in nodes_:
        if isinstance(n, N.Filter):
            for term in filter_terms(n.theta):
                for a in pred_attrs(term.pred) + [x.name for x in other_reads(term.pred) if x.name is not None]:
                    if a in RESERVED_FIELDS:
                        raise OracleError("E0204", "`%s` is not an attribute" % a)
    types_cache = {}

    def check_read_attr(x):
        if x.name is None:
            return
        tys = capturable(ctx, x.var, nodes_)
        types_cache[(x.var, "types")] = tys
        if not any(x.name in schema.attrs(s, t) for (s, t) in tys):
            raise OracleError("E0204", "attribute `%s` not declared for `%s`" % (x.name, x.var))

    if schema is not None:
        for n in nodes_:
            if isinstance(n, N.Filter):
                for term in filter_terms(n.theta):
                    tys = capturable(ctx, term.var, nodes_)
                    types_cache[id(term)] = tys
                    for a in pred_attrs(term.pred):
                        if not any(a in schema.attrs(s, t) for (s, t) in tys):
                            raise OracleError("E0204", "attribute `%s` not declared for `%s`" % (a, var_name(term.var)))
                    for x in other_reads(term.pred):
                        check_read_attr(x)
        for _, agg in q.measures:
            check_read_attr(agg)
    w = q.window
    if w is not None:
        if w[0] == "ATTR":
            if w[2] in RESERVED_FIELDS:
                raise OracleError("E0206", "`%s` is not an attribute" % w[2])
            if schema is not None:
                for s in from_streams:
                    for t, attrs in schema.streams[s].items():
                        if attrs.get(w[2]) not in ("int", "primary_time"):
                            raise OracleError("E0206", "window attribute `%s` is not int/primary_time in %s>%s" % (w[2], s, t))
        elif w[0] == "TIME":
            if w[1] == 0 or w[1] > I64_MAX:
                raise OracleError("E0206", "window duration is zero or exceeds i64 nanoseconds")
    for g in q.partition:
        for a in g:
            if a in RESERVED_FIELDS:
                raise OracleError("E0207", "`%s` is not an attribute" % a)
    if schema is not None:
        for g in q.partition:
            for a in g:
                if not any(a in attrs for s in from_streams for attrs in schema.streams[s].values()):
                    raise OracleError("E0207", "partition attribute `%s` declared by no event type" % a)

    # ---- measure names (E0210, docs/language.md#s3-5a): unique, and none an output column's
    seen_measures = set()
    for name, _ in q.measures:
        low = name.lower()
        if low in MEASURE_RESERVED or low in seen_measures:
            raise OracleError("E0210", "measure name `%s` is taken" % name)
        seen_measures.add(low)

    # ---- types (E0300)
    for n in nodes_:
        if isinstance(n, N.Filter):
            for term in filter_terms(n.theta):
                for p in walk_pred(term.pred):
                    if isinstance(p, N.InSet) and p.values is not None:
                        kinds = {isinstance(v, str) for v in p.values}
                        if len(kinds) > 1:
                            raise OracleError("E0300", "IN list mixes strings and numbers")
                    if isinstance(p, N.Bare) and never_boolean(p.expr):
                        raise OracleError("E0300", "bare predicate is a number or a string")
                if schema is not None:
                    attr_cat = attr_categories(schema, types_cache[id(term)], pred_attrs(term.pred))
                    for x in other_reads(term.pred):
                        if x.name is not None:
                            tys = types_cache[(x.var, "types")]
                            attr_cat[(x.var, x.name)] = attr_categories(schema, tys, [x.name])[x.name]
                    type_pred(term.pred, attr_cat)
    if schema is not None:
        for _, agg in q.measures:
            if agg.name is not None:
                cat = attr_categories(schema, types_cache[(agg.var, "types")], [agg.name])
                type_expr(agg, {(agg.var, agg.name): cat[agg.name]})

    # ---- scope (E0301; E0303 for `y.attr`, whose y every valuation must bind)
    for n in nodes_:
        if isinstance(n, N.Filter):
            # An absence's filter reads its own event and the variables of its chain.
            scope = chains.get(id(n))
            for term in filter_terms(n.theta):
                if not is_bindable(ctx, term.var, n.child):
                    raise OracleError("E0301", "`%s` cannot be bound by the filtered formula" % var_name(term.var))
                for x in other_reads(term.pred):
                    if scope is not None and is_bindable(ctx, x.var, n.child):
                        continue  # the absent event itself
                    reader = n.child if scope is None else scope
                    if not is_bindable(ctx, x.var, reader):
                        raise OracleError("E0301", "`%s` cannot be bound by the filtered formula" % x.var)
                    if isinstance(x, N.Ref) and x.var not in definitely_bound(reader):
                        raise OracleError("E0305", "`%s.%s`: some match of the filtered formula binds no `%s`"
                                          % (x.var, x.name, x.var))
    for _, agg in q.measures:
        if not is_bindable(ctx, agg.var, q.where):
            raise OracleError("E0301", "`%s` cannot be bound by the query" % agg.var)

    # ---- trailing absence (E0304, docs/language.md#s3-3b)
    if deadline is not None:
        if deadline > I64_MAX:
            raise OracleError("E0304", "deadline beyond i64 nanoseconds")
        if q.window is None or q.window[0] != "TIME":
            raise OracleError("E0304", "a trailing ABSENT ... FOR needs a WITHIN duration")
        if q.consume != "NONE":
            raise OracleError("E0304", "a trailing ABSENT ... FOR with CONSUME BY")
    return ctx


#: Column names of the outputs that a measure may not take (docs/language.md#s3-5a).
MEASURE_RESERVED = {"match_id", "start", "end", "positions", "variables", "index", "position"}


# ------------------------------------------------------------------ docs/language.md#s4-1 types

def capturable(ctx, var, nodes_):
    """types(x) of docs/language.md#s4-1, as a set of (stream, type) pairs (schema mode)."""
    if isinstance(var, tuple):
        return {var}
    out = set()
    if var in ctx.known_types:
        out |= {(s, var) for s in ctx.from_streams if ctx.schema.declares(s, var)}
    for n in nodes_:
        if isinstance(n, N.As) and n.name == var:
            for a in atoms_outside_not(n.child):
                out |= ctx.types_of_atom(a)
    return out


CATEGORY = {"int": "num", "double": "num", "primary_time": "num", "string": "str", "bool": "bool"}


def attr_categories(schema, tys, attrs):
    cats = {}
    for a in attrs:
        cs = {CATEGORY[schema.attrs(s, t)[a]] for (s, t) in tys if a in schema.attrs(s, t)}
        if len(cs) != 1:
            raise OracleError("E0300", "attribute `%s` has incompatible types across event types" % a)
        cats[a] = cs.pop()
    return cats


def _lit_cat(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "str"
    return "num"


def never_boolean(e):
    """An expression whose type the query alone fixes as not boolean (docs/language.md#s3-4:
    a mistake visible from the query is E0300 in both modes): a non-boolean literal,
    arithmetic, or an aggregate other than first/last."""
    if isinstance(e, N.Lit):
        return not isinstance(e.value, bool)
    if isinstance(e, (N.Unary, N.Bin)):
        return True
    return isinstance(e, N.Agg) and e.func not in ("first", "last")


def type_expr(e, cats):
    if isinstance(e, N.Lit):
        return _lit_cat(e.value)
    if isinstance(e, (N.Attr, N.Prev)):
        return cats[e.name]
    if isinstance(e, N.Ref):
        return cats[(e.var, e.name)]
    if isinstance(e, N.Agg):
        if e.func == "count":
            return "num"
        c = cats[(e.var, e.name)]
        if e.func in ("first", "last"):
            return c
        if c != "num":
            raise OracleError("E0300", "%s over the non-numeric `%s.%s`" % (e.func, e.var, e.name))
        return "num"
    if isinstance(e, N.Unary):
        if type_expr(e.expr, cats) != "num":
            raise OracleError("E0300", "unary %s on a non-numeric operand" % e.op)
        return "num"
    if isinstance(e, N.Bin):
        if type_expr(e.left, cats) != "num" or type_expr(e.right, cats) != "num":
            raise OracleError("E0300", "`%s` on a non-numeric operand" % e.op)
        return "num"
    raise AssertionError(e)


def type_pred(p, cats):
    if isinstance(p, (N.PAnd, N.POr)):
        type_pred(p.left, cats)
        type_pred(p.right, cats)
    elif isinstance(p, N.PNot):
        type_pred(p.child, cats)
    elif isinstance(p, N.Cmp):
        a, b = type_expr(p.left, cats), type_expr(p.right, cats)
        if a != b or (a != "num" and p.op not in ("=", "!=")):
            raise OracleError("E0300", "`%s` between %s and %s" % (p.op, a, b))
    elif isinstance(p, N.Like):
        if type_expr(p.expr, cats) != "str":
            raise OracleError("E0300", "LIKE on a non-string operand")
    elif isinstance(p, N.InSet):
        c = type_expr(p.expr, cats)
        want = "num" if p.values is None else _lit_cat(p.values[0])
        if c != want:
            raise OracleError("E0300", "IN: %s operand with a %s set" % (c, want))
    elif isinstance(p, N.InRange):
        if any(type_expr(e, cats) != "num" for e in (p.expr, p.lo, p.hi)):
            raise OracleError("E0300", "IN RANGE on a non-numeric operand")
    elif isinstance(p, N.IsNull):
        type_expr(p.expr, cats)  # any kind may be NULL; the expression must type-check
    elif isinstance(p, N.Bare):
        if type_expr(p.expr, cats) != "bool":
            raise OracleError("E0300", "bare predicate is not boolean")
    else:
        raise AssertionError(p)
