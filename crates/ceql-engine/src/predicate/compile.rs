//! AST predicate → [`PredIr`] for one event type.

use super::{AttrSlot, ExprIr, PredIr, Regexes, SetIr};
use crate::value::Value;
use ceql_syntax::ast::{Expr, ExprKind, Literal, Pred, ValueSet};
use ceql_syntax::Diagnostic;
use std::sync::Arc;

/// How attribute names become IR for the event type being compiled.
pub trait AttrResolver {
    /// `Some(slot)` when the attribute is read from the event, `None` when it is
    /// NULL for this type (declared schema, attribute not declared).
    fn resolve(&mut self, name: &str) -> Option<AttrSlot>;

    /// The slot of a term that reads another event (`y.attr`, `PREV(attr)`, an
    /// aggregate): only the residual test gives them one (`crate::residual`); for
    /// the automaton's predicates there are none, and they read NULL.
    fn resolve_term(&mut self, _term: &ExprKind) -> Option<AttrSlot> {
        None
    }
}

/// Deepest predicate IR (after `AND`/`OR` chains are flattened) the compiler
/// accepts: predicates are evaluated recursively on the caller's thread for every
/// event, which may be a 256 KiB Python or Spark thread.
pub const MAX_PREDICATE_DEPTH: usize = 64;

/// Compiles a predicate. Fails on an invalid `LIKE` pattern (E0101) and on a
/// predicate nested deeper than [`MAX_PREDICATE_DEPTH`] (E0102).
pub fn compile_pred(p: &Pred, attrs: &mut dyn AttrResolver, regexes: &Regexes) -> Result<PredIr, Diagnostic> {
    let ir = compile_node(p, attrs, regexes)?;
    if ir.depth() > MAX_PREDICATE_DEPTH {
        return Err(Diagnostic::error(
            "E0102",
            format!("predicate too deeply nested: more than {MAX_PREDICATE_DEPTH} levels of operators"),
            pred_span(p),
        )
        .with_label("split it, or use IN {...} for long lists of alternatives"));
    }
    Ok(ir)
}

/// The span of a predicate's text (its first operand to its last).
fn pred_span(p: &Pred) -> ceql_syntax::Span {
    match p {
        Pred::And(a, b) | Pred::Or(a, b) => pred_span(a).to(pred_span(b)),
        Pred::Not(a, kw) => kw.to(pred_span(a)),
        Pred::Cmp { lhs, rhs, .. } => lhs.span.to(rhs.span),
        Pred::Like { expr, pattern_span, .. } => expr.span.to(*pattern_span),
        Pred::InSet { expr, op_span, .. } => expr.span.to(*op_span),
        Pred::InRange { expr, hi, .. } => expr.span.to(hi.span),
        Pred::IsNull { expr, op_span, .. } => expr.span.to(*op_span),
        Pred::Bool(e) => e.span,
    }
}

/// The operands of a chain of `AND` (`and = true`) or `OR` rooted at `p`, left to
/// right, collected without recursing along the chain.
fn chain(p: &Pred, and: bool) -> Vec<&Pred> {
    let mut operands = Vec::new();
    let mut stack = vec![p];
    while let Some(q) = stack.pop() {
        match (q, and) {
            (Pred::And(a, b), true) | (Pred::Or(a, b), false) => {
                stack.push(b);
                stack.push(a);
            }
            _ => operands.push(q),
        }
    }
    operands
}

fn compile_node(p: &Pred, attrs: &mut dyn AttrResolver, regexes: &Regexes) -> Result<PredIr, Diagnostic> {
    Ok(match p {
        Pred::And(..) => {
            PredIr::And(chain(p, true).into_iter().map(|q| compile_node(q, attrs, regexes)).collect::<Result<_, _>>()?)
        }
        Pred::Or(..) => {
            PredIr::Or(chain(p, false).into_iter().map(|q| compile_node(q, attrs, regexes)).collect::<Result<_, _>>()?)
        }
        Pred::Not(a, _) => PredIr::Not(Box::new(compile_node(a, attrs, regexes)?)),
        Pred::Cmp { lhs, op, rhs, .. } => PredIr::Cmp(*op, expr(lhs, attrs), expr(rhs, attrs)),
        Pred::Like { expr: e, pattern, pattern_span, .. } => match regexes.get(pattern) {
            Some(re) => PredIr::Like(expr(e, attrs), re),
            // Patterns not compiled by the analysis (a predicate built on its own).
            None => PredIr::Like(
                expr(e, attrs),
                Regexes::compile([(pattern.as_str(), *pattern_span)])?.get(pattern).expect("just compiled"),
            ),
        },
        Pred::InSet { expr: e, set, negated, .. } => PredIr::InSet(expr(e, attrs), Arc::new(set_ir(set)), *negated),
        Pred::InRange { expr: e, lo, hi, .. } => PredIr::InRange(expr(e, attrs), expr(lo, attrs), expr(hi, attrs)),
        Pred::IsNull { expr: e, negated, .. } => PredIr::IsNull(expr(e, attrs), *negated),
        Pred::Bool(e) => PredIr::Bool(expr(e, attrs)),
    })
}

fn expr(e: &Expr, attrs: &mut dyn AttrResolver) -> ExprIr {
    match &e.kind {
        ExprKind::Int(v) => ExprIr::Const(Value::Int(*v)),
        ExprKind::Float(v) => ExprIr::Const(Value::Float(*v)),
        ExprKind::Str(s) => ExprIr::Const(Value::Str(s.as_str().into())),
        ExprKind::Bool(b) => ExprIr::Const(Value::Bool(*b)),
        ExprKind::Attr(id) => match attrs.resolve(&id.name) {
            Some(slot) => ExprIr::Attr(slot),
            None => ExprIr::Const(Value::Null),
        },
        ExprKind::Ref { .. } | ExprKind::Prev(_) | ExprKind::Agg(_) => match attrs.resolve_term(&e.kind) {
            Some(slot) => ExprIr::Attr(slot),
            None => ExprIr::Const(Value::Null),
        },
        ExprKind::Unary { negate: true, operand } => ExprIr::Neg(Box::new(expr(operand, attrs))),
        ExprKind::Unary { negate: false, operand } => ExprIr::Pos(Box::new(expr(operand, attrs))),
        ExprKind::Binary { op, lhs, rhs, .. } => {
            ExprIr::Arith(*op, Box::new(expr(lhs, attrs)), Box::new(expr(rhs, attrs)))
        }
    }
}

fn literal(l: &Literal) -> Value {
    match l {
        Literal::Int(v, _) => Value::Int(*v),
        Literal::Float(v, _) => Value::Float(*v),
        Literal::Str(s, _) => Value::Str(s.as_str().into()),
    }
}

fn set_ir(set: &ValueSet) -> SetIr {
    match set {
        ValueSet::Range { lo, hi } => SetIr::Range(lo.as_ref().map(literal), hi.as_ref().map(literal)),
        ValueSet::List(items) => {
            if items.iter().all(|l| matches!(l, Literal::Str(..))) {
                SetIr::Strings(
                    items
                        .iter()
                        .filter_map(|l| if let Literal::Str(s, _) = l { Some(s.as_str().into()) } else { None })
                        .collect(),
                )
            } else {
                SetIr::Numbers(items.iter().map(literal).collect())
            }
        }
    }
}
