//! `CompiledQuery::explain`: the text.

use super::labels::{automaton_view, collapse, type_label, var_name};
use crate::analyze::{Projection, RFilter, WindowPlan};
use crate::query::CompiledQuery;
use ceql_syntax::ast::{ConsumePolicy, Strategy};
use std::fmt::Write;

/// Longest state origin shown before it is cut.
const ORIGIN_CHARS: usize = 48;

/// The section titles, in order (tests and the documentation rely on them).
pub(crate) const SECTIONS: [&str; 6] =
    ["Query", "Formula after filter push-down", "Predicates", "Automaton", "Clauses", "Warnings"];

pub(super) fn explain(q: &CompiledQuery) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", SECTIONS[0]);
    for line in q.text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()) {
        let _ = writeln!(out, "  {line}");
    }
    if let Some(schema) = &q.schema_text {
        let _ = writeln!(out, "  (with the schema: {})", cut(&collapse(schema), 2 * ORIGIN_CHARS));
    }

    let _ = writeln!(out, "\n{} (reference §5.2)", SECTIONS[1]);
    let _ = writeln!(out, "  {}", q.normalized_formula());

    let _ = writeln!(out, "\n{} (one bit per distinct predicate of each event type, §5.3)", SECTIONS[2]);
    predicates(q, &mut out);

    automaton(q, &mut out);

    let _ = writeln!(out, "\n{}", SECTIONS[4]);
    clauses(q, &mut out);

    let _ = writeln!(out, "\n{}", SECTIONS[5]);
    if q.plan.warnings.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for w in &q.plan.warnings {
        let at = w.location(&q.text);
        let _ = writeln!(out, "  {} (line {}, column {}): {}", w.code, at.line, at.column, w.message);
        if !w.label.is_empty() {
            let _ = writeln!(out, "    {}", w.label);
        }
    }
    out
}

fn predicates(q: &CompiledQuery, out: &mut String) {
    let mut any = false;
    for (ty, texts) in q.pred_texts.iter().enumerate() {
        if texts.is_empty() {
            continue;
        }
        any = true;
        let name = type_label(q, ty as u32);
        for (bit, text) in texts.iter().enumerate() {
            let head = if bit == 0 { name.as_str() } else { "" };
            let _ = writeln!(out, "  {head:<12} bit {bit:<3} {}", super::labels::bare(text));
        }
    }
    if !any {
        let _ = writeln!(out, "  (none: every transition tests the event type only)");
    }
}

fn automaton(q: &CompiledQuery, out: &mut String) {
    let view = automaton_view(q);
    let finals: Vec<String> = view.states.iter().filter(|s| s.accepting).map(|s| format!("q{}", s.id)).collect();
    let _ = writeln!(
        out,
        "\n{} (reference §5.4): {} states, {} transitions; initial q0, final {}",
        SECTIONS[3],
        view.states.len(),
        view.transitions.len(),
        finals.join(", ")
    );
    let _ =
        writeln!(out, "  • output-marked: the event read joins the complex event   ∘ not (skipped, NOT, not selected)");
    for s in &view.states {
        let role = match (s.initial, s.accepting) {
            (true, _) => "initial",
            (false, true) => "final",
            _ => "",
        };
        let origin = if s.initial { String::new() } else { format!("state of `{}`", cut(&s.origin, ORIGIN_CHARS)) };
        let line = format!("  q{:<4}{role:<9}{origin}", s.id);
        let _ = writeln!(out, "{}", line.trim_end());
        for t in view.transitions.iter().filter(|t| t.source == s.id) {
            let mark = if t.output { '•' } else { '∘' };
            let note = if t.captures && !t.output { "  (captured, not in the SELECT list)" } else { "" };
            let _ = writeln!(out, "        -> q{:<4}{mark} {}{note}", t.target, t.label());
        }
    }
}

fn clauses(q: &CompiledQuery, out: &mut String) {
    let plan = &q.plan;
    let select = match &plan.projection {
        Projection::All => "* (every captured event)".to_string(),
        Projection::Nothing => "NONE (complex events keep their interval, no events)".to_string(),
        Projection::Vars(set) => {
            let names: Vec<String> =
                (0..plan.variables.len()).filter(|&v| set.contains(v)).map(|v| var_name(q, v)).collect();
            names.join(", ")
        }
    };
    let _ = writeln!(out, "  select        {select}");
    let strategy = match plan.strategy {
        Strategy::All | Strategy::Any => "every complex event",
        Strategy::Next => "per end position, the earliest-preferring one (<next)",
        Strategy::Last => "per end position, the latest-preferring one (<last)",
        Strategy::Max => "per end position, the maximal ones by inclusion",
        Strategy::Strict => "contiguous complex events only (no skipped event between start and end)",
    };
    let _ = writeln!(out, "  strategy      {}: {strategy}", plan.strategy.keyword());
    tested_per_valuation(q, out);
    if q.dedupe_output {
        let _ = writeln!(
            out,
            "                repeated complex events at one position are removed (MAX with a projection)"
        );
    }
    let window = match &plan.window {
        WindowPlan::Unbounded => "none: partial matches are released only by consumption".to_string(),
        WindowPlan::Events(n) => {
            format!("{n} EVENTS: end - start <= {n} position{}", if *n == 1 { "" } else { "s" })
        }
        WindowPlan::Duration(ns) => format!("{} of time stamps: ts(end) - ts(start) <= {ns} ns", duration(*ns)),
        WindowPlan::Attribute { n, attr } => format!("{n} [{attr}]: {attr}(end) - {attr}(start) <= {n}"),
    };
    let _ = writeln!(out, "  window        {window}");
    let facts = q.facts();
    let partition = if plan.partition_by.is_empty() && plan.routing.is_some() {
        "none (the routing below splits the events by key)".to_string()
    } else if plan.partition_by.is_empty() {
        "none: one sequence of events".to_string()
    } else {
        let groups: Vec<String> = plan.partition_by.iter().map(|g| format!("[{}]", g.join(", "))).collect();
        let split = if facts.key_independent {
            "each key's events evaluated apart"
        } else {
            "keys evaluated apart, but the window or consumption spans every key"
        };
        format!("{} ({split})", groups.join(", "))
    };
    let _ = writeln!(out, "  partition by  {partition}");
    if let Some(routing) = &plan.routing {
        let keys: Vec<String> = facts.routed_by.iter().map(|(t, a)| format!("{t}.{a}")).collect();
        let _ = writeln!(
            out,
            "  routed by     {} (equalities between variables evaluated as a partition key, §3.4b: {})",
            keys.join(", "),
            routing.equalities.join(", ")
        );
    }
    let consume = match plan.consume {
        ConsumePolicy::None => "NONE: partial matches survive a match",
        ConsumePolicy::Any => "ANY: a match resets every partition",
        ConsumePolicy::Partition => "PARTITION: a match resets its own partition",
    };
    let _ = writeln!(out, "  consume by    {consume}");
    let limit = match plan.limit {
        Some(n) => format!("{n} complex events per end position"),
        None => "none".to_string(),
    };
    let _ = writeln!(out, "  limit         {limit}");
    let used = match &facts.relevant_types {
        Some(types) => {
            // Declared types no guard names are kept only to check them (§5.7).
            let named = q.named_type_names();
            let (used, checked): (Vec<&str>, Vec<&str>) =
                types.iter().map(String::as_str).partition(|t| named.contains(t));
            let checked = if checked.is_empty() {
                String::new()
            } else {
                format!("; {} declared, kept to check them", checked.join(", "))
            };
            format!("{} only: events of other types leave every run where it is (§5.7){checked}", used.join(", "))
        }
        None => "every event: the query may read events of any type (§5.7)".to_string(),
    };
    let _ = writeln!(out, "  events used   {used}");
}

/// The filters the automaton leaves to a test of each valuation (docs/language.md#s3-4a)
/// and the measures: `explain` showed neither, so `b[v > PREV(v)]` seemed to vanish.
fn tested_per_valuation(q: &CompiledQuery, out: &mut String) {
    let plan = &q.plan;
    for (i, r) in plan.residuals.iter().enumerate() {
        let head = if i == 0 { "  tested        " } else { "                " };
        let per = if r.plus.is_some() { " (per iteration of its +, §3.4c)" } else { "" };
        let _ = writeln!(out, "{head}{}{per}", filter_text(q, &r.filter));
    }
    // Each absence (each alternative of an ABSENT(β1 OR β2)) that reads the match, named:
    // the formula above no longer shows it.
    for (i, g) in plan.gaps.iter().enumerate() {
        let head = if plan.residuals.is_empty() && i == 0 { "  tested        " } else { "                " };
        let mut types: Vec<&str> = g.edges.iter().map(|e| plan.schema.types[e.ty as usize].name.as_str()).collect();
        types.dedup();
        let filters: Vec<String> = g.filters.iter().map(|f| filter_text(q, f)).collect();
        let _ = writeln!(
            out,
            "{head}ABSENT({} FILTER {}) reading the match, per valuation (§3.3a)",
            types.join(" OR "),
            filters.join(" AND ")
        );
    }
    if !plan.residuals.is_empty() || !plan.gaps.is_empty() {
        let _ = writeln!(out, "                on each valuation, while its outputs are enumerated (§3.4a)");
        if matches!(plan.strategy, Strategy::Next | Strategy::Last | Strategy::Max)
            && !matches!(plan.window, WindowPlan::Unbounded)
        {
            let _ = writeln!(
                out,
                "                the window comes first: the strategy chooses among the valuations that pass (§3.6a)"
            );
        }
    }
    for (i, m) in plan.measures.iter().enumerate() {
        let head = if i == 0 { "  measures      " } else { "                " };
        let text = q.text.get(m.span.start..m.span.end).unwrap_or("?");
        let _ = writeln!(out, "{head}{} = {text}", m.name);
    }
}

/// A residual filter as CEQL text.
fn filter_text(q: &CompiledQuery, f: &RFilter) -> String {
    match f {
        RFilter::Var { var, pred } => format!("{}[{}]", var_name(q, *var), ceql_syntax::pred_to_string(pred)),
        RFilter::And(a, b) => format!("{} AND {}", filter_text(q, a), filter_text(q, b)),
        RFilter::Or(a, b) => format!("({} OR {})", filter_text(q, a), filter_text(q, b)),
        RFilter::Residual => "TRUE".to_string(),
    }
}

/// Nanoseconds in the largest unit that divides them.
fn duration(ns: i64) -> String {
    const UNITS: [(i64, &str); 6] = [
        (3_600_000_000_000, "hours"),
        (60_000_000_000, "minutes"),
        (1_000_000_000, "seconds"),
        (1_000_000, "milliseconds"),
        (1_000, "microseconds"),
        (1, "nanoseconds"),
    ];
    let (unit, name) = UNITS.iter().copied().find(|(u, _)| ns != 0 && ns % u == 0).unwrap_or((1, "nanoseconds"));
    let n = ns / unit;
    format!("{n} {}", if n == 1 { &name[..name.len() - 1] } else { name })
}

/// `text` cut to `max` characters with an ellipsis.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(max - 1).collect::<String>())
    }
}
