//! Placement of `ABSENT(β)` (E0302, docs/language.md#s3-3a): absence is a condition on the
//! gap between two neighbours of a `;` chain, so it must have a pattern on both sides of it
//! in the same chain. A chain is a maximal tree of `;` nodes (`;` is associative, so
//! `(A ; ABSENT(B)) ; C` is the chain `A ; ABSENT(B) ; C`); `:`, `OR`, `+`, `AS` and
//! `FILTER` bind looser or apply to a whole operand, so they end a chain.

use ceql_syntax::ast::{Cel, CelKind};
use ceql_syntax::Diagnostic;

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

/// Checks that every `ABSENT(...)` stands strictly inside a `;` chain.
pub(super) fn check_placement(c: &Cel) -> Result<(), Diagnostic> {
    match &c.kind {
        CelKind::Absent(_) => Err(misplaced(c, "ABSENT(...) is not an operand of a `;` sequence")),
        CelKind::Atom(_) | CelKind::Not(_) => Ok(()),
        CelKind::Seq(..) => {
            let chain = seq_chain(c);
            let is_absent = |e: &Cel| matches!(e.kind, CelKind::Absent(_));
            let (first, last) = (chain[0], chain[chain.len() - 1]);
            if is_absent(first) {
                return Err(misplaced(first, "ABSENT(...) starts a `;` sequence"));
            }
            if is_absent(last) {
                return Err(misplaced(last, "ABSENT(...) ends a `;` sequence"));
            }
            chain.into_iter().filter(|e| !is_absent(e)).try_for_each(check_placement)
        }
        CelKind::As(x, _) | CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => {
            check_placement(x)
        }
        CelKind::Contiguous(a, b) | CelKind::Or(a, b) => {
            check_placement(a)?;
            check_placement(b)
        }
    }
}

fn misplaced(c: &Cel, what: &str) -> Diagnostic {
    Diagnostic::error("E0302", format!("{what}: absence needs a pattern before and after it"), c.span).with_label(
        "write `ψ1 ; ABSENT(T) ; ψ2`; `:`, OR and FILTER bind looser than `;`, so parenthesise the sequence, \
         and put a filter of the absent type inside: ABSENT(T FILTER T[...])",
    )
}
