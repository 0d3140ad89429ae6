//! Human labels of the automaton: event types, filters and variables by name, never
//! internal ids (guard, predicate or variable numbers).

use crate::analyze::VarKind;
use crate::bitset::BitSet;
use crate::cea::{Guard, Term, NEGATED};
use crate::query::CompiledQuery;
use crate::schema::TypeId;

/// The automaton of a query as data ([`CompiledQuery::automaton_view`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AutomatonView {
    /// The states, by number (`q0` is the initial state).
    pub states: Vec<StateView>,
    /// The transitions, grouped by source state.
    pub transitions: Vec<TransitionView>,
}

/// One state of the automaton.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StateView {
    /// Its number `N` (drawn as `qN`).
    pub id: usize,
    /// Whether it is the initial state `q0`.
    pub initial: bool,
    /// Whether it is final: a run that enters it completes a complex event.
    pub accepting: bool,
    /// The part of the query text that created it (an atom, `NOT`, an iteration;
    /// the whole formula for `q0`), whitespace collapsed.
    pub origin: String,
}

/// One transition `(p, g, L, q)` of the automaton.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransitionView {
    /// Source state.
    pub source: usize,
    /// Target state.
    pub target: usize,
    /// The guard: the event type and filters the event must satisfy
    /// (`SELL[price > 26.0]`), `NOT(...)` for a negation, `TRUE` for a skip loop.
    pub reads: String,
    /// The `AS` variables bound by reading the event.
    pub variables: Vec<String>,
    /// Whether the event read is captured (the transition binds variables).
    pub captures: bool,
    /// The output mark: whether the event read joins the complex event (captured
    /// and kept by the `SELECT` list).
    pub output: bool,
}

impl TransitionView {
    /// `reads`, then ` AS x, y` when the transition binds `AS` variables.
    pub fn label(&self) -> String {
        if self.variables.is_empty() {
            self.reads.clone()
        } else {
            format!("{} AS {}", self.reads, self.variables.join(", "))
        }
    }
}

/// Builds [`AutomatonView`] from the compiled automaton.
pub(super) fn automaton_view(q: &CompiledQuery) -> AutomatonView {
    let cea = &q.cea;
    let states = (0..cea.num_states)
        .map(|s| StateView {
            id: s,
            initial: s == 0,
            accepting: cea.finals[s],
            origin: collapse(span_text(q, cea.state_spans[s])),
        })
        .collect();
    let mut transitions = Vec::with_capacity(cea.num_transitions());
    for (p, out) in cea.out.iter().enumerate() {
        for t in out {
            transitions.push(TransitionView {
                source: p,
                target: t.target as usize,
                reads: guard_text(q, &cea.guards[t.guard as usize]),
                variables: alias_names(q, &t.vars),
                captures: !t.vars.is_empty(),
                output: t.marked,
            });
        }
    }
    AutomatonView { states, transitions }
}

fn span_text(q: &CompiledQuery, span: ceql_syntax::Span) -> &str {
    q.text.get(span.start..span.end).unwrap_or("")
}

/// `text` with runs of white space (comments' line breaks included) as one space.
pub(super) fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `AS` names in a transition's variable set, in order of first appearance.
pub(super) fn alias_names(q: &CompiledQuery, vars: &BitSet) -> Vec<String> {
    let variables = &q.plan.variables;
    (0..variables.len())
        .filter(|&v| vars.contains(v))
        .filter_map(|v| match variables.kind(v) {
            VarKind::Alias(name) => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// The name a variable is written with.
pub(super) fn var_name(q: &CompiledQuery, v: usize) -> String {
    match q.plan.variables.kind(v) {
        VarKind::Type(name) | VarKind::Alias(name) => name.clone(),
        VarKind::Qualified(s, name) => format!("{}>{name}", q.plan.schema.streams[*s as usize].name),
        // Internal (docs/language.md#s3-4c): named after the iteration it marks.
        VarKind::Iteration(i) => format!("+{i}"),
    }
}

/// A type's name: `T` when the query reads one stream, `S>T` with several.
pub(super) fn type_label(q: &CompiledQuery, ty: TypeId) -> String {
    if q.plan.schema.streams.len() <= 1 {
        q.plan.schema.types[ty as usize].name.clone()
    } else {
        q.type_name(ty)
    }
}

/// A predicate's text without its outermost parentheses (`(a AND b)` → `a AND b`).
pub(super) fn bare(text: &str) -> &str {
    let inner = match text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        Some(inner) => inner,
        None => return text,
    };
    // Only when the first parenthesis closes at the very end: `(a) AND (b)` keeps its own.
    let mut depth = 0i32;
    let mut in_string = false;
    for c in inner.chars() {
        match c {
            '\'' => in_string = !in_string,
            '(' if !in_string => depth += 1,
            ')' if !in_string => {
                depth -= 1;
                if depth < 0 {
                    return text;
                }
            }
            _ => {}
        }
    }
    inner
}

/// The conjunction of predicate texts, each kept parenthesised when there are
/// several (so that `a OR b` inside stays one operand).
pub(super) fn conjunction<S: AsRef<str>>(texts: &[S]) -> String {
    match texts {
        [one] => bare(one.as_ref()).to_string(),
        many => many.iter().map(|t| t.as_ref()).collect::<Vec<_>>().join(" AND "),
    }
}

/// `T` or `T[p1 AND p2]` for a guard term; a negative literal of a conjunction's product
/// (docs/language.md#s5-3) reads `NOT (p)`.
pub(super) fn term_text(q: &CompiledQuery, term: &Term) -> String {
    let name = type_label(q, term.ty);
    if term.bits.is_empty() {
        return name;
    }
    let texts: Vec<String> = term
        .bits
        .iter()
        .map(|&l| {
            let text = q.pred_texts[term.ty as usize][(l & !NEGATED) as usize].as_str();
            if l & NEGATED == 0 {
                text.to_string()
            } else {
                format!("NOT ({})", bare(text))
            }
        })
        .collect();
    format!("{name}[{}]", conjunction(&texts))
}

/// A guard in CEQL-like syntax: `T[...]`, `NOT(T[...] OR U)`, or `TRUE`.
pub(super) fn guard_text(q: &CompiledQuery, g: &Guard) -> String {
    let terms: Vec<String> = g.terms.iter().map(|t| term_text(q, t)).collect();
    match (g.negated, terms.len()) {
        (true, 0) => "TRUE".to_string(),
        (false, 0) => "FALSE".to_string(),
        (false, _) => terms.join(" OR "),
        (true, _) => format!("NOT({})", terms.join(" OR ")),
    }
}
