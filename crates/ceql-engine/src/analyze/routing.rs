//! Equalities between variables routed by key (docs/language.md#s3-4b).
//!
//! A top-level conjunct `x[a = y.b]` of the query's filters can be evaluated by
//! routing every event by the value of its type's key attribute, as `PARTITION BY`
//! does, instead of testing it on each valuation during enumeration (the residual
//! test of `correlation.rs`): constant update time instead of a cost quadratic in
//! the window. [`plan_routing`] decides whether that is exact for a query, picks the
//! key attribute of every event type, and takes the routed conjuncts out of the
//! filters before the residual planning runs, so that what is routed is neither
//! tested per valuation nor refused with E0500.

use super::{Plan, RCel, RFilter, Resolved, VarId, WindowPlan};
use crate::bitset::BitSet;
use ceql_syntax::ast::{self, Cel, CelKind, CmpOp, ConsumePolicy, ExprKind, Filter, Pred, Strategy};
use ceql_syntax::Span;
use std::sync::Arc;

/// How a routed query keys its events (docs/language.md#s3-4b).
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    /// `key_attr[t]`: the key attribute of events of type `t`, `None` for a type no
    /// atom of the query captures (its events have no routing key).
    pub key_attr: Vec<Option<String>>,
    /// The conjuncts the routing replaces, as written (`b[user = a.user]`), for
    /// `explain`.
    pub equalities: Vec<String>,
}

/// One candidate `x[a = y.b]`.
struct Equality {
    x: VarId,
    a: String,
    y: VarId,
    b: String,
    /// The span of its `=`: identifies the comparison in the resolved predicate.
    op_span: Span,
    text: String,
}

/// Decides whether `query` is routed; if so, removes the routed conjuncts from the
/// top-level filters of `pattern` (a filter left empty becomes TRUE for the
/// automaton, as a residual conjunct does) and returns the routing. `None` leaves
/// `pattern` as it is: every equality is then a residual test.
pub(super) fn plan_routing(query: &ast::Query, pattern: &mut RCel, r: &Resolved) -> Option<Routing> {
    // Constructs that look at unmarked events or reset one substream (rule 4). NEXT,
    // LAST and MAX are routed: with a window they choose among the routed valuations
    // inside it (`Plan::selects_in_window`, docs/language.md#s3-6a).
    if query.strategy == Strategy::Strict
        || query.consume == ConsumePolicy::Partition
        || !routable_shape(&query.pattern)
    {
        return None;
    }
    let mut candidates = Vec::new();
    for_each_top_filter(&query.pattern, &mut |f| collect_conjuncts(f, r, &mut candidates));
    // Greedy, in query order: keep an equality unless it gives a variable or a type a
    // second key attribute.
    let mut var_attr: Vec<Option<String>> = vec![None; r.vars.len()];
    let mut type_attr: Vec<Option<String>> = vec![None; r.schema.types.len()];
    let mut kept: Vec<Equality> = Vec::new();
    for e in candidates {
        let (mut va, mut ta) = (var_attr.clone(), type_attr.clone());
        if assign(&mut va, &mut ta, e.x, &e.a, r) && assign(&mut va, &mut ta, e.y, &e.b, r) {
            (var_attr, type_attr) = (va, ta);
            kept.push(e);
        }
    }
    if kept.is_empty() {
        return None;
    }
    let mut routed = BitSet::new();
    for e in &kept {
        routed.insert(e.x);
        routed.insert(e.y);
    }
    // Rule 2: every valuation binds every routed variable.
    let definite = definitely_bound(pattern);
    if (0..r.vars.len()).any(|v| routed.contains(v) && !definite.contains(v)) {
        return None;
    }
    // Rule 1: the kept equalities connect their variables.
    if !connected(&kept, &routed, r.vars.len()) {
        return None;
    }
    // Rule 3: every atom is captured by a routed variable.
    let mut atoms = Vec::new();
    collect_atoms(pattern, &BitSet::new(), &mut atoms);
    if atoms.iter().any(|vars| !vars.intersects(&routed)) {
        return None;
    }
    let spans: Vec<Span> = kept.iter().map(|e| e.op_span).collect();
    remove_top_equalities(pattern, &spans);
    Some(Routing { key_attr: type_attr, equalities: kept.into_iter().map(|e| e.text).collect() })
}

impl Plan {
    /// Whether a routed query chooses among its valuations inside the window, on the
    /// residual path with nothing left to test (docs/language.md#s3-6a, #s3-4b): `NEXT`,
    /// `LAST` or `MAX` with a `WITHIN`. Its equalities read other events, so the window
    /// comes before the strategy, as for the same query unrouted; the strategy automata
    /// would apply the strategy first, and a preferred valuation that has left the
    /// window would hide the one inside it (V40). Without a window both orders agree
    /// and the automata apply the strategy in constant time.
    pub fn selects_in_window(&self) -> bool {
        self.routing.is_some()
            && self.window != WindowPlan::Unbounded
            && matches!(self.strategy, Strategy::Next | Strategy::Last | Strategy::Max)
    }
}

/// Gives `v` (and every type it can capture) the key attribute `attr`; false if one
/// of them already has another.
fn assign(
    var_attr: &mut [Option<String>],
    type_attr: &mut [Option<String>],
    v: VarId,
    attr: &str,
    r: &Resolved,
) -> bool {
    let fits = |slot: &mut Option<String>| match slot {
        Some(a) => a == attr,
        None => {
            *slot = Some(attr.to_string());
            true
        }
    };
    fits(&mut var_attr[v]) && r.capturable[v].iter().all(|&t| fits(&mut type_attr[t as usize]))
}

/// Whether the formula has none of `:`, `:+`, `NOT(...)`, `ABSENT(...)`.
fn routable_shape(c: &Cel) -> bool {
    match &c.kind {
        CelKind::Atom(_) => true,
        CelKind::Not(_) | CelKind::Absent(..) | CelKind::Contiguous(..) | CelKind::ContiguousPlus(_) => false,
        CelKind::As(x, _) | CelKind::Filter(x, _) | CelKind::Plus(x) => routable_shape(x),
        // A conjunction's sides skip freely, as `;` does: only marked events matter.
        CelKind::Seq(a, b) | CelKind::And(a, b) | CelKind::Or(a, b) => routable_shape(a) && routable_shape(b),
    }
}

/// Calls `f` on each filter applied to the whole formula: `ψ FILTER θ1 FILTER θ2`,
/// looking through `AS`.
fn for_each_top_filter<'a>(c: &'a Cel, f: &mut impl FnMut(&'a Filter)) {
    match &c.kind {
        CelKind::Filter(x, theta) => {
            f(theta);
            for_each_top_filter(x, f);
        }
        CelKind::As(x, _) => for_each_top_filter(x, f),
        _ => {}
    }
}

/// The routing equalities among the top-level conjuncts of `f` (AND only, not under
/// OR), in query order.
fn collect_conjuncts(f: &Filter, r: &Resolved, out: &mut Vec<Equality>) {
    match f {
        Filter::And(a, b) => {
            collect_conjuncts(a, r, out);
            collect_conjuncts(b, r, out);
        }
        Filter::Or(..) => {}
        Filter::Var { var, pred, span } => {
            let x = r.filter_var(*span);
            for_each_top_pred(pred, &mut |p| {
                if let Some(e) = equality(x, &var.display(), p, r) {
                    out.push(e);
                }
            });
        }
    }
}

/// Calls `f` on the conjuncts of `p` (split at every `AND` not under `OR` or `NOT`).
fn for_each_top_pred<'a>(p: &'a Pred, f: &mut impl FnMut(&'a Pred)) {
    match p {
        Pred::And(a, b) => {
            for_each_top_pred(a, f);
            for_each_top_pred(b, f);
        }
        other => f(other),
    }
}

/// `p` as `x[a = y.b]` (either side), with `y ≠ x`.
fn equality(x: VarId, x_name: &str, p: &Pred, r: &Resolved) -> Option<Equality> {
    let Pred::Cmp { lhs, op: CmpOp::Eq, rhs, op_span } = p else { return None };
    let (a, (y, b)) = match (&lhs.kind, &rhs.kind) {
        (ExprKind::Attr(a), ExprKind::Ref { var, attr }) | (ExprKind::Ref { var, attr }, ExprKind::Attr(a)) => {
            (a, (var, attr))
        }
        _ => return None,
    };
    let yv = r.ref_var(y.span);
    (yv != x).then(|| Equality {
        x,
        a: a.name.clone(),
        y: yv,
        b: b.name.clone(),
        op_span: *op_span,
        text: format!("{x_name}[{} = {}.{}]", a.name, y.name, b.name),
    })
}

/// Whether the equalities connect the variables of `routed`.
fn connected(kept: &[Equality], routed: &BitSet, n: usize) -> bool {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for e in kept {
        let (a, b) = (root(&mut parent, e.x), root(&mut parent, e.y));
        parent[a] = b;
    }
    let mut roots = (0..n).filter(|&v| routed.contains(v)).map(|v| root(&mut parent, v));
    let first = roots.next();
    roots.all(|r| Some(r) == first)
}

/// The variables every valuation of the formula binds to at least one event (the
/// formula has no `NOT` or `ABSENT` here, so every valuation marks an event).
fn definitely_bound(c: &RCel) -> BitSet {
    match c {
        RCel::Atom(edges, _) => {
            let mut out = edges.first().map(|e| e.vars.clone()).unwrap_or_default();
            for e in edges.iter().skip(1) {
                out.intersect_with(&e.vars);
            }
            out
        }
        RCel::As(x, v) => {
            let mut out = definitely_bound(x);
            out.insert(*v);
            out
        }
        RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => definitely_bound(x),
        RCel::Seq(a, b) | RCel::Contiguous(a, b) | RCel::SeqAbsent(a, _, b) | RCel::And(a, b, _) => {
            let mut out = definitely_bound(a);
            out.union_with(&definitely_bound(b));
            out
        }
        RCel::Or(a, b, _) => {
            let mut out = definitely_bound(a);
            out.intersect_with(&definitely_bound(b));
            out
        }
        RCel::Not(..) => BitSet::new(),
    }
}

/// The variables that capture each atom of the formula: its edges' and the `AS`
/// names above it.
fn collect_atoms(c: &RCel, aliases: &BitSet, out: &mut Vec<BitSet>) {
    match c {
        RCel::Atom(edges, _) => {
            for e in edges {
                let mut vars = aliases.clone();
                vars.union_with(&e.vars);
                out.push(vars);
            }
        }
        RCel::Not(..) => {}
        RCel::As(x, v) => {
            let mut inner = aliases.clone();
            inner.insert(*v);
            collect_atoms(x, &inner, out);
        }
        RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => collect_atoms(x, aliases, out),
        RCel::Seq(a, b)
        | RCel::Contiguous(a, b)
        | RCel::Or(a, b, _)
        | RCel::SeqAbsent(a, _, b)
        | RCel::And(a, b, _) => {
            collect_atoms(a, aliases, out);
            collect_atoms(b, aliases, out);
        }
    }
}

/// Removes the comparisons at `spans` from the top-level filters of `c`.
fn remove_top_equalities(c: &mut RCel, spans: &[Span]) {
    match c {
        RCel::Filter(x, f) => {
            let taken = std::mem::replace(f, RFilter::Residual);
            *f = without(taken, spans);
            remove_top_equalities(x, spans);
        }
        RCel::As(x, _) => remove_top_equalities(x, spans),
        _ => {}
    }
}

/// `f` without the comparisons at `spans` (in its top-level conjuncts).
fn without(f: RFilter, spans: &[Span]) -> RFilter {
    match f {
        RFilter::And(a, b) => RFilter::And(Box::new(without(*a, spans)), Box::new(without(*b, spans))),
        RFilter::Var { var, pred } => match pred_without(&pred, spans) {
            None => RFilter::Residual,
            Some(p) if p == *pred => RFilter::Var { var, pred },
            Some(p) => RFilter::Var { var, pred: Arc::new(p) },
        },
        other => other,
    }
}

/// `p` without the comparisons at `spans` among its top-level conjuncts; `None` when
/// nothing is left (TRUE).
fn pred_without(p: &Pred, spans: &[Span]) -> Option<Pred> {
    match p {
        Pred::And(a, b) => match (pred_without(a, spans), pred_without(b, spans)) {
            (Some(a), Some(b)) => Some(Pred::And(Box::new(a), Box::new(b))),
            (one, None) | (None, one) => one,
        },
        Pred::Cmp { op_span, .. } if spans.contains(op_span) => None,
        other => Some(other.clone()),
    }
}
