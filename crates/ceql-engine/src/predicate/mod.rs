//! Unary predicates over one event (reference §3.4): an IR compiled from the AST per
//! event type, and its three-valued evaluation.

pub(crate) mod columnar;
mod compile;
mod eval;

pub use compile::{compile_pred, AttrResolver};
pub(crate) use eval::describe as describe_value;
pub use eval::{eval_pred, Mismatch, Row};

use crate::value::Value;
use ceql_syntax::ast::{ArithOp, CmpOp};
use std::sync::Arc;

/// Index of an attribute in the runtime's attribute layout (the names the query reads).
pub type AttrSlot = u32;

/// A compiled predicate.
#[derive(Clone, Debug)]
pub enum PredIr {
    /// Kleene AND.
    And(Box<PredIr>, Box<PredIr>),
    /// Kleene OR.
    Or(Box<PredIr>, Box<PredIr>),
    /// NOT (UNKNOWN stays UNKNOWN).
    Not(Box<PredIr>),
    /// Comparison.
    Cmp(CmpOp, ExprIr, ExprIr),
    /// Unanchored regular-expression search.
    Like(ExprIr, Arc<regex::Regex>),
    /// `IN {...}` / `NOT IN {...}`.
    InSet(ExprIr, Arc<SetIr>, bool),
    /// `IN RANGE(lo, hi)`.
    InRange(ExprIr, ExprIr, ExprIr),
    /// A boolean expression.
    Bool(ExprIr),
}

/// A compiled value expression.
#[derive(Clone, Debug)]
pub enum ExprIr {
    /// A literal (or NULL for an attribute the event type does not declare).
    Const(Value),
    /// An attribute of the event.
    Attr(AttrSlot),
    /// Unary minus.
    Neg(Box<ExprIr>),
    /// Unary plus: a numeric check only.
    Pos(Box<ExprIr>),
    /// Arithmetic.
    Arith(ArithOp, Box<ExprIr>, Box<ExprIr>),
}

/// The set of an `IN` test.
#[derive(Clone, Debug)]
pub enum SetIr {
    /// Numbers (integers kept exact).
    Numbers(Vec<Value>),
    /// Strings.
    Strings(Vec<Box<str>>),
    /// Closed range, either end optional.
    Range(Option<Value>, Option<Value>),
}
