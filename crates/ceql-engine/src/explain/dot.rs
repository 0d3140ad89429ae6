//! Graphviz DOT of the automaton and of the materialised det-states.
//!
//! Nodes are `qN` (automaton states) or `dN` (det-states), one line each; edges
//! are one line each, `a -> b [...]`. The arrow into the initial state comes from
//! the point node `start`, which is no state.

use super::cache::{DetView, Move};
use super::labels::AutomatonView;
use std::fmt::Write;

/// Classes listed on one det-state edge before the rest are counted.
const MAX_CLASSES_PER_EDGE: usize = 4;

const HEADER: &str = "  rankdir=LR;\n  bgcolor=\"white\";\n  node [fontname=\"Helvetica\", fontsize=12];\n  edge [fontname=\"Helvetica\", fontsize=10];\n  start [shape=point, width=0.08, label=\"\"];\n";

/// A DOT string literal.
fn quoted(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 2);
    s.push('"');
    for c in text.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

pub(super) fn automaton(view: &AutomatonView) -> String {
    let mut out = String::from("digraph automaton {\n");
    out += HEADER;
    let _ = writeln!(
        out,
        "  label={};\n  labelloc=b;\n  fontname=\"Helvetica\";\n  fontsize=10;",
        quoted("solid: the event read joins the complex event; dashed: not (skip, NOT, not selected)")
    );
    for s in &view.states {
        let shape = if s.accepting { "doublecircle" } else { "circle" };
        let tooltip = if s.initial { "initial state".to_string() } else { format!("state of {}", s.origin) };
        let _ = writeln!(out, "  q{} [shape={shape}, label=\"q{}\", tooltip={}];", s.id, s.id, quoted(&tooltip));
    }
    out += "  start -> q0;\n";
    for t in &view.transitions {
        let mut label = t.reads.clone();
        if !t.variables.is_empty() {
            let _ = write!(label, "\nAS {}", t.variables.join(", "));
        }
        let style = if t.output { "solid, color=\"black\", penwidth=1.4" } else { "dashed, color=\"gray40\"" };
        let _ = writeln!(out, "  q{} -> q{} [label={}, style={style}];", t.source, t.target, quoted(&label));
    }
    out += "}\n";
    out
}

pub(super) fn det_states(view: &DetView) -> String {
    let mut out = String::from("digraph det_states {\n");
    out += HEADER;
    let legend = if view.uncached {
        "uncached mode: no transition is kept, only the det-states in use"
    } else {
        "edges: event classes (type: its predicates that are TRUE); solid: output-marked successor; dashed: unmarked; dotted: next det-state of the runs not started"
    };
    let _ = writeln!(out, "  label={};\n  labelloc=b;\n  fontname=\"Helvetica\";\n  fontsize=10;", quoted(legend));
    for n in &view.nodes {
        let peripheries = if n.accepting { 2 } else { 1 };
        let label = format!("d{}\n{}", n.id, n.label);
        let _ = writeln!(
            out,
            "  d{} [shape=box, style=rounded, peripheries={peripheries}, label={}];",
            n.id,
            quoted(&label)
        );
    }
    if !view.nodes.is_empty() {
        out += "  start -> d0;\n";
    }
    for e in &view.edges {
        let mut classes: Vec<&str> = e.classes.iter().take(MAX_CLASSES_PER_EDGE).map(String::as_str).collect();
        let more = e.classes.len().saturating_sub(MAX_CLASSES_PER_EDGE);
        let more_text = format!("(+{more} more classes)");
        if more > 0 {
            classes.push(&more_text);
        }
        let style = match e.kind {
            Move::Marked => "solid, color=\"black\", penwidth=1.4",
            Move::Unmarked => "dashed, color=\"gray40\"",
            Move::Next => "dotted, color=\"gray40\"",
        };
        let _ =
            writeln!(out, "  d{} -> d{} [label={}, style={style}];", e.source, e.target, quoted(&classes.join("\n")));
    }
    out += "}\n";
    out
}
