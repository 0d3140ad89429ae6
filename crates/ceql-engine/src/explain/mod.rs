//! What the compiler made of a query, for people: the normalized formula, the
//! predicates and their bits, the automaton with readable transition labels, the
//! clauses and the warnings ([`CompiledQuery::explain`], [`CompiledQuery::to_dot`]),
//! and the det-states that an evaluation has materialised so far
//! ([`crate::Runtime::explain_cache`], [`crate::Runtime::det_states_dot`]).
//!
//! Everything here runs on demand and only reads the compiled query and the
//! determinization cache: the evaluation's hot path is untouched.

mod cache;
mod dot;
mod formula;
mod labels;
mod text;

pub use labels::{AutomatonView, StateView, TransitionView};

use crate::query::CompiledQuery;

impl CompiledQuery {
    /// A readable account of what the compiler made of this query (reference §5):
    /// the formula after filter push-down, with each filter attached to its event
    /// type; the predicates of each type with their bit index; the automaton's
    /// states and transitions, labelled with the event type and filters each
    /// transition reads, its `AS` variables and its output mark; the window,
    /// partitioning, strategy, consumption and limit; and the static warnings.
    ///
    /// The layout is for reading, not for parsing: use [`CompiledQuery::automaton_view`]
    /// or [`CompiledQuery::facts`] for data.
    pub fn explain(&self) -> String {
        text::explain(self)
    }

    /// The automaton in Graphviz DOT: one node `qN` per state (the initial one
    /// entered by an arrow from a point, final ones doubly circled), one edge per
    /// transition labelled with the event type and filters it reads and its `AS`
    /// variables. Solid edges are output-marked (the event read joins the complex
    /// event), dashed ones are not (skip loops, `NOT`, captures the `SELECT` list
    /// leaves out). Render it with `dot -Tsvg`.
    pub fn to_dot(&self) -> String {
        dot::automaton(&self.automaton_view())
    }

    /// The automaton as data: its states and its transitions with the labels
    /// [`CompiledQuery::explain`] and [`CompiledQuery::to_dot`] show.
    pub fn automaton_view(&self) -> AutomatonView {
        labels::automaton_view(self)
    }

    /// The formula after filter push-down (reference §5.2), in CEQL syntax, with
    /// every filter attached to the event types it tests: `(A ; B) FILTER A[x > 1]`
    /// reads `A[x > 1] ; B`.
    pub fn normalized_formula(&self) -> String {
        formula::normalized(self)
    }
}

#[cfg(test)]
mod tests;
