//! The query clauses: SELECT, FROM, PARTITION BY, WITHIN, CONSUME BY, LIMIT.

use super::literal::{ident, integer};
use super::{cel, Pair, Rule};
use crate::ast::*;
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// Builds a [`Query`] from a `query` pair.
pub(crate) fn query(pair: Pair<'_>) -> Result<Query, Diagnostic> {
    let span = Span::of(&pair);
    let mut select_span = Span::default();
    let mut strategy = Strategy::All;
    let mut strategy_span = None;
    let mut select = SelectList::Star;
    let mut from = Vec::new();
    let mut pattern = None;
    let mut partition_by = Vec::new();
    let mut within = None;
    let mut consume = ConsumePolicy::None;
    let mut limit = None;
    let mut measures = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::kw_select => select_span = Span::of(&p),
            Rule::strategy => {
                strategy_span = Some(Span::of(&p));
                strategy = strategy_of(p);
            }
            Rule::select_list => (select, measures) = select_list(p)?,
            Rule::from_clause => from = p.into_inner().filter(|q| q.as_rule() == Rule::ident).map(ident).collect(),
            Rule::cel => pattern = Some(cel::cel(p)?),
            Rule::partition_clause => {
                partition_by = p.into_inner().filter(|q| q.as_rule() == Rule::key_group).map(key_group).collect()
            }
            Rule::within_clause => within = Some(window(p)?),
            Rule::consume_clause => consume = consume_policy(p),
            Rule::limit_clause => {
                let n = p.into_inner().find(|q| q.as_rule() == Rule::integer).expect("LIMIT has a number");
                limit = Some(Limit { n: integer(&n)?, span: Span::of(&n) });
            }
            _ => {}
        }
    }
    Ok(Query {
        select_span,
        strategy,
        strategy_span,
        select,
        from,
        pattern: pattern.expect("grammar requires WHERE"),
        partition_by,
        within,
        consume,
        limit,
        measures,
        span,
    })
}

fn strategy_of(pair: Pair<'_>) -> Strategy {
    match pair.into_inner().next().expect("strategy keyword").as_rule() {
        Rule::kw_all => Strategy::All,
        Rule::kw_any => Strategy::Any,
        Rule::kw_next => Strategy::Next,
        Rule::kw_last => Strategy::Last,
        Rule::kw_max => Strategy::Max,
        _ => Strategy::Strict,
    }
}

fn select_list(pair: Pair<'_>) -> Result<(SelectList, Vec<Measure>), Diagnostic> {
    let span = Span::of(&pair);
    let mut items = Vec::new();
    let mut measures = Vec::new();
    let mut star = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::star => return Ok((SelectList::Star, measures)),
            Rule::kw_none => return Ok((SelectList::None(Span::of(&p)), measures)),
            Rule::select_entry => {
                let entry = p.into_inner().next().expect("select entry");
                match entry.as_rule() {
                    Rule::star if star.is_some() => {
                        return Err(Diagnostic::error("E0100", "`*` is listed twice", Span::of(&entry))
                            .with_label("write `*` once"))
                    }
                    Rule::star => star = Some(Span::of(&entry)),
                    Rule::measure => {
                        let mut agg = None;
                        let mut name = None;
                        for q in entry.into_inner() {
                            match q.as_rule() {
                                Rule::aggregate => agg = Some(super::pred::aggregate(q)),
                                Rule::ident => name = Some(ident(q)),
                                _ => {}
                            }
                        }
                        measures.push(Measure {
                            agg: agg.expect("measure has an aggregate"),
                            name: name.expect("measure has a name"),
                        });
                    }
                    _ => items.push(select_item(entry)),
                }
            }
            _ => {}
        }
    }
    // `*` goes with measures only; a list of measures only reports no positions.
    Ok(match star {
        Some(s) if !items.is_empty() => {
            return Err(Diagnostic::error("E0100", "`*` cannot be listed with variables", s)
                .with_label("write `*` alone, with measures only, or list the variables"))
        }
        Some(_) => (SelectList::Star, measures),
        None if items.is_empty() => (SelectList::None(span), measures),
        None => (SelectList::Items(items), measures),
    })
}

fn select_item(p: Pair<'_>) -> SelectItem {
    let mut var = None;
    let mut attrs = Vec::new();
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::qname => var = Some(qname(q)),
            Rule::ident => attrs.push(ident(q)),
            _ => {}
        }
    }
    SelectItem { var: var.expect("select item has a name"), attrs }
}

/// Builds a [`QName`] from a `qname` pair.
///
/// The span is computed from the identifiers: pest skips whitespace before trying
/// the optional `>T`, so the pair's own span can end in blanks.
pub(crate) fn qname(pair: Pair<'_>) -> QName {
    let ids: Vec<Ident> = pair.into_inner().filter(|q| q.as_rule() == Rule::ident).map(ident).collect();
    let span = ids[0].span.to(ids[ids.len() - 1].span);
    let mut ids = ids.into_iter();
    let first = ids.next().expect("qname has a name");
    match ids.next() {
        Some(second) => QName { stream: Some(first), name: second, span },
        None => QName { stream: None, name: first, span },
    }
}

fn key_group(pair: Pair<'_>) -> KeyGroup {
    let span = Span::of(&pair);
    KeyGroup { attrs: pair.into_inner().filter(|q| q.as_rule() == Rule::ident).map(ident).collect(), span }
}

fn window(pair: Pair<'_>) -> Result<Window, Diagnostic> {
    let w = pair.into_inner().find(|q| q.as_rule() == Rule::window).expect("WITHIN has a window");
    let form = w.into_inner().next().expect("window has one form");
    let span = Span::of(&form);
    match form.as_rule() {
        Rule::window_events => {
            let n = form.into_inner().next().expect("EVENTS count");
            Ok(Window::Events { n: integer(&n)?, span })
        }
        Rule::window_attr => {
            let mut n = None;
            let mut attr = None;
            for q in form.into_inner() {
                match q.as_rule() {
                    Rule::integer => n = Some(integer(&q)?),
                    Rule::ident => attr = Some(ident(q)),
                    _ => {}
                }
            }
            Ok(Window::Attribute { n: n.expect("attribute window bound"), attr: attr.expect("attribute"), span })
        }
        _ => Ok(Window::Duration { parts: duration_parts(form), span }),
    }
}

/// The `number unit` components of a `window_duration` pair (`WITHIN`, and `FOR` of a
/// trailing `ABSENT`).
pub(crate) fn duration_parts(pair: Pair<'_>) -> Vec<DurationPart> {
    let mut parts = Vec::new();
    for d in pair.into_inner() {
        let mut amount = String::new();
        let mut unit = TimeUnit::Second;
        for q in d.into_inner() {
            match q.as_rule() {
                Rule::number => amount = q.as_str().to_string(),
                Rule::time_unit => unit = time_unit(q),
                _ => {}
            }
        }
        parts.push(DurationPart { amount, unit });
    }
    parts
}

fn time_unit(pair: Pair<'_>) -> TimeUnit {
    match pair.into_inner().next().expect("unit").as_rule() {
        Rule::unit_days => TimeUnit::Day,
        Rule::unit_hours => TimeUnit::Hour,
        Rule::unit_minutes => TimeUnit::Minute,
        Rule::unit_ms => TimeUnit::Millisecond,
        _ => TimeUnit::Second,
    }
}

fn consume_policy(pair: Pair<'_>) -> ConsumePolicy {
    let policy = pair.into_inner().find(|q| q.as_rule() == Rule::consume_policy).expect("policy");
    match policy.into_inner().next().expect("policy keyword").as_rule() {
        Rule::kw_any => ConsumePolicy::Any,
        Rule::kw_partition => ConsumePolicy::Partition,
        _ => ConsumePolicy::None,
    }
}
