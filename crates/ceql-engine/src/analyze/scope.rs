//! Scope pass (E0301): `ψ FILTER θ` is well-formed iff every variable of `θ` can be
//! bound by `ψ` (docs/language.md#s4-2). Filters inside `NOT(...)` are checked against
//! the atom inside `NOT`.

use super::{Resolved, VarKind};
use crate::bitset::BitSet;
use ceql_syntax::ast::{Cel, CelKind, Filter, QName};
use ceql_syntax::Diagnostic;

/// Checks every filter of the formula.
pub(super) fn check_well_formed(c: &Cel, r: &Resolved) -> Result<(), Diagnostic> {
    bindable(c, r).map(|_| ())
}

/// `bindable(ψ)`, checking the filters met on the way.
fn bindable(c: &Cel, r: &Resolved) -> Result<BitSet, Diagnostic> {
    Ok(match &c.kind {
        CelKind::Atom(q) => atom(q, r),
        CelKind::Not(a) | CelKind::Absent(a, _) => {
            let inner = atom(&a.name, r);
            for f in &a.filters {
                check_filter(f, &inner, r)?;
            }
            BitSet::new()
        }
        CelKind::As(x, name) => {
            let mut b = bindable(x, r)?;
            if !b.is_empty() {
                if let Some(v) = r.vars.find(&VarKind::Alias(name.name.clone())) {
                    b.insert(v);
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
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) => {
            let mut s = bindable(a, r)?;
            s.union_with(&bindable(b, r)?);
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

fn check_filter(f: &Filter, bound: &BitSet, r: &Resolved) -> Result<(), Diagnostic> {
    match f {
        Filter::Var { var, span, .. } => {
            let v = r.filter_var(*span);
            if !bound.contains(v) {
                return Err(Diagnostic::error(
                    "E0301",
                    format!("filter on `{}`, which the filtered formula cannot bind", var.display()),
                    var.span,
                )
                .with_label("a filter applies to the sub-formula it follows; move it after the formula that binds this variable"));
            }
            Ok(())
        }
        Filter::And(a, b) | Filter::Or(a, b) => {
            check_filter(a, bound, r)?;
            check_filter(b, bound, r)
        }
    }
}
