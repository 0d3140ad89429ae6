//! Unary predicates over one event (docs/language.md#s3-4): an IR compiled from the AST per
//! event type, and its three-valued evaluation.

pub(crate) mod columnar;
mod compile;
mod eval;
mod regexes;

pub use compile::{compile_pred, AttrResolver};
pub(crate) use eval::describe as describe_value;
pub use eval::eval_pred;
pub use regexes::Regexes;

use crate::value::Value;
use ceql_syntax::ast::{ArithOp, CmpOp};
use std::sync::Arc;

pub use crate::input::{AttrSlot, Row};

/// A compiled predicate.
#[derive(Clone, Debug)]
pub enum PredIr {
    /// Kleene AND of two or more operands (a chain `p AND q AND r` is one node, so
    /// that evaluating it does not recurse once per operand).
    And(Vec<PredIr>),
    /// Kleene OR of two or more operands (one node per chain, as for `And`).
    Or(Vec<PredIr>),
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
    /// `IS NULL` (`false`) / `IS NOT NULL` (`true`): two-valued.
    IsNull(ExprIr, bool),
    /// A boolean expression.
    Bool(ExprIr),
}

impl PredIr {
    /// Levels of nested operators (a leaf test counts its operand expressions).
    pub fn depth(&self) -> usize {
        1 + match self {
            PredIr::And(items) | PredIr::Or(items) => items.iter().map(PredIr::depth).max().unwrap_or(0),
            PredIr::Not(p) => p.depth(),
            PredIr::Cmp(_, a, b) => a.depth().max(b.depth()),
            PredIr::Like(e, _) | PredIr::InSet(e, _, _) | PredIr::IsNull(e, _) | PredIr::Bool(e) => e.depth(),
            PredIr::InRange(e, lo, hi) => e.depth().max(lo.depth()).max(hi.depth()),
        }
    }
}

impl ExprIr {
    /// Levels of nested operators.
    pub fn depth(&self) -> usize {
        1 + match self {
            ExprIr::Const(_) | ExprIr::Attr(_) => 0,
            ExprIr::Neg(x) | ExprIr::Pos(x) => x.depth(),
            ExprIr::Arith(_, a, b) => a.depth().max(b.depth()),
        }
    }
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
