//! Scope pass (E0301): `ψ FILTER θ` is well-formed iff every variable of `θ` can be
//! bound by `ψ` (docs/language.md#s4-2). Filters inside `NOT(...)` are checked against
//! the atom inside `NOT`; those inside `ABSENT(...)` too, but the variables they read
//! through `y.attr` and aggregates against their `;` chain (docs/language.md#s3-3a). A `y.attr` needs more: every valuation of `ψ` must bind `y`
//! (E0305, docs/design/correlation.md, section 2), or its for-all would be vacuous.

use super::{Resolved, VarKind};
use crate::bitset::BitSet;
use ceql_syntax::ast::{Cel, CelKind, ExprKind, Filter, QName};
use ceql_syntax::Diagnostic;

/// Checks every filter of the formula, and that every measure's variable can be
/// bound by the query.
pub(super) fn check_well_formed(query: &ceql_syntax::ast::Query, r: &Resolved) -> Result<(), Diagnostic> {
    let b = bindable(&query.pattern, r)?;
    for m in &query.measures {
        if !b.bindable.contains(r.ref_var(m.agg.var.span)) {
            return Err(Diagnostic::error(
                "E0301",
                format!("measure over `{}`, which the query cannot bind", m.agg.var.name),
                m.agg.var.span,
            ));
        }
    }
    Ok(())
}

/// What a formula binds: the variables some valuation binds (`bindable`) and those
/// every valuation binds to at least one event (`definite`).
struct Bound {
    bindable: BitSet,
    definite: BitSet,
    /// Every valuation captures at least one event.
    nonempty: bool,
}

/// `bindable(ψ)`, checking the filters met on the way.
fn bindable(c: &Cel, r: &Resolved) -> Result<Bound, Diagnostic> {
    Ok(match &c.kind {
        CelKind::Atom(q) => {
            let b = atom(q, r);
            Bound { definite: b.clone(), bindable: b, nonempty: true }
        }
        CelKind::Not(_) | CelKind::Absent(..) => {
            for a in c.kind.atomics() {
                let inner = atom(&a.name, r);
                let bound = Bound { definite: inner.clone(), bindable: inner, nonempty: true };
                for f in &a.filters {
                    check_filter(f, &bound, r)?;
                }
            }
            Bound { bindable: BitSet::new(), definite: BitSet::new(), nonempty: false }
        }
        CelKind::As(x, name) => {
            let mut b = bindable(x, r)?;
            if let Some(v) = r.vars.find(&VarKind::Alias(name.name.clone())) {
                if !b.bindable.is_empty() {
                    b.bindable.insert(v);
                }
                if b.nonempty {
                    b.definite.insert(v);
                }
            }
            b
        }
        CelKind::Filter(x, f) => {
            let b = bindable(x, r)?;
            check_filter(f, &b, r)?;
            b
        }
        CelKind::Plus(x) | CelKind::ContiguousPlus(x) => bindable(x, r)?,
        CelKind::Seq(..) => {
            // The chain's patterns, then its absences: their filters may read the
            // chain's variables besides their own event (docs/language.md#s3-3a).
            let chain = super::absence::seq_chain(c);
            let mut s = Bound { bindable: BitSet::new(), definite: BitSet::new(), nonempty: false };
            for e in chain.iter().filter(|e| !matches!(e.kind, CelKind::Absent(..))) {
                let t = bindable(e, r)?;
                s.bindable.union_with(&t.bindable);
                s.definite.union_with(&t.definite);
                s.nonempty |= t.nonempty;
            }
            for e in &chain {
                let CelKind::Absent(alternatives, _) = &e.kind else { continue };
                // Each alternative reads its own event (and its own name) besides the chain's.
                for a in alternatives {
                    let mut own = atom(&a.name, r);
                    if let Some(v) = a.alias.as_ref().and_then(|x| r.vars.find(&VarKind::Alias(x.name.clone()))) {
                        own.insert(v);
                    }
                    let own = Bound { definite: own.clone(), bindable: own, nonempty: true };
                    let mut reads =
                        Bound { bindable: s.bindable.clone(), definite: s.definite.clone(), nonempty: true };
                    reads.bindable.union_with(&own.bindable);
                    reads.definite.union_with(&own.definite);
                    for f in &a.filters {
                        check_filter_reading(f, &own, &reads, r)?;
                    }
                }
            }
            s
        }
        // Every valuation of a conjunction holds one valuation of each side.
        CelKind::Contiguous(a, b) | CelKind::And(a, b) => {
            let (mut s, t) = (bindable(a, r)?, bindable(b, r)?);
            s.bindable.union_with(&t.bindable);
            s.definite.union_with(&t.definite);
            s.nonempty |= t.nonempty;
            s
        }
        CelKind::Or(a, b) => {
            let (mut s, t) = (bindable(a, r)?, bindable(b, r)?);
            s.bindable.union_with(&t.bindable);
            s.definite.intersect_with(&t.definite);
            s.nonempty &= t.nonempty;
            s
        }
    })
}

fn atom(q: &QName, r: &Resolved) -> BitSet {
    let mut b = BitSet::new();
    let ids: Vec<u32> = match &q.stream {
        None => r.schema.types_named(&q.name.name).to_vec(),
        Some(s) => {
            let sid = r.schema.stream_id(&s.name).unwrap_or(0);
            r.schema.type_id(sid, &q.name.name).into_iter().collect()
        }
    };
    if let Some(v) = r.vars.find(&VarKind::Type(q.name.name.clone())) {
        b.insert(v);
    }
    for t in ids {
        let td = &r.schema.types[t as usize];
        if let Some(v) = r.vars.find(&VarKind::Qualified(td.stream, td.name.clone())) {
            b.insert(v);
        }
    }
    b
}

fn check_filter(f: &Filter, bound: &Bound, r: &Resolved) -> Result<(), Diagnostic> {
    check_filter_reading(f, bound, bound, r)
}

/// [`check_filter`] where the filtered variables must be bound by `bound` and the
/// variables read through `y.attr` and aggregates by `reads` (a wider scope for the
/// filters of an absence, which read their chain).
fn check_filter_reading(f: &Filter, bound: &Bound, reads_bound: &Bound, r: &Resolved) -> Result<(), Diagnostic> {
    match f {
        Filter::Var { var, span, pred } => {
            let v = r.filter_var(*span);
            if !bound.bindable.contains(v) {
                return Err(Diagnostic::error(
                    "E0301",
                    format!("filter on `{}`, which the filtered formula cannot bind", var.display()),
                    var.span,
                )
                .with_label("a filter applies to the sub-formula it follows; move it after the formula that binds this variable"));
            }
            // The variables it reads through `y.attr` and aggregates.
            let mut reads = Vec::new();
            pred.for_each_expr(&mut |e| match &e.kind {
                ExprKind::Ref { var, attr } => reads.push((var, Some(attr))),
                ExprKind::Agg(a) => reads.push((&a.var, None)),
                _ => {}
            });
            for (y, attr) in reads {
                let v = r.ref_var(y.span);
                if !reads_bound.bindable.contains(v) {
                    return Err(Diagnostic::error(
                        "E0301",
                        format!("`{}` is read by a filter of a formula that cannot bind it", y.name),
                        y.span,
                    )
                    .with_label("a filter reads the variables of the sub-formula it follows"));
                }
                if let Some(attr) = attr {
                    if !reads_bound.definite.contains(v) {
                        return Err(Diagnostic::error(
                            "E0305",
                            format!("`{}.{}`: some match of the filtered formula binds no `{}`", y.name, attr.name, y.name),
                            y.span,
                        )
                        .with_label("the comparison would hold vacuously there; bind it in every branch, or use an aggregate such as count"));
                    }
                }
            }
            Ok(())
        }
        Filter::And(a, b) | Filter::Or(a, b) => {
            check_filter_reading(a, bound, reads_bound, r)?;
            check_filter_reading(b, bound, reads_bound, r)
        }
    }
}
