//! Complex event automata (docs/language.md#s5-4): states, guarded transitions with
//! variable sets and output marks.

mod build;
#[cfg(test)]
mod construction_tests;
mod guard;
mod labels;
mod product;
mod relevance;

pub use build::{build_cea, PredTable};
pub use guard::{Guard, Term, NEGATED};
pub use labels::{assign_labels, CaptureLabels, LABEL_SHIFT, MAX_LABELS, POSITION_MASK};

use crate::bitset::BitSet;

/// Index of an automaton state. State 0 is the initial state `q0`.
pub type StateId = u32;

/// A transition `(p, g, L, q)` with its marks.
#[derive(Clone, Debug)]
pub struct Transition {
    /// Index of the guard in [`Cea::guards`].
    pub guard: u32,
    /// Variables bound by reading the event (`L`); empty for `TRUE` loops and `NOT`.
    pub vars: BitSet,
    /// Target state.
    pub target: StateId,
    /// Output mark `o`: the event belongs to the projected complex event.
    pub marked: bool,
    /// Comparison mark `c` of docs/language.md#s5-5 (`L ≠ ∅` or leaving `q0`), used by the strategies.
    pub compared: bool,
    /// Capture label: id of the projected variable set `L ∩ SELECT` (0 iff not
    /// output-marked; see [`assign_labels`]).
    pub label: u32,
}

/// An ε-free CEA with a single initial state `q0 = 0` that no transition enters
/// (C1), and final states without outgoing transitions (C3).
#[derive(Clone, Debug)]
pub struct Cea {
    /// Number of states.
    pub num_states: usize,
    /// `finals[q]` iff `q` is final.
    pub finals: Vec<bool>,
    /// Outgoing transitions per state.
    pub out: Vec<Vec<Transition>>,
    /// Distinct guards.
    pub guards: Vec<Guard>,
    /// Per state: the span of the query construct that created it (an atom, `NOT`,
    /// an iteration, or the whole formula for `q0`).
    pub state_spans: Vec<ceql_syntax::Span>,
    /// The event condition `β` of a trailing `ABSENT(β) FOR d` (docs/language.md#s3-3b), read
    /// by the runtime's deadline queue, not by the automaton.
    pub trailing: Option<Guard>,
}

impl Cea {
    /// Number of transitions.
    pub fn num_transitions(&self) -> usize {
        self.out.iter().map(Vec::len).sum()
    }
}
