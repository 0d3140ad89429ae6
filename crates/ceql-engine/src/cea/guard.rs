//! Transition guards as boolean functions of an event class (docs/language.md#s5-3).

use crate::bitset;
use crate::schema::TypeId;

/// `type = ty ∧ P_b1 ∧ ... ∧ P_bk`, with `b` indices into the predicates of `ty`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Term {
    /// Event type the term accepts.
    pub ty: TypeId,
    /// Predicate bits of that type that must be TRUE (sorted, distinct).
    pub bits: Vec<u32>,
}

impl Term {
    /// Whether an event of type `ty` with predicate bits `bits` satisfies the term.
    #[inline]
    pub fn matches(&self, ty: TypeId, bits: &[u64]) -> bool {
        self.ty == ty && self.bits.iter().all(|&b| bitset::test(bits, b as usize))
    }
}

/// `negated XOR (t1 ∨ ... ∨ tn)`. `TRUE` is the negated empty disjunction; an atom
/// is one positive term; `NOT(...)` is the negation of its atom's terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    /// Complement the disjunction.
    pub negated: bool,
    /// The disjuncts.
    pub terms: Vec<Term>,
}

impl Guard {
    /// The guard that accepts every event.
    pub fn always() -> Guard {
        Guard { negated: true, terms: Vec::new() }
    }

    /// Evaluates the guard on an event class.
    pub fn matches(&self, ty: TypeId, bits: &[u64]) -> bool {
        self.negated != self.terms.iter().any(|t| t.matches(ty, bits))
    }
}
