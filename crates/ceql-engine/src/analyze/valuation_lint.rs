//! Lint W0406 (docs/language.md#s3-4a): a filter that reads other events, over a pattern
//! with an iteration `ψ+` that skips events, is tested on every valuation of that
//! iteration, which can be exponential in the events of the window (`SELL AS s ; (BUY AS
//! b)+ ; SELL AS e FILTER e[price > avg(b.price)]`: 2^n for `n` BUYs), whatever it reports.
//! The engine evaluates it; the warning says what it costs and how to avoid it.

use ceql_syntax::ast::{Cel, CelKind, ExprKind, Filter};
use ceql_syntax::{Diagnostic, Span};

/// Adds a W0406 warning for every such filter of `c` (one per filter, at its first term
/// that reads another event).
pub(super) fn valuation_blowup(c: &Cel, warnings: &mut Vec<Diagnostic>) {
    walk(c, false, warnings);
}

/// Looks for filters outside any iteration (a filter inside one is tested per
/// iteration, docs/language.md#s3-4c).
fn walk(c: &Cel, in_plus: bool, warnings: &mut Vec<Diagnostic>) {
    match &c.kind {
        CelKind::Filter(x, f) => {
            if !in_plus {
                let mut bound = Vec::new();
                iterated(x, false, &mut bound);
                let reads = other_reads(f);
                // The variable of the iteration the filter reads, else the iteration's first.
                let var = reads.iter().map(|(v, _)| *v).find(|v| bound.contains(v)).or(bound.first().copied());
                if let (Some(var), Some(&(_, span))) = (var, reads.first()) {
                    warnings.push(
                        Diagnostic::warning(
                            "W0406",
                            format!(
                                "this filter reads other events, and `{var}` is bound in an iteration `+` that skips \
                                 events: the filter is tested on every valuation of the iteration, up to 2^n for n events \
                                 in the window"
                            ),
                            span,
                        )
                        .with_label("write the iteration contiguously (`:+`), or shorten the window; Ctrl-C stops an event"),
                    );
                }
            }
            walk(x, in_plus, warnings);
        }
        CelKind::Plus(x) | CelKind::ContiguousPlus(x) => walk(x, true, warnings),
        CelKind::As(x, _) => walk(x, in_plus, warnings),
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
            walk(a, in_plus, warnings);
            walk(b, in_plus, warnings);
        }
        CelKind::Atom(_) | CelKind::Not(_) | CelKind::Absent(..) => {}
    }
}

/// The variables (type names and `AS` names) that `c` binds inside an iteration `ψ+`
/// (`ψ:+` alone is contiguous: one valuation per run).
fn iterated<'a>(c: &'a Cel, under_plus: bool, out: &mut Vec<&'a str>) {
    match &c.kind {
        CelKind::Atom(q) if under_plus => out.push(&q.name.name),
        CelKind::As(x, id) => {
            if under_plus {
                out.push(&id.name);
            }
            iterated(x, under_plus, out);
        }
        CelKind::Plus(x) => iterated(x, true, out),
        CelKind::ContiguousPlus(x) | CelKind::Filter(x, _) => iterated(x, under_plus, out),
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
            iterated(a, under_plus, out);
            iterated(b, under_plus, out);
        }
        CelKind::Atom(_) | CelKind::Not(_) | CelKind::Absent(..) => {}
    }
}

/// The variables each term of `f` that reads other events involves (its filtered
/// variable, and those it reads by `y.attr` or an aggregate), with the term's span.
fn other_reads(f: &Filter) -> Vec<(&str, Span)> {
    let mut out = Vec::new();
    match f {
        Filter::Var { var, pred, .. } => {
            if let Some(span) = super::correlation::first_other_read(pred) {
                out.push((var.name.name.as_str(), span));
                pred.for_each_expr(&mut |e| match &e.kind {
                    ExprKind::Ref { var, .. } => out.push((var.name.as_str(), e.span)),
                    ExprKind::Agg(a) => out.push((a.var.name.as_str(), e.span)),
                    _ => {}
                });
            }
        }
        Filter::And(a, b) | Filter::Or(a, b) => {
            out.extend(other_reads(a));
            out.extend(other_reads(b));
        }
    }
    out
}
