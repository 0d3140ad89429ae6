//! Safety lint W0401 (reference §4.3): an `AS` name that may capture events on both
//! sides of `;` or `:`. In CEQL this is meaningful (the variable then holds both
//! events), so it is only a warning and never changes the formula.

use ceql_syntax::ast::{Cel, CelKind, Ident};
use ceql_syntax::Diagnostic;

/// Adds a W0401 warning for every sequencing whose sides share an `AS` name bound
/// outside any `+`.
pub(super) fn safety(c: &Cel, warnings: &mut Vec<Diagnostic>) {
    match &c.kind {
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) => {
            let left = vdef_plus(a);
            for x in vdef_plus(b) {
                if left.iter().any(|l| l.name == x.name) {
                    warnings.push(
                        Diagnostic::warning("W0401", format!("`{}` may capture events on both sides of the sequence", x.name), x.span)
                            .with_label(
                                "it will hold the events of both sides; after distributing OR some alternatives may still be safe",
                            ),
                    );
                }
            }
            safety(a, warnings);
            safety(b, warnings);
        }
        CelKind::Or(a, b) => {
            safety(a, warnings);
            safety(b, warnings);
        }
        CelKind::As(x, _) | CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => {
            safety(x, warnings)
        }
        CelKind::Atom(_) | CelKind::Not(_) => {}
    }
}

/// `AS` names bound outside any `+`.
fn vdef_plus(c: &Cel) -> Vec<&Ident> {
    match &c.kind {
        CelKind::As(x, name) => {
            let mut v = vdef_plus(x);
            v.push(name);
            v
        }
        CelKind::Filter(x, _) => vdef_plus(x),
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) => {
            let mut v = vdef_plus(a);
            v.extend(vdef_plus(b));
            v
        }
        CelKind::Plus(_) | CelKind::ContiguousPlus(_) | CelKind::Atom(_) | CelKind::Not(_) => Vec::new(),
    }
}
