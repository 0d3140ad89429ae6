//! Which events can change what an automaton accepts (docs/language.md#s5-7).
//!
//! Why: a distribution layer that knows the events of some types leave every run
//! where it is can drop them before it moves data (Spark's shuffle and sort). Most
//! streams carry many types a pattern never names; `HOT ; COLD` over a stream of
//! sensor readings has no use for `WARM` or `OTHER`, and dropping them early saves
//! the whole cost of carrying them to the engine.
//!
//! A guard accepts an event of a type none of its terms name exactly when it is
//! negated (`TRUE`, `NOT(...)`): every type the automaton does not name meets the
//! same transitions. Those events are **inert** when, in every state, they can only
//! stay put without binding or marking anything:
//!
//! * no transition leaving `q0` accepts them (no run starts on one);
//! * every other non-final state has a transition that accepts them, and every such
//!   transition is a self-loop that binds no variable and carries neither mark (the
//!   run neither moves, nor dies, nor is compared by a strategy because of them).
//!
//! Then a run over the stream and a run over the stream without those events reach
//! the same states with the same marks, so the complex events ending at each event
//! are the same. (The determinized automaton's states change a little: a det-state
//! holding a final state loses it on any event, since final states have no
//! transitions. That reorders the table of live det-states, and with it the order
//! in which the complex events of one end are enumerated; hence no `LIMIT`, see
//! `QueryFacts::relevant_types`.) Contiguity (`:`, `STRICT`) fails the second
//! condition, since there the run dies on any other event.

use super::Cea;
use crate::schema::TypeId;
use std::collections::BTreeSet;

impl Cea {
    /// The event types some guard names (the trailing absence's included).
    pub fn named_types(&self) -> BTreeSet<TypeId> {
        self.guards.iter().chain(&self.trailing).flat_map(|g| g.terms.iter().map(|t| t.ty)).collect()
    }

    /// Whether events of types no guard names are inert (see the module
    /// documentation): dropping them changes no run of the automaton.
    pub fn unnamed_types_inert(&self) -> bool {
        let accepts_unnamed = |t: &super::Transition| self.guards[t.guard as usize].negated;
        self.out.iter().enumerate().all(|(q, trs)| {
            let mut accepting = trs.iter().filter(|t| accepts_unnamed(t)).peekable();
            if q == 0 {
                return accepting.peek().is_none();
            }
            if self.finals[q] {
                return true; // C3: no transition leaves a final state
            }
            accepting.peek().is_some()
                && accepting
                    .all(|t| t.target as usize == q && !t.marked && !t.compared && t.label == 0 && t.vars.is_empty())
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::query::{CompileOptions, CompiledQuery};

    fn relevant(pattern: &str) -> Option<Vec<String>> {
        let text = format!("SELECT * FROM S WHERE {pattern}");
        CompiledQuery::compile(&text, None, CompileOptions::default()).expect("query compiles").facts().relevant_types
    }

    #[test]
    fn skip_loops_make_unnamed_types_irrelevant() {
        assert_eq!(relevant("A ; B+ ; C"), Some(vec!["A".into(), "B".into(), "C".into()]));
        assert_eq!(relevant("A ; ABSENT(X) ; B"), Some(vec!["A".into(), "B".into(), "X".into()]));
    }

    #[test]
    fn contiguity_and_any_type_events_keep_every_type() {
        assert_eq!(relevant("A : B"), None); // the run dies on an event between
        assert_eq!(relevant("A ; B:+ ; C"), None);
        assert_eq!(relevant("A ; NOT(X) ; B"), None); // NOT(X) reads any other type
        assert_eq!(relevant("NOT(X) ; B"), None); // and a run starts on it
        assert_eq!(relevant("A ; B LIMIT 1"), None); // which match LIMIT keeps follows the order
    }
}
