//! CEL formulas: the flat `unit (postfix | infix unit)*` sequence produced by pest is
//! turned into a tree by the precedence-climbing procedure of docs/language.md#s2-3.
//!
//! | power | operators          | kind    |
//! |-------|--------------------|---------|
//! | 60    | `AS x`, `+`, `:+`  | postfix |
//! | 50    | `;`                | infix   |
//! | 40    | `:`                | infix   |
//! | 35    | `AND`              | infix   |
//! | 30    | `OR`               | infix   |
//! | 20    | `FILTER f`         | postfix |

use super::literal::ident;
use super::pred::filter;
use super::query::{duration_parts, qname};
use super::{Pair, Rule};
use crate::ast::{Atomic, Cel, CelKind, Deadline, Filter, Ident};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

enum Postfix {
    As(Ident),
    Plus,
    ContiguousPlus,
    Filter(Filter),
}

#[derive(Clone, Copy)]
enum Infix {
    Seq,
    Contiguous,
    And,
    Or,
}

enum Item {
    Unit(Cel),
    Postfix(Postfix, Span),
    Infix(Infix),
}

impl Postfix {
    fn power(&self) -> u8 {
        match self {
            Postfix::As(_) | Postfix::Plus | Postfix::ContiguousPlus => 60,
            Postfix::Filter(_) => 20,
        }
    }
}

impl Infix {
    fn power(self) -> u8 {
        match self {
            Infix::Seq => 50,
            Infix::Contiguous => 40,
            Infix::And => 35,
            Infix::Or => 30,
        }
    }
}

/// Builds a CEL tree from a `cel` pair.
pub(crate) fn cel(pair: Pair<'_>) -> Result<Cel, Diagnostic> {
    let mut items = Vec::new();
    for p in pair.into_inner() {
        let span = Span::of(&p);
        match p.as_rule() {
            Rule::cel_unit => items.push(Item::Unit(unit(p)?)),
            Rule::cel_postfix => {
                let op = p.into_inner().next().expect("postfix operator");
                let postfix = match op.as_rule() {
                    Rule::as_postfix => {
                        Postfix::As(ident(op.into_inner().find(|q| q.as_rule() == Rule::ident).expect("AS name")))
                    }
                    Rule::filter_postfix => {
                        Postfix::Filter(filter(op.into_inner().find(|q| q.as_rule() == Rule::filter).expect("filter"))?)
                    }
                    Rule::colon_plus => Postfix::ContiguousPlus,
                    _ => Postfix::Plus,
                };
                items.push(Item::Postfix(postfix, span));
            }
            Rule::cel_infix => {
                let op = match p.into_inner().next().expect("infix operator").as_rule() {
                    Rule::semi => Infix::Seq,
                    Rule::colon => Infix::Contiguous,
                    Rule::kw_and => Infix::And,
                    _ => Infix::Or,
                };
                items.push(Item::Infix(op));
            }
            _ => {}
        }
    }
    let mut items = items.into_iter().peekable();
    let tree = climb(&mut items, 0);
    debug_assert!(items.peek().is_none(), "precedence climbing consumes every item");
    Ok(tree)
}

/// The normative `parse(min)` procedure of docs/language.md#s2-3.
fn climb(items: &mut std::iter::Peekable<std::vec::IntoIter<Item>>, min: u8) -> Cel {
    let mut lhs = match items.next() {
        Some(Item::Unit(c)) => c,
        _ => unreachable!("the grammar puts a unit first and after every infix operator"),
    };
    loop {
        let power = match items.peek() {
            Some(Item::Postfix(op, _)) => op.power(),
            Some(Item::Infix(op)) => op.power(),
            _ => return lhs,
        };
        if power < min {
            return lhs;
        }
        match items.next() {
            Some(Item::Postfix(op, span)) => {
                let span = lhs.span.to(span);
                let inner = Box::new(lhs);
                let kind = match op {
                    Postfix::As(name) => CelKind::As(inner, name),
                    Postfix::Plus => CelKind::Plus(inner),
                    Postfix::ContiguousPlus => CelKind::ContiguousPlus(inner),
                    Postfix::Filter(f) => CelKind::Filter(inner, f),
                };
                lhs = Cel { kind, span };
            }
            Some(Item::Infix(op)) => {
                let rhs = climb(items, power + 1);
                let span = lhs.span.to(rhs.span);
                let (l, r) = (Box::new(lhs), Box::new(rhs));
                let kind = match op {
                    Infix::Seq => CelKind::Seq(l, r),
                    Infix::Contiguous => CelKind::Contiguous(l, r),
                    Infix::And => CelKind::And(l, r),
                    Infix::Or => CelKind::Or(l, r),
                };
                lhs = Cel { kind, span };
            }
            _ => unreachable!("peeked an operator"),
        }
    }
}

fn unit(pair: Pair<'_>) -> Result<Cel, Diagnostic> {
    let inner = pair.into_inner().next().expect("cel_unit has one alternative");
    let span = Span::of(&inner);
    match inner.as_rule() {
        Rule::paren_cel => {
            let c = inner.into_inner().find(|q| q.as_rule() == Rule::cel).expect("parenthesised formula");
            let mut tree = cel(c)?;
            tree.span = span;
            Ok(tree)
        }
        Rule::not_atom => {
            let a = inner.into_inner().find(|q| q.as_rule() == Rule::atomic).expect("NOT operand");
            Ok(Cel { kind: CelKind::Not(atomic(a)?), span })
        }
        Rule::absent_atom => {
            let mut operand = Vec::new();
            let mut deadline = None;
            let mut for_start = None;
            let mut end = span.end;
            for q in inner.into_inner() {
                match q.as_rule() {
                    Rule::absent_operand => {
                        for b in q.into_inner().filter(|b| b.as_rule() == Rule::absent_branch) {
                            operand.push(atomic(b)?);
                        }
                    }
                    // The span ends at `)` or at the deadline, not on the whitespace that
                    // the optional `FOR` consumed while it was tried.
                    Rule::rparen => end = Span::of(&q).end,
                    Rule::kw_for => for_start = Some(Span::of(&q)),
                    Rule::window_duration => {
                        // The last component ends the span (the repetition's own span can
                        // include the whitespace after it).
                        let last = q.clone().into_inner().last().map_or(Span::of(&q), |d| Span::of(&d));
                        let span = for_start.expect("FOR precedes its duration").to(last);
                        deadline = Some(Deadline { parts: duration_parts(q), span });
                    }
                    _ => {}
                }
            }
            let span = Span::new(span.start, deadline.as_ref().map_or(end, |d| d.span.end));
            debug_assert!(!operand.is_empty(), "ABSENT has an operand");
            Ok(Cel { kind: CelKind::Absent(operand, deadline), span })
        }
        _ => {
            let q = qname(inner);
            Ok(Cel { span: q.span, kind: CelKind::Atom(q) })
        }
    }
}

fn atomic(pair: Pair<'_>) -> Result<Atomic, Diagnostic> {
    let span = Span::of(&pair);
    let mut name = None;
    let mut alias = None;
    let mut filters = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::qname => name = Some(qname(p)),
            Rule::ident => alias = Some(ident(p)),
            Rule::filter => filters.push(filter(p)?),
            _ => {}
        }
    }
    Ok(Atomic { name: name.expect("atomic has a type"), alias, filters, span })
}
