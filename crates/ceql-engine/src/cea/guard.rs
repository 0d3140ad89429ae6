//! Transition guards as boolean functions of an event class (docs/language.md#s5-3).

use crate::bitset;
use crate::schema::TypeId;

/// Flag of a negative literal in [`Term::bits`]: `b | NEGATED` requires predicate bit `b`
/// to be 0 (the predicate is FALSE or UNKNOWN on the event).
///
/// Why literals and not only positive bits: the product of a conjunction
/// (docs/language.md#s3-3c) conjoins an atom's term with the `NOT` guard of the other side,
/// `B[v > 1] ∧ ¬B[v > 5]`, which no disjunction of positive terms expresses. A bit
/// index is below 2^31 (a type has far fewer predicates), so the flag never collides.
pub const NEGATED: u32 = 1 << 31;

/// `type = ty ∧ ℓ1 ∧ ... ∧ ℓk`, each literal `ℓ` a predicate bit of `ty` that must be 1
/// (`b`) or 0 (`b | NEGATED`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Term {
    /// Event type the term accepts.
    pub ty: TypeId,
    /// Predicate literals of that type (sorted, distinct): the positive ones first, as
    /// plain bit indices, then the negative ones with [`NEGATED`] set. Only conjunctions
    /// create negative literals.
    pub bits: Vec<u32>,
}

impl Term {
    /// Whether an event of type `ty` with predicate bits `bits` satisfies the term.
    #[inline]
    pub fn matches(&self, ty: TypeId, bits: &[u64]) -> bool {
        self.ty == ty && self.bits.iter().all(|&l| bitset::test(bits, (l & !NEGATED) as usize) == (l & NEGATED == 0))
    }

    /// Whether some class satisfies the term: no bit is required both 1 and 0. (A filter
    /// pushed onto a product transition can require a bit that the conjoined `NOT` required
    /// to be 0; the construction drops such transitions.)
    pub fn is_satisfiable(&self) -> bool {
        let first_negative = self.bits.partition_point(|&l| l & NEGATED == 0);
        let (pos, neg) = self.bits.split_at(first_negative);
        !neg.iter().any(|&l| pos.binary_search(&(l & !NEGATED)).is_ok())
    }

    /// Adds literal `l` (keeping the order and distinctness of [`Term::bits`]).
    pub fn insert(&mut self, l: u32) {
        if let Err(i) = self.bits.binary_search(&l) {
            self.bits.insert(i, l);
        }
    }

    /// Whether the term contains literal `l`.
    pub fn has(&self, l: u32) -> bool {
        self.bits.binary_search(&l).is_ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_literals_require_a_zero_bit() {
        // B[p0] ∧ ¬B[p1]
        let t = Term { ty: 1, bits: vec![0, 1 | NEGATED] };
        assert!(t.matches(1, &[0b01]));
        assert!(!t.matches(1, &[0b11]));
        assert!(!t.matches(1, &[0b00]));
        assert!(!t.matches(0, &[0b01]));
        assert!(t.is_satisfiable());
        let mut u = t.clone();
        u.insert(1);
        assert_eq!(u.bits, vec![0, 1, 1 | NEGATED]);
        assert!(!u.is_satisfiable());
    }
}
