//! The product automaton of a conjunction `ψ1 AND ψ2` (docs/language.md#s3-3c, #s5-4).
//!
//! Each side `k` is *before* (not started), *in* a state of `Qk ∖ (Ik ∪ Fk)`, or *done*.
//! On an event, a side moves: before, it stays (`TRUE`, `∅`) or takes a transition leaving
//! `Ik`; in `q`, it takes a transition of `q`; done, it stays (`TRUE`, `∅`); a move into
//! `Fk` lands in *done*. A product transition is one move of each side, with guard
//! `g1 ∧ g2` and variables `L1 ∪ L2`, allowed only if `L1 = ∅` or `L2 = ∅`.
//!
//! Why this is the rule of docs/language.md#s3-3c. Every sub-automaton satisfies (C1) no
//! transition enters `Ik` and (C3) final states have no outgoing transitions, so a run of side `k` is in `Ik`
//! only before its first event and ends at the event that enters `Fk`: *before* and *done*
//! lose nothing. A run of the product from `i` to `j` therefore projects to one run of
//! each side, from `ik` to `jk`, with `min(i1, i2) = i` (the product leaves its initial
//! state exactly when the first side starts: both staying there is not a transition) and
//! `max(j1, j2) = j` (it enters its final state exactly when the second side is done).
//! Conversely, every such pair of runs whose marked events are disjoint is one run of the
//! product, in lockstep. The product marks event `t` with `L1 ∪ L2`, so its valuation is
//! `μ1 ∪ μ2`; forbidding two marking moves on one event is exactly `all(μ1) ∩ all(μ2) = ∅`
//! (a side's unmarked moves, `NOT` and skip loops, never conflict). Each side keeps its
//! own `TRUE` and `¬β` loops, so an `ABSENT` inside a side still reads exactly its gap.
//!
//! The result has a fresh initial state (both before) that nothing enters, one final state
//! (both done) without outgoing transitions, and no other final state: (C1)–(C3) hold, and
//! the product composes with every other construction. Its size is bounded by the product
//! of the sides' sizes; only the reachable pairs are built, and the construction stops
//! with `E0102` beyond [`MAX_TRANSITIONS`](super::build::MAX_TRANSITIONS) transitions.

use super::build::{Sub, Tr, G};
use super::guard::{Term, NEGATED};
use crate::bitset::BitSet;
use ceql_syntax::Span;
use std::collections::HashMap;

/// Where one side of the product is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Side {
    Before,
    In(u32),
    Done,
}

/// One move of a side on an event: its guard, its variables and where it lands.
struct Move {
    guard: G,
    vars: BitSet,
    to: Side,
    /// The idle move of `Before` (staying unstarted).
    stay: bool,
}

/// The moves of each position of one side, computed once.
struct Moves {
    before: Vec<Move>,
    done: Vec<Move>,
    inside: Vec<Vec<Move>>,
}

impl Moves {
    fn of(s: &Sub) -> Moves {
        let n = s.n as usize;
        let mut is_init = vec![false; n];
        s.init.iter().for_each(|&q| is_init[q as usize] = true);
        let mut is_fin = vec![false; n];
        s.fin.iter().for_each(|&q| is_fin[q as usize] = true);
        // States that cannot reach a final state (the left side's old finals after a `;`,
        // say) are left out: a move into one would only add dead pairs to the product.
        let live = super::build::coreachable(s);
        let land = |q: u32| if is_fin[q as usize] { Side::Done } else { Side::In(q) };
        let idle = |to| Move { guard: G::True, vars: BitSet::new(), to, stay: to == Side::Before };
        let mut before = vec![idle(Side::Before)];
        let mut inside: Vec<Vec<Move>> = (0..n).map(|_| Vec::new()).collect();
        for t in s.trans.iter().filter(|t| live[t.to as usize]) {
            let m = Move { guard: t.guard.clone(), vars: t.vars.clone(), to: land(t.to), stay: false };
            if is_init[t.from as usize] {
                before.push(m);
            } else {
                inside[t.from as usize].push(m);
            }
        }
        Moves { before, done: vec![idle(Side::Done)], inside }
    }

    fn at(&self, side: Side) -> &[Move] {
        match side {
            Side::Before => &self.before,
            Side::Done => &self.done,
            Side::In(q) => &self.inside[q as usize],
        }
    }
}

/// Why a product could not be built: more than `max_transitions` transitions.
pub(super) struct TooLarge;

/// Largest number of terms one conjoined guard may expand to (a term conjoined with a
/// `NOT` of terms with several literals is a disjunction, one term per literal it negates).
const MAX_TERMS_PER_GUARD: usize = 4096;

/// `a AND b`: the product described in the module documentation, all of whose states are
/// named by `span`.
pub(super) fn conjunction(a: &Sub, b: &Sub, span: Span, max_transitions: usize) -> Result<Sub, TooLarge> {
    let (ma, mb) = (Moves::of(a), Moves::of(b));
    const INIT: u32 = 0;
    const FINAL: u32 = 1;
    let mut ids: HashMap<(Side, Side), u32> = HashMap::new();
    ids.insert((Side::Before, Side::Before), INIT);
    let mut queue = vec![(Side::Before, Side::Before)];
    let mut trans: Vec<Tr> = Vec::new();
    let mut into_fin = Vec::new();
    let mut n = 2u32;
    while let Some((x, y)) = queue.pop() {
        let from = ids[&(x, y)];
        for m1 in ma.at(x) {
            for m2 in mb.at(y) {
                if (m1.stay && m2.stay) || (!m1.vars.is_empty() && !m2.vars.is_empty()) {
                    continue;
                }
                let guards = conjoin(&m1.guard, &m2.guard).ok_or(TooLarge)?;
                if guards.is_empty() {
                    continue;
                }
                let to = if (m1.to, m2.to) == (Side::Done, Side::Done) {
                    FINAL
                } else {
                    *ids.entry((m1.to, m2.to)).or_insert_with(|| {
                        queue.push((m1.to, m2.to));
                        n += 1;
                        n - 1
                    })
                };
                let mut vars = m1.vars.clone();
                vars.union_with(&m2.vars);
                for guard in guards {
                    if to == FINAL {
                        into_fin.push(trans.len());
                    }
                    trans.push(Tr { from, guard, vars: vars.clone(), to });
                }
                if trans.len() > max_transitions {
                    return Err(TooLarge);
                }
            }
        }
    }
    Ok(Sub { n, trans, init: vec![INIT], fin: vec![FINAL], into_fin, spans: vec![span; n as usize] })
}

/// `g1 ∧ g2` as a disjunction of guards (empty: unsatisfiable), or `None` when it would
/// expand to more than [`MAX_TERMS_PER_GUARD`] terms.
fn conjoin(g1: &G, g2: &G) -> Option<Vec<G>> {
    Some(match (g1, g2) {
        (G::True, g) | (g, G::True) => vec![g.clone()],
        // ¬(a1 ∨ …) ∧ ¬(b1 ∨ …) = ¬(a1 ∨ … ∨ b1 ∨ …)
        (G::Neg(a), G::Neg(b)) => {
            let mut terms = a.clone();
            terms.extend(b.iter().filter(|t| !a.contains(t)).cloned());
            vec![G::Neg(terms)]
        }
        (G::Pos(t), G::Neg(ns)) | (G::Neg(ns), G::Pos(t)) => and_not(t, ns)?.into_iter().map(G::Pos).collect(),
        // Two marking moves are never combined; kept total for safety.
        (G::Pos(s), G::Pos(t)) => {
            if s.ty != t.ty {
                return Some(Vec::new());
            }
            let mut m = s.clone();
            t.bits.iter().for_each(|&l| m.insert(l));
            if m.is_satisfiable() {
                vec![G::Pos(m)]
            } else {
                Vec::new()
            }
        }
    })
}

/// `t ∧ ¬n1 ∧ … ∧ ¬nk` as a disjunction of terms. A term `n` of another type than `t`'s
/// is false on `t`'s events, so `¬n` is true there and drops out. For one of the same
/// type, `¬n` is the disjunction of the complements of its literals; a partial term that
/// already contains one of them satisfies `¬n` as it is, and a complement that
/// contradicts the partial term is left out (when all are, the partial term is dropped).
fn and_not(t: &Term, ns: &[Term]) -> Option<Vec<Term>> {
    let mut terms = vec![t.clone()];
    for n in ns.iter().filter(|n| n.ty == t.ty) {
        let mut next: Vec<Term> = Vec::new();
        for cur in terms {
            if n.bits.iter().any(|&l| cur.has(l ^ NEGATED)) {
                next.push(cur);
                continue;
            }
            for &l in &n.bits {
                if cur.has(l) {
                    continue;
                }
                let mut c = cur.clone();
                c.insert(l ^ NEGATED);
                if !next.contains(&c) {
                    next.push(c);
                }
            }
        }
        if next.len() > MAX_TERMS_PER_GUARD {
            return None;
        }
        terms = next;
    }
    Some(terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(ty: u32, bits: &[u32]) -> Term {
        Term { ty, bits: bits.to_vec() }
    }

    #[test]
    fn a_term_and_not_of_its_own_type_gets_negative_literals() {
        // B[p0] ∧ ¬(B[p1]) = B[p0 ∧ ¬p1]
        assert_eq!(and_not(&term(1, &[0]), &[term(1, &[1])]), Some(vec![term(1, &[0, 1 | NEGATED])]));
        // B[p0] ∧ ¬(B[p0]) is unsatisfiable
        assert_eq!(and_not(&term(1, &[0]), &[term(1, &[0])]), Some(vec![]));
        // B ∧ ¬(A) = B: an A term is false on B events
        assert_eq!(and_not(&term(1, &[]), &[term(0, &[])]), Some(vec![term(1, &[])]));
        // B ∧ ¬(B[p0 ∧ p1]) = B[¬p0] ∨ B[¬p1]
        assert_eq!(
            and_not(&term(1, &[]), &[term(1, &[0, 1])]),
            Some(vec![term(1, &[NEGATED]), term(1, &[1 | NEGATED])])
        );
        // B[¬p0] ∧ ¬(B[p0 ∧ p1]) = B[¬p0]: already falsified, no split
        assert_eq!(and_not(&term(1, &[NEGATED]), &[term(1, &[0, 1])]), Some(vec![term(1, &[NEGATED])]));
        // B ∧ ¬B = FALSE
        assert_eq!(and_not(&term(1, &[]), &[term(1, &[])]), Some(vec![]));
    }
}
