//! Size limits that keep every pass over a query safe on small thread stacks.
//!
//! The parser, the static checks, the automaton construction and predicate
//! evaluation walk the query's tree recursively. A hostile or generated query can
//! nest thousands of levels deep (`((((A))))`, `A ; A ; … ; A`, `x + x + … + x`),
//! which overflowed the stack of a Python thread (256 KiB on Spark executors) at a
//! few hundred levels. Two limits bound every recursion, and both are reported as
//! `E0102` with a caret before any tree is built:
//!
//! * [`MAX_NESTING`] levels of `(`, `[` and `{`, checked on the raw text before pest
//!   runs (pest recurses once per bracket level, and its backtracking over deep
//!   predicate parentheses grows polynomially with the depth);
//! * [`MAX_DEPTH`] levels of the syntax tree, checked iteratively on the tree pest
//!   built. Chains of binary operators count: `A ; B ; C` is a tree of depth 3.
//!
//! Everything recursive downstream (the engine's passes, dropping the tree, and
//! evaluating predicates) is bounded by these two numbers.

use crate::ast::{Cel, CelKind, Expr, ExprKind, Filter, Pred, QueryText};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// Deepest nesting of brackets, parentheses and braces a query may have.
pub const MAX_NESTING: usize = 256;

/// Deepest syntax tree a query may have, counting every operator of a chain.
pub const MAX_DEPTH: usize = 1000;

/// Rejects text whose brackets nest deeper than [`MAX_NESTING`], skipping string
/// literals, quoted identifiers and comments. Unbalanced brackets are left to the
/// parser, which reports them with the expected tokens.
pub(crate) fn check_nesting(source: &str) -> Result<(), Diagnostic> {
    let bytes = source.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"' | b'`') => i = skip_quoted(bytes, i, quote),
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = source[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n + 2);
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(too_deep(Span::new(i, i + 1), "brackets nest", MAX_NESTING));
                }
                i += 1;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// The index after a quoted literal starting at `start` (a doubled quote is an
/// escaped one); the end of the text if it is not closed.
fn skip_quoted(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

/// A node of the syntax tree, for the iterative depth walk.
enum Node<'a> {
    Cel(&'a Cel),
    Filter(&'a Filter),
    Pred(&'a Pred),
    Expr(&'a Expr),
}

impl Node<'_> {
    fn span(&self) -> Span {
        match self {
            Node::Cel(c) => c.span,
            Node::Filter(Filter::Var { span, .. }) => *span,
            Node::Filter(_) => Span::default(),
            Node::Pred(p) => pred_span(p),
            Node::Expr(e) => e.span,
        }
    }
}

fn pred_span(p: &Pred) -> Span {
    match p {
        Pred::And(a, b) | Pred::Or(a, b) => pred_span(a).to(pred_span(b)),
        Pred::Not(_, kw) => *kw,
        Pred::Cmp { op_span, .. }
        | Pred::Like { op_span, .. }
        | Pred::InSet { op_span, .. }
        | Pred::InRange { op_span, .. }
        | Pred::IsNull { op_span, .. } => *op_span,
        Pred::Bool(e) => e.span,
    }
}

/// Rejects a query whose syntax tree is deeper than [`MAX_DEPTH`], without
/// recursion: the caret is on the node at which the limit is crossed.
pub(crate) fn check_depth(text: &QueryText) -> Result<(), Diagnostic> {
    let mut stack: Vec<(Node<'_>, usize)> = vec![(Node::Cel(&text.query.pattern), 1)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            let span = match node.span() {
                s if s == Span::default() => text.query.pattern.span,
                s => s,
            };
            return Err(too_deep(span, "the query's syntax tree is nested", MAX_DEPTH));
        }
        let d = depth + 1;
        match node {
            Node::Cel(c) => match &c.kind {
                CelKind::Atom(_) => {}
                CelKind::Not(_) | CelKind::Absent(..) => {
                    stack.extend(c.kind.atomics().iter().flat_map(|a| &a.filters).map(|f| (Node::Filter(f), d)))
                }
                CelKind::As(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => stack.push((Node::Cel(x), d)),
                CelKind::Filter(x, f) => {
                    stack.push((Node::Cel(x), d));
                    stack.push((Node::Filter(f), d));
                }
                CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
                    stack.push((Node::Cel(a), d));
                    stack.push((Node::Cel(b), d));
                }
            },
            Node::Filter(f) => match f {
                Filter::Var { pred, .. } => stack.push((Node::Pred(pred), d)),
                Filter::And(a, b) | Filter::Or(a, b) => {
                    stack.push((Node::Filter(a), d));
                    stack.push((Node::Filter(b), d));
                }
            },
            Node::Pred(p) => match p {
                Pred::And(a, b) | Pred::Or(a, b) => {
                    stack.push((Node::Pred(a), d));
                    stack.push((Node::Pred(b), d));
                }
                Pred::Not(a, _) => stack.push((Node::Pred(a), d)),
                Pred::Cmp { lhs, rhs, .. } => {
                    stack.push((Node::Expr(lhs), d));
                    stack.push((Node::Expr(rhs), d));
                }
                Pred::Like { expr, .. } | Pred::InSet { expr, .. } | Pred::IsNull { expr, .. } | Pred::Bool(expr) => {
                    stack.push((Node::Expr(expr), d))
                }
                Pred::InRange { expr, lo, hi, .. } => {
                    stack.extend([expr, lo, hi].into_iter().map(|e| (Node::Expr(e), d)));
                }
            },
            Node::Expr(e) => match &e.kind {
                ExprKind::Unary { operand, .. } => stack.push((Node::Expr(operand), d)),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push((Node::Expr(lhs), d));
                    stack.push((Node::Expr(rhs), d));
                }
                _ => {}
            },
        }
    }
    Ok(())
}

fn too_deep(span: Span, what: &str, limit: usize) -> Diagnostic {
    Diagnostic::error("E0102", format!("query too deeply nested: {what} more than {limit} levels deep"), span)
        .with_label(format!("limit of {limit} levels exceeded here"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_inside_literals_and_comments_do_not_count() {
        let deep = "(".repeat(MAX_NESTING + 1);
        for text in [format!("'{deep}'"), format!("\"{deep}\""), format!("`{deep}`"), format!("-- {deep}\n")] {
            assert!(check_nesting(&text).is_ok(), "{text}");
        }
        assert!(check_nesting(&format!("/* {deep} */ (")).is_ok());
        assert!(check_nesting(&format!("'it''s' {deep}")).is_err());
    }

    #[test]
    fn the_caret_is_on_the_first_bracket_too_deep() {
        let text = format!("SELECT * FROM S WHERE {}A", "(".repeat(MAX_NESTING + 5));
        let err = check_nesting(&text).unwrap_err();
        assert_eq!(err.code, "E0102");
        let first = "SELECT * FROM S WHERE ".len();
        assert_eq!(err.span, Span::new(first + MAX_NESTING, first + MAX_NESTING + 1));
    }
}
