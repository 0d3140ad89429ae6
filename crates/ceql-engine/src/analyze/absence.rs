//! Placement of `ABSENT(β)` (E0302, docs/language.md#s3-3a): absence is a condition on the
//! gap between two neighbours of a `;` chain, so it must have a pattern on both sides of it
//! in the same chain. A chain is a maximal tree of `;` nodes (`;` is associative, so
//! `(A ; ABSENT(B)) ; C` is the chain `A ; ABSENT(B) ; C`); `:`, `OR`, `+`, `AS` and
//! `FILTER` bind looser or apply to a whole operand, so they end a chain.
//!
//! The one exception is the trailing absence with a deadline, `ψ ; ABSENT(β) FOR d`
//! (docs/language.md#s3-3b): the last element of the whole formula's chain. `FOR` anywhere
//! else is E0303; its requirements on the other clauses are E0304.

use super::WindowPlan;
use ceql_syntax::ast::{self, Cel, CelKind, ConsumePolicy, Deadline};
use ceql_syntax::Diagnostic;

/// Checks the placement of every `ABSENT` and `FOR` of the formula; returns the deadline
/// of the trailing absence, if the formula ends with one.
pub(super) fn check_formula(c: &Cel) -> Result<Option<&Deadline>, Diagnostic> {
    let chain = seq_chain(c);
    if let [only @ Cel { kind: CelKind::Absent(..), .. }] = chain[..] {
        return Err(misplaced(only, "ABSENT(...) is the whole formula"));
    }
    if let Some(last) = chain.last().filter(|_| chain.len() > 1) {
        if let CelKind::Absent(_, Some(d)) = &last.kind {
            let positive = &chain[..chain.len() - 1];
            if let Some(before) = positive.last().filter(|e| matches!(e.kind, CelKind::Absent(..))) {
                return Err(misplaced(before, "ABSENT(...) stands right before the trailing ABSENT(...) FOR"));
            }
            check_chain(positive)?;
            return Ok(Some(d));
        }
    }
    check_placement(c)?;
    Ok(None)
}

/// The deadline in nanoseconds, after checking what a trailing absence needs (E0304): a
/// `WITHIN` duration (time stamps, and a bound on memory) and no `CONSUME BY`.
pub(super) fn check_trailing(query: &ast::Query, window: &WindowPlan, d: &Deadline) -> Result<i64, Diagnostic> {
    let nanos = super::clauses::duration_nanos(&d.parts)
        .ok_or_else(|| Diagnostic::error("E0304", "the deadline exceeds the i64 nanosecond range", d.span))?;
    if !matches!(window, WindowPlan::Duration(_)) {
        let span = query.within.as_ref().map_or(d.span, |w| w.span());
        return Err(Diagnostic::error("E0304", "a trailing ABSENT(...) FOR needs a WITHIN duration", span)
            .with_label("the deadline is measured on time stamps, and the window bounds the matches kept waiting"));
    }
    if query.consume != ConsumePolicy::None {
        return Err(Diagnostic::error(
            "E0304",
            "a trailing ABSENT(...) FOR cannot be combined with CONSUME BY",
            d.span,
        )
        .with_label("its matches are reported when their deadline passes, after the events consumption would reset"));
    }
    Ok(nanos)
}

/// The elements of the `;` chain rooted at `c`, left to right (`c` itself if it is not a `;`).
pub(crate) fn seq_chain(c: &Cel) -> Vec<&Cel> {
    let mut out = Vec::new();
    let mut stack = vec![c];
    while let Some(n) = stack.pop() {
        match &n.kind {
            CelKind::Seq(a, b) => {
                stack.push(b);
                stack.push(a);
            }
            _ => out.push(n),
        }
    }
    out
}

/// Checks that every `ABSENT(...)` stands strictly inside a `;` chain, without `FOR`.
fn check_placement(c: &Cel) -> Result<(), Diagnostic> {
    match &c.kind {
        CelKind::Absent(_, Some(d)) => Err(misplaced_for(d)),
        CelKind::Absent(..) => Err(misplaced(c, "ABSENT(...) is not an operand of a `;` sequence")),
        CelKind::Atom(_) | CelKind::Not(_) => Ok(()),
        CelKind::Seq(..) => check_chain(&seq_chain(c)),
        CelKind::As(x, _) | CelKind::Filter(x, _) => match trailing_deadline(x) {
            // `ψ ; ABSENT(T) FOR d FILTER θ`: FILTER and AS bind looser than `;`.
            Some(d) => Err(wrapped_for(d, matches!(c.kind, CelKind::Filter(..)))),
            None => check_placement(x),
        },
        CelKind::Plus(x) | CelKind::ContiguousPlus(x) => check_placement(x),
        CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
            check_placement(a)?;
            check_placement(b)
        }
    }
}

/// Checks the elements of one `;` chain: absences strictly inside, without `FOR`.
fn check_chain(chain: &[&Cel]) -> Result<(), Diagnostic> {
    let is_absent = |e: &Cel| matches!(e.kind, CelKind::Absent(..));
    for e in chain {
        if let CelKind::Absent(_, Some(d)) = &e.kind {
            return Err(misplaced_for(d));
        }
    }
    let (first, last) = (chain[0], chain[chain.len() - 1]);
    if is_absent(first) {
        return Err(misplaced(first, "ABSENT(...) starts a `;` sequence"));
    }
    if is_absent(last) {
        return Err(misplaced(last, "ABSENT(...) ends a `;` sequence").with_label(
            "an absence at the end of the whole formula needs a deadline: `ψ ; ABSENT(T) FOR 30 minutes`",
        ));
    }
    chain.iter().filter(|e| !is_absent(e)).try_for_each(|e| check_placement(e))
}

/// The deadline of a `;` chain that ends with `ABSENT(...) FOR d`.
fn trailing_deadline(c: &Cel) -> Option<&Deadline> {
    match &c.kind {
        CelKind::Seq(..) => match &seq_chain(c).last()?.kind {
            CelKind::Absent(_, Some(d)) => Some(d),
            _ => None,
        },
        _ => None,
    }
}

/// `ψ ; ABSENT(T) FOR d` under a FILTER or AS: the absence no longer ends the formula.
fn wrapped_for(d: &Deadline, filter: bool) -> Diagnostic {
    let (what, fix) = if filter {
        ("a FILTER", "put the filter on the pattern before the absence: `(ψ FILTER θ) ; ABSENT(T) FOR d`")
    } else {
        ("an AS", "name the pattern before the absence: `(ψ) AS x ; ABSENT(T) FOR d`")
    };
    Diagnostic::error(
        "E0303",
        format!(
            "{what} follows `ABSENT(...) FOR d`, which must end the whole formula (FILTER and AS bind looser than `;`)"
        ),
        d.span,
    )
    .with_label(fix)
}

fn misplaced_for(d: &Deadline) -> Diagnostic {
    Diagnostic::error("E0303", "FOR is only allowed on an ABSENT(...) that ends the whole formula", d.span)
        .with_label("write `ψ ; ABSENT(T) FOR d` at the top level: the deadline is counted from the end of ψ's match")
}

fn misplaced(c: &Cel, what: &str) -> Diagnostic {
    Diagnostic::error("E0302", format!("{what}: absence needs a pattern before and after it"), c.span).with_label(
        "write `ψ1 ; ABSENT(T) ; ψ2`; `:`, OR and FILTER bind looser than `;`, so parenthesise the sequence, \
         and put a filter of the absent type inside: ABSENT(T FILTER T[...])",
    )
}
