//! AST predicate → [`PredIr`] for one event type.

use super::{AttrSlot, ExprIr, PredIr, SetIr};
use crate::value::Value;
use ceql_syntax::ast::{Expr, ExprKind, Literal, Pred, ValueSet};
use ceql_syntax::Diagnostic;
use std::sync::Arc;

/// How attribute names become IR for the event type being compiled.
pub trait AttrResolver {
    /// `Some(slot)` when the attribute is read from the event, `None` when it is
    /// NULL for this type (declared schema, attribute not declared).
    fn resolve(&mut self, name: &str) -> Option<AttrSlot>;
}

/// Compiles a predicate. Fails only on an invalid `LIKE` pattern (E0101).
pub fn compile_pred(p: &Pred, attrs: &mut dyn AttrResolver) -> Result<PredIr, Diagnostic> {
    Ok(match p {
        Pred::And(a, b) => PredIr::And(Box::new(compile_pred(a, attrs)?), Box::new(compile_pred(b, attrs)?)),
        Pred::Or(a, b) => PredIr::Or(Box::new(compile_pred(a, attrs)?), Box::new(compile_pred(b, attrs)?)),
        Pred::Not(a, _) => PredIr::Not(Box::new(compile_pred(a, attrs)?)),
        Pred::Cmp { lhs, op, rhs, .. } => PredIr::Cmp(*op, expr(lhs, attrs), expr(rhs, attrs)),
        Pred::Like { expr: e, pattern, pattern_span, .. } => {
            let re = regex::Regex::new(pattern).map_err(|err| {
                let detail = match err {
                    regex::Error::Syntax(s) => s.lines().last().unwrap_or("").trim().to_string(),
                    other => other.to_string(),
                };
                Diagnostic::error("E0101", format!("invalid regular expression: {detail}"), *pattern_span)
            })?;
            PredIr::Like(expr(e, attrs), Arc::new(re))
        }
        Pred::InSet { expr: e, set, negated, .. } => PredIr::InSet(expr(e, attrs), Arc::new(set_ir(set)), *negated),
        Pred::InRange { expr: e, lo, hi, .. } => PredIr::InRange(expr(e, attrs), expr(lo, attrs), expr(hi, attrs)),
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
