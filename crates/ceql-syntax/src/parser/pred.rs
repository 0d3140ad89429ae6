//! Filters (`x[P] AND y[Q]`), predicates and arithmetic expressions. All binary
//! operators are left-associative; the grammar already encodes their precedence.

use super::literal::{ident, number, string, Number};
use super::query::qname;
use super::{Pair, Rule};
use crate::ast::*;
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// Builds a [`Filter`] from a `filter` pair (`f_and { OR f_and }`).
pub(crate) fn filter(pair: Pair<'_>) -> Result<Filter, Diagnostic> {
    fold_left(pair, Rule::filter_and, filter_and, |a, b| Filter::Or(Box::new(a), Box::new(b)))
}

fn filter_and(pair: Pair<'_>) -> Result<Filter, Diagnostic> {
    fold_left(pair, Rule::filter_term, filter_term, |a, b| Filter::And(Box::new(a), Box::new(b)))
}

fn filter_term(pair: Pair<'_>) -> Result<Filter, Diagnostic> {
    let inner = pair.into_inner().next().expect("filter term");
    let span = Span::of(&inner);
    match inner.as_rule() {
        Rule::paren_filter => filter(inner.into_inner().find(|q| q.as_rule() == Rule::filter).expect("filter")),
        _ => {
            let mut var = None;
            let mut p = None;
            for q in inner.into_inner() {
                match q.as_rule() {
                    Rule::qname => var = Some(qname(q)),
                    Rule::pred => p = Some(pred(q)?),
                    _ => {}
                }
            }
            Ok(Filter::Var { var: var.expect("filter variable"), pred: Box::new(p.expect("filter predicate")), span })
        }
    }
}

/// Builds a [`Pred`] from a `pred` pair.
pub(crate) fn pred(pair: Pair<'_>) -> Result<Pred, Diagnostic> {
    fold_left(pair, Rule::pred_and, pred_and, |a, b| Pred::Or(Box::new(a), Box::new(b)))
}

fn pred_and(pair: Pair<'_>) -> Result<Pred, Diagnostic> {
    fold_left(pair, Rule::pred_not, pred_not, |a, b| Pred::And(Box::new(a), Box::new(b)))
}

fn pred_not(pair: Pair<'_>) -> Result<Pred, Diagnostic> {
    // `NOT NOT ... atom`: the keywords are a repetition; fold them from the inside out.
    let mut nots = Vec::new();
    let mut operand = None;
    for q in pair.into_inner() {
        match q.as_rule() {
            Rule::kw_not => nots.push(Span::of(&q)),
            Rule::pred_atom => operand = Some(pred_atom(q)?),
            _ => {}
        }
    }
    let mut p = operand.expect("NOT operand");
    for kw in nots.into_iter().rev() {
        p = Pred::Not(Box::new(p), kw);
    }
    Ok(p)
}

fn pred_atom(pair: Pair<'_>) -> Result<Pred, Diagnostic> {
    let inner = pair.into_inner().next().expect("pred_atom alternative");
    if inner.as_rule() == Rule::paren_pred {
        return pred(inner.into_inner().find(|q| q.as_rule() == Rule::pred).expect("parenthesised predicate"));
    }
    let mut parts = inner.into_inner();
    let operand = expr(parts.next().expect("tested expression"))?;
    let Some(tail) = parts.next() else { return Ok(Pred::Bool(operand)) };
    let rule = tail.as_rule();
    let mut exprs = Vec::new();
    let mut op = None;
    let mut op_span = Span::default();
    let mut negated = false;
    let mut pattern = None;
    let mut set = None;
    for q in tail.into_inner() {
        match q.as_rule() {
            Rule::expr => exprs.push(expr(q)?),
            Rule::cmp_op => {
                op_span = Span::of(&q);
                op = Some(cmp_op(q));
            }
            Rule::kw_like | Rule::kw_in => op_span = Span::of(&q),
            Rule::kw_is => op_span = Span::of(&q),
            Rule::kw_null => op_span = op_span.to(Span::of(&q)),
            Rule::kw_not => negated = true,
            Rule::string => pattern = Some(string(q)),
            Rule::value_set => set = Some(value_set(q)?),
            _ => {}
        }
    }
    let mut exprs = exprs.into_iter();
    let mut next_expr = || exprs.next().expect("operand");
    Ok(match rule {
        Rule::cmp_tail => Pred::Cmp { lhs: operand, op: op.expect("comparison operator"), rhs: next_expr(), op_span },
        Rule::like_tail => {
            let (pattern, pattern_span) = pattern.expect("LIKE pattern");
            Pred::Like { expr: operand, pattern, pattern_span, op_span }
        }
        Rule::in_set_tail => Pred::InSet { expr: operand, set: set.expect("IN set"), negated, op_span },
        Rule::is_null_tail => Pred::IsNull { expr: operand, negated, op_span },
        _ => {
            let lo = next_expr();
            let hi = next_expr();
            Pred::InRange { expr: operand, lo, hi, op_span }
        }
    })
}

fn cmp_op(pair: Pair<'_>) -> CmpOp {
    match pair.into_inner().next().expect("operator").as_rule() {
        Rule::op_le => CmpOp::Le,
        Rule::op_ne => CmpOp::Ne,
        Rule::op_lt => CmpOp::Lt,
        Rule::op_ge => CmpOp::Ge,
        Rule::op_gt => CmpOp::Gt,
        _ => CmpOp::Eq,
    }
}

fn value_set(pair: Pair<'_>) -> Result<ValueSet, Diagnostic> {
    let inner = pair.into_inner().next().expect("value set form");
    let span = Span::of(&inner);
    match inner.as_rule() {
        Rule::set_range => {
            let mut lo = None;
            let mut hi = None;
            let mut seen_dots = false;
            for q in inner.into_inner() {
                match q.as_rule() {
                    Rule::dotdot => seen_dots = true,
                    Rule::signed if seen_dots => hi = Some(signed(q)?),
                    Rule::signed => lo = Some(signed(q)?),
                    _ => {}
                }
            }
            if lo.is_none() && hi.is_none() {
                return Err(Diagnostic::error(
                    "E0100",
                    "a range needs at least one bound: `{a..b}`, `{a..}` or `{..b}`",
                    span,
                ));
            }
            Ok(ValueSet::Range { lo, hi })
        }
        _ => {
            let mut items = Vec::new();
            for q in inner.into_inner().filter(|q| q.as_rule() == Rule::literal) {
                let l = q.into_inner().next().expect("literal");
                items.push(match l.as_rule() {
                    Rule::string => {
                        let (s, span) = string(l);
                        Literal::Str(s, span)
                    }
                    _ => signed(l)?,
                });
            }
            Ok(ValueSet::List(items))
        }
    }
}

fn signed(pair: Pair<'_>) -> Result<Literal, Diagnostic> {
    let span = Span::of(&pair);
    let mut negative = false;
    let mut value = None;
    for q in pair.into_inner() {
        match q.as_rule() {
            Rule::minus => negative = true,
            Rule::number => value = Some(q),
            _ => {}
        }
    }
    let num = value.expect("signed number");
    // `-9223372036854775808` is representable although its magnitude is not.
    if negative {
        if let Ok(v) = format!("-{}", num.as_str()).parse::<i64>() {
            return Ok(Literal::Int(v, span));
        }
    }
    Ok(match number(num)?.0 {
        Number::Int(v) => Literal::Int(if negative { -v } else { v }, span),
        Number::Float(v) => Literal::Float(if negative { -v } else { v }, span),
    })
}

/// Builds an [`Expr`] from an `expr` pair.
pub(crate) fn expr(pair: Pair<'_>) -> Result<Expr, Diagnostic> {
    binary_chain(pair, Rule::e_mul, Rule::add_op, e_mul)
}

fn e_mul(pair: Pair<'_>) -> Result<Expr, Diagnostic> {
    binary_chain(pair, Rule::e_un, Rule::mul_op, e_un)
}

fn e_un(pair: Pair<'_>) -> Result<Expr, Diagnostic> {
    // `- + - prim`: the signs are a repetition; fold them from the inside out. Each
    // unary node spans from its sign to the end of the operand.
    let mut signs = Vec::new();
    let mut operand = None;
    for q in pair.into_inner() {
        match q.as_rule() {
            Rule::unary_op => {
                let span = Span::of(&q);
                signs.push((span, q.into_inner().next().expect("sign").as_rule() == Rule::minus));
            }
            Rule::e_prim => match signs.last() {
                // `-9223372036854775808`: the one literal beyond 64 bits that a
                // minus brings back into them (docs/language.md#s2-1).
                Some(&(sign, true)) if is_min_magnitude(&q) => {
                    signs.pop();
                    operand = Some(Expr { kind: ExprKind::Int(i64::MIN), span: sign.to(Span::of(&q)) });
                }
                _ => operand = Some(e_prim(q)?),
            },
            _ => {}
        }
    }
    let mut e = operand.expect("e_un has a primary");
    for (sign, negate) in signs.into_iter().rev() {
        let span = sign.to(e.span);
        e = Expr { kind: ExprKind::Unary { negate, operand: Box::new(e) }, span };
    }
    Ok(e)
}

/// Whether a primary is the integer literal 2^63, which only a minus makes a
/// 64-bit integer.
fn is_min_magnitude(prim: &Pair<'_>) -> bool {
    let inner = prim.clone().into_inner().next().expect("primary");
    inner.as_rule() == Rule::number && inner.as_str().trim_start_matches('0') == "9223372036854775808"
}

fn e_prim(pair: Pair<'_>) -> Result<Expr, Diagnostic> {
    let inner = pair.into_inner().next().expect("primary");
    let span = Span::of(&inner);
    let kind = match inner.as_rule() {
        Rule::number => match number(inner)?.0 {
            Number::Int(v) => ExprKind::Int(v),
            Number::Float(v) => ExprKind::Float(v),
        },
        Rule::string => ExprKind::Str(string(inner).0),
        Rule::kw_true => ExprKind::Bool(true),
        Rule::kw_false => ExprKind::Bool(false),
        Rule::ident => ExprKind::Attr(ident(inner)),
        Rule::aggregate => ExprKind::Agg(aggregate(inner)),
        Rule::prev_call => {
            ExprKind::Prev(ident(inner.into_inner().find(|q| q.as_rule() == Rule::ident).expect("PREV(attr)")))
        }
        Rule::var_attr => {
            let mut ids = inner.into_inner().filter(|q| q.as_rule() == Rule::ident).map(ident);
            let var = ids.next().expect("var.attr");
            ExprKind::Ref { var, attr: ids.next().expect("var.attr") }
        }
        _ => {
            let e = inner.into_inner().find(|q| q.as_rule() == Rule::expr).expect("parenthesised expression");
            let mut e = expr(e)?;
            e.span = span;
            return Ok(e);
        }
    };
    Ok(Expr { kind, span })
}

/// Builds an [`Aggregate`] from an `aggregate` pair: `count(y)` or `f(y.attr)`.
pub(crate) fn aggregate(pair: Pair<'_>) -> Aggregate {
    let span = Span::of(&pair);
    let call = pair.into_inner().next().expect("aggregate call");
    let mut func = AggFunc::Count;
    let mut ids = Vec::new();
    for q in call.into_inner() {
        match q.as_rule() {
            Rule::agg_func => func = AggFunc::from_name(q.as_str()).expect("grammar names an aggregate"),
            Rule::ident => ids.push(ident(q)),
            _ => {}
        }
    }
    let mut ids = ids.into_iter();
    let var = ids.next().expect("aggregate of a variable");
    Aggregate { func, var, attr: ids.next(), span }
}

/// Left fold of `operand (op operand)*`.
fn binary_chain(
    pair: Pair<'_>,
    operand_rule: Rule,
    op_rule: Rule,
    operand: fn(Pair<'_>) -> Result<Expr, Diagnostic>,
) -> Result<Expr, Diagnostic> {
    let mut acc: Option<Expr> = None;
    let mut pending = None;
    for q in pair.into_inner() {
        let rule = q.as_rule();
        if rule == op_rule {
            let op_span = Span::of(&q);
            pending = Some((
                op_span,
                match q.into_inner().next().expect("operator").as_rule() {
                    Rule::plus => ArithOp::Add,
                    Rule::minus => ArithOp::Sub,
                    Rule::star => ArithOp::Mul,
                    Rule::slash => ArithOp::Div,
                    _ => ArithOp::Rem,
                },
            ));
        } else if rule == operand_rule {
            let rhs = operand(q)?;
            acc = Some(match (acc, pending.take()) {
                (Some(lhs), Some((op_span, op))) => {
                    let span = lhs.span.to(rhs.span);
                    Expr { kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs), op_span }, span }
                }
                _ => rhs,
            });
        }
    }
    Ok(acc.expect("at least one operand"))
}

/// Left fold of `item (sep item)*` for filters and predicates.
fn fold_left<T>(
    pair: Pair<'_>,
    item_rule: Rule,
    item: fn(Pair<'_>) -> Result<T, Diagnostic>,
    join: fn(T, T) -> T,
) -> Result<T, Diagnostic> {
    let mut acc: Option<T> = None;
    for q in pair.into_inner().filter(|q| q.as_rule() == item_rule) {
        let next = item(q)?;
        acc = Some(match acc {
            Some(a) => join(a, next),
            None => next,
        });
    }
    Ok(acc.expect("at least one item"))
}
