//! Safety lint W0401 (docs/language.md#s4-3): an `AS` name that may capture events on both
//! sides of `;`, `:` or `AND` (whose sides capture distinct events, docs/language.md#s3-3c). In CEQL this is meaningful (the variable then holds both
//! events), so it is only a warning and never changes the formula.

use ceql_syntax::ast::{Cel, CelKind, Ident};
use ceql_syntax::Diagnostic;

/// Adds a W0401 warning for every sequencing whose sides share an `AS` name bound
/// outside any `+`.
pub(super) fn safety(c: &Cel, warnings: &mut Vec<Diagnostic>) {
    vdef_plus(c, warnings);
}

/// `AS` names bound outside any `+` in `c`, computed bottom-up in one pass (a chain of
/// n sequencings costs O(n) lists, not O(n²) recomputations), while warning about
/// every sequencing inside `c` whose sides share one.
fn vdef_plus<'a>(c: &'a Cel, warnings: &mut Vec<Diagnostic>) -> Vec<&'a Ident> {
    match &c.kind {
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::And(a, b) => {
            let what = if matches!(c.kind, CelKind::And(..)) { "conjunction" } else { "sequence" };
            let mut left = vdef_plus(a, warnings);
            let right = vdef_plus(b, warnings);
            for x in &right {
                if left.iter().any(|l| l.name == x.name) {
                    warnings.push(
                        Diagnostic::warning("W0401", format!("`{}` may capture events on both sides of the {what}", x.name), x.span)
                            .with_label(
                                "it will hold the events of both sides; after distributing OR some alternatives may still be safe",
                            ),
                    );
                }
            }
            left.extend(right);
            left
        }
        CelKind::Or(a, b) => {
            let mut v = vdef_plus(a, warnings);
            v.extend(vdef_plus(b, warnings));
            v
        }
        CelKind::As(x, name) => {
            let mut v = vdef_plus(x, warnings);
            v.push(name);
            v
        }
        CelKind::Filter(x, _) => vdef_plus(x, warnings),
        CelKind::Plus(x) | CelKind::ContiguousPlus(x) => {
            vdef_plus(x, warnings);
            Vec::new()
        }
        CelKind::Atom(_) | CelKind::Not(_) | CelKind::Absent(..) => Vec::new(),
    }
}
