//! Lint W0407 (docs/language.md#s3-3a): a `SELECT` item that names only the event of an
//! `ABSENT(T AS x ...)`. Such a name is visible only in the absence's own filters and binds
//! no event of the match, so selecting it selects nothing, silently: most likely the user
//! meant a variable of the pattern.

use ceql_syntax::ast::{self, Cel, CelKind, SelectList};
use ceql_syntax::Diagnostic;

/// Adds a W0407 warning for every `SELECT` item named like an `ABSENT` alias and like no
/// `AS` name of the pattern itself.
pub(super) fn selected_absent_names(query: &ast::Query, warnings: &mut Vec<Diagnostic>) {
    let SelectList::Items(items) = &query.select else { return };
    let (mut outside, mut absent) = (Vec::new(), Vec::new());
    walk(&query.pattern, &mut outside, &mut absent);
    for item in items.iter().filter(|i| i.var.stream.is_none()) {
        let name = &item.var.name.name;
        if absent.contains(&name.as_str()) && !outside.contains(&name.as_str()) {
            warnings.push(
                Diagnostic::warning(
                    "W0407",
                    format!("`{name}` names only the absent event of an ABSENT(...): it selects nothing"),
                    item.var.span,
                )
                .with_label("an absent event is in no match; its name is visible only in the absence's own filters"),
            );
        }
    }
}

/// The `AS` names of the pattern (`outside`) and of its absences (`absent`).
fn walk<'a>(c: &'a Cel, outside: &mut Vec<&'a str>, absent: &mut Vec<&'a str>) {
    match &c.kind {
        CelKind::As(x, name) => {
            outside.push(&name.name);
            walk(x, outside, absent);
        }
        CelKind::Absent(alternatives, _) => {
            absent.extend(alternatives.iter().filter_map(|a| a.alias.as_ref()).map(|n| n.name.as_str()))
        }
        CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => walk(x, outside, absent),
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
            walk(a, outside, absent);
            walk(b, outside, absent);
        }
        CelKind::Atom(_) | CelKind::Not(_) => {}
    }
}
