//! Type pass (E0300, W0403): every filter predicate is type-checked once per event
//! type its variable can capture (docs/language.md#s3-4, #s4-1). Without declarations,
//! attribute types are unknown until run time and only literal-driven mistakes are
//! caught here; the rest is checked on each event.

use super::Resolved;
use crate::predicate::Regexes;
use crate::schema::{Schema, TypeId};
use crate::value::{AttrType, TypeKind};
use ceql_syntax::ast::{self, AggFunc, Cel, CelKind, CmpOp, Expr, ExprKind, Filter, Literal, Pred, ValueSet};
use ceql_syntax::{Diagnostic, Span};

/// Calls `f(span, pred)` for every filter term `x[P]` of the formula, including
/// those inside `NOT(...)`.
pub(crate) fn for_each_filter_term<'a>(c: &'a Cel, f: &mut dyn FnMut(Span, &'a Pred)) {
    fn filter<'a>(fl: &'a Filter, f: &mut dyn FnMut(Span, &'a Pred)) {
        match fl {
            Filter::Var { pred, span, .. } => f(*span, pred),
            Filter::And(a, b) | Filter::Or(a, b) => {
                filter(a, f);
                filter(b, f);
            }
        }
    }
    match &c.kind {
        CelKind::Atom(_) => {}
        CelKind::Not(_) | CelKind::Absent(..) => {
            c.kind.atomics().iter().flat_map(|a| &a.filters).for_each(|fl| filter(fl, f))
        }
        CelKind::Filter(x, fl) => {
            for_each_filter_term(x, f);
            filter(fl, f);
        }
        CelKind::As(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => for_each_filter_term(x, f),
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
            for_each_filter_term(a, f);
            for_each_filter_term(b, f);
        }
    }
}

/// Calls `f` on every attribute identifier of the filtered variable's events in a
/// predicate (bare names and `PREV(attr)`; not `y.attr` nor aggregates).
pub(crate) fn for_each_attr(p: &Pred, f: &mut dyn FnMut(&ast::Ident)) {
    fn expr(e: &Expr, f: &mut dyn FnMut(&ast::Ident)) {
        match &e.kind {
            ExprKind::Attr(id) | ExprKind::Prev(id) => f(id),
            ExprKind::Unary { operand, .. } => expr(operand, f),
            ExprKind::Binary { lhs, rhs, .. } => {
                expr(lhs, f);
                expr(rhs, f);
            }
            _ => {}
        }
    }
    match p {
        Pred::And(a, b) | Pred::Or(a, b) => {
            for_each_attr(a, f);
            for_each_attr(b, f);
        }
        Pred::Not(a, _) => for_each_attr(a, f),
        Pred::Cmp { lhs, rhs, .. } => {
            expr(lhs, f);
            expr(rhs, f);
        }
        Pred::Like { expr: e, .. } | Pred::InSet { expr: e, .. } | Pred::IsNull { expr: e, .. } | Pred::Bool(e) => {
            expr(e, f)
        }
        Pred::InRange { expr: e, lo, hi, .. } => {
            expr(e, f);
            expr(lo, f);
            expr(hi, f);
        }
    }
}

/// E0101: every `LIKE` pattern must be a valid regular expression, and all of
/// them together must fit the query's regular-expression budget. Checked before
/// names and types, like the other literal errors; the compiled expressions are
/// kept for the predicates.
///
/// W0405: a pattern with `%` reads like SQL's `LIKE`, where `%` is a wildcard; here it is
/// a literal character of a regular expression (SQL's `'IB%'` is `'^IB'`).
pub(super) fn check_like_patterns(pattern: &Cel, warnings: &mut Vec<Diagnostic>) -> Result<Regexes, Diagnostic> {
    fn walk<'a>(p: &'a Pred, out: &mut Vec<(&'a str, Span)>) {
        match p {
            Pred::And(a, b) | Pred::Or(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            Pred::Not(a, _) => walk(a, out),
            Pred::Like { pattern, pattern_span, .. } => out.push((pattern.as_str(), *pattern_span)),
            _ => {}
        }
    }
    let mut patterns = Vec::new();
    for_each_filter_term(pattern, &mut |_, pred| walk(pred, &mut patterns));
    for (text, span) in &patterns {
        if text.contains('%') {
            warnings.push(
                Diagnostic::warning(
                    "W0405",
                    "`%` is a literal character here: LIKE is an unanchored regular expression, not SQL's LIKE",
                    *span,
                )
                .with_label("SQL's 'IB%' is '^IB', and '%' alone is '.*' (or nothing)"),
            );
        }
    }
    Regexes::compile(patterns)
}

/// Type-checks every filter of the query.
pub(super) fn check_filters(
    query: &ast::Query,
    r: &Resolved,
    warnings: &mut Vec<Diagnostic>,
) -> Result<(), Diagnostic> {
    let mut result = Ok(());
    for_each_filter_term(&query.pattern, &mut |span, pred| {
        if result.is_err() {
            return;
        }
        let types = &r.capturable[r.filter_var(span)];
        result = check_term(pred, types, r, warnings);
    });
    result
}

fn check_term(pred: &Pred, types: &[TypeId], r: &Resolved, warnings: &mut Vec<Diagnostic>) -> Result<(), Diagnostic> {
    let schema: &Schema = &r.schema;
    // The kinds of `y.attr` and of aggregates' arguments (E0300 across y's types).
    let mut other_kinds: Vec<(Span, TypeKind)> = Vec::new();
    let mut err = None;
    pred.for_each_expr(&mut |e| {
        let (var, attr) = match &e.kind {
            ExprKind::Ref { var, attr } => (var, Some(attr)),
            ExprKind::Agg(a) => (&a.var, a.attr.as_ref()),
            _ => return,
        };
        match super::correlation::ref_kind(r, r.ref_var(var.span), attr) {
            Ok(k) => other_kinds.push((e.span, k)),
            Err(d) => {
                err.get_or_insert(d);
            }
        }
    });
    if let Some(d) = err {
        return Err(d);
    }
    let other = |e: &Expr| other_kinds.iter().find(|(s, _)| *s == e.span).map_or(TypeKind::Unknown, |(_, k)| *k);
    if schema.declared {
        // docs/language.md#s4-1: an attribute's declared types over types(x) must agree in kind.
        let mut err = None;
        for_each_attr(pred, &mut |id| {
            let declared: Vec<AttrType> =
                types.iter().filter_map(|&t| schema.types[t as usize].attr_type(&id.name)).collect();
            let kinds: Vec<TypeKind> = declared.iter().map(|t| t.kind()).collect();
            let numeric = kinds.iter().all(|k| matches!(k, TypeKind::Int | TypeKind::Float));
            let same = kinds.windows(2).all(|w| w[0] == w[1]);
            if err.is_none() && !numeric && !same {
                err = Some(Diagnostic::error(
                    "E0300",
                    format!(
                        "attribute `{}` has incompatible types across the event types this variable captures",
                        id.name
                    ),
                    id.span,
                ));
            }
            if declared.len() < types.len() && !declared.is_empty() && !warnings.iter().any(|w| w.span == id.span) {
                warnings.push(
                    Diagnostic::warning(
                        "W0403",
                        format!("attribute `{}` is not declared by every event type this variable captures", id.name),
                        id.span,
                    )
                    .with_label("it is NULL for the others, so the filter rejects them"),
                );
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        for &t in types {
            let td = &schema.types[t as usize];
            pred_type(pred, &|name| td.attr_type(name).map_or(TypeKind::Null, AttrType::kind), &other)?;
        }
        Ok(())
    } else {
        pred_type(pred, &|_| TypeKind::Unknown, &other)
    }
}

fn type_error(message: String, span: Span) -> Diagnostic {
    Diagnostic::error("E0300", message, span)
}

/// Checks a predicate; `attr` gives the static kind of an attribute of the filtered
/// event, `other` the kind of a `y.attr` or of an aggregate's argument.
pub(crate) fn pred_type(
    p: &Pred,
    attr: &dyn Fn(&str) -> TypeKind,
    other: &dyn Fn(&Expr) -> TypeKind,
) -> Result<(), Diagnostic> {
    match p {
        Pred::And(a, b) | Pred::Or(a, b) => {
            pred_type(a, attr, other)?;
            pred_type(b, attr, other)
        }
        Pred::Not(a, _) => pred_type(a, attr, other),
        Pred::Cmp { lhs, op, rhs, op_span } => {
            let (l, r) = (expr_type(lhs, attr, other)?, expr_type(rhs, attr, other)?);
            let ordering = !matches!(op, CmpOp::Eq | CmpOp::Ne);
            if ordering && (!l.may_be_numeric() || !r.may_be_numeric()) {
                let bad = if l.may_be_numeric() { r } else { l };
                return Err(type_error(format!("`{}` needs numbers, found {}", op.symbol(), bad.name()), *op_span));
            }
            if !compatible(l, r) {
                return Err(type_error(format!("cannot compare {} with {}", l.name(), r.name()), *op_span));
            }
            Ok(())
        }
        Pred::Like { expr, op_span, .. } => {
            let t = expr_type(expr, attr, other)?;
            if matches!(t, TypeKind::Int | TypeKind::Float | TypeKind::Bool) {
                return Err(type_error(format!("LIKE needs a string, found {}", t.name()), *op_span));
            }
            Ok(())
        }
        Pred::InSet { expr, set, op_span, .. } => {
            let t = expr_type(expr, attr, other)?;
            let lits: Vec<&Literal> = match set {
                ValueSet::List(items) => items.iter().collect(),
                ValueSet::Range { lo, hi } => lo.iter().chain(hi.iter()).collect(),
            };
            let strings = lits.iter().filter(|l| matches!(l, Literal::Str(..))).count();
            if strings != 0 && strings != lits.len() {
                return Err(type_error("IN list mixes strings and numbers".into(), *op_span));
            }
            if matches!(set, ValueSet::Range { .. }) && strings != 0 {
                return Err(type_error("a range {a..b} needs numbers".into(), *op_span));
            }
            let set_kind = if strings != 0 { TypeKind::Str } else { TypeKind::Float };
            if !compatible(t, set_kind) || t == TypeKind::Bool {
                return Err(type_error(
                    format!("IN: {} value tested against a set of {}", t.name(), set_kind_name(set_kind)),
                    *op_span,
                ));
            }
            Ok(())
        }
        Pred::InRange { expr, lo, hi, op_span } => {
            for e in [expr, lo, hi] {
                let t = expr_type(e, attr, other)?;
                if !t.may_be_numeric() {
                    return Err(type_error(format!("IN RANGE needs numbers, found {}", t.name()), *op_span));
                }
            }
            Ok(())
        }
        // Any value may be NULL or not; the expression itself must type-check.
        Pred::IsNull { expr, .. } => expr_type(expr, attr, other).map(|_| ()),
        Pred::Bool(e) => {
            let t = expr_type(e, attr, other)?;
            if !matches!(t, TypeKind::Bool | TypeKind::Unknown | TypeKind::Null) {
                return Err(type_error(format!("a predicate must be boolean, found {}", t.name()), e.span));
            }
            // Arithmetic and the numeric aggregates give numbers whatever their
            // operands' types, which declarations alone would tell: visible from
            // the query, so `E0300` in both modes (docs/language.md#s3-4).
            if never_boolean(e) {
                return Err(type_error("a predicate must be boolean, found a number".to_string(), e.span));
            }
            Ok(())
        }
    }
}

/// Whether `e` is arithmetic or a numeric-only aggregate: never a boolean.
fn never_boolean(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Unary { .. } | ExprKind::Binary { .. } => true,
        ExprKind::Agg(a) => {
            matches!(a.func, AggFunc::Count | AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max)
        }
        _ => false,
    }
}

fn set_kind_name(k: TypeKind) -> &'static str {
    if k == TypeKind::Str {
        "strings"
    } else {
        "numbers"
    }
}

/// Equality-comparable: both numeric, or the same kind, or one side unknown/NULL.
fn compatible(a: TypeKind, b: TypeKind) -> bool {
    use TypeKind::*;
    match (a, b) {
        (Unknown, _) | (_, Unknown) | (Null, _) | (_, Null) => true,
        (Int | Float, Int | Float) => true,
        (x, y) => x == y,
    }
}

fn expr_type(
    e: &Expr,
    attr: &dyn Fn(&str) -> TypeKind,
    other: &dyn Fn(&Expr) -> TypeKind,
) -> Result<TypeKind, Diagnostic> {
    Ok(match &e.kind {
        ExprKind::Int(_) => TypeKind::Int,
        ExprKind::Float(_) => TypeKind::Float,
        ExprKind::Str(_) => TypeKind::Str,
        ExprKind::Bool(_) => TypeKind::Bool,
        ExprKind::Attr(id) | ExprKind::Prev(id) => attr(&id.name),
        ExprKind::Ref { .. } => other(e),
        ExprKind::Agg(a) => super::correlation::aggregate_kind(a, other(e))?,
        ExprKind::Unary { operand, .. } => {
            let t = expr_type(operand, attr, other)?;
            if !t.may_be_numeric() {
                return Err(type_error(format!("unary sign needs a number, found {}", t.name()), e.span));
            }
            t
        }
        ExprKind::Binary { op, lhs, rhs, op_span } => {
            let (l, r) = (expr_type(lhs, attr, other)?, expr_type(rhs, attr, other)?);
            if !l.may_be_numeric() || !r.may_be_numeric() {
                let bad = if l.may_be_numeric() { r } else { l };
                return Err(type_error(format!("`{}` needs numbers, found {}", op.symbol(), bad.name()), *op_span));
            }
            match (l, r) {
                (TypeKind::Int, TypeKind::Int) => TypeKind::Int,
                (TypeKind::Null, _) | (_, TypeKind::Null) => TypeKind::Null,
                (TypeKind::Unknown, _) | (_, TypeKind::Unknown) => TypeKind::Unknown,
                _ => TypeKind::Float,
            }
        }
    })
}
