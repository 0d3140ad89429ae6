//! The residual test of predicates between events (docs/design/correlation.md, section 3.2,
//! section 3.3): the filter conjuncts that read other events (`y.attr`, `PREV(attr)`,
//! aggregates) are left out of the automaton, which runs with captures on; each
//! valuation it enumerates is tested here, against the attribute values the runtime
//! keeps per position ([`ValueStore`]).
//!
//! Semantics (docs/design/correlation.md, section 2): a term `x[P]` holds iff `P` is TRUE for every event `k` of `μ(x)`
//! (every pair of consecutive events when `P` uses `PREV`) and every choice of one
//! event per variable read through `y.attr`; aggregates are functions of the whole
//! set `μ(y)`, computed once per valuation.
//!
//! Cost: update time is unchanged (one stored row per event); the delay is bounded by
//! the valuations of the unfiltered query ending at the position, times the product
//! of the sizes of the sets a term quantifies over.

mod aggregate;
mod compile;
mod gaps;
mod measures;
mod store;

pub(crate) use compile::{key_text, ResidualPlan};
pub(crate) use measures::measure_key;
pub(crate) use store::ValueStore;

use crate::analyze::VarId;
use crate::predicate::{eval_pred, PredIr};
use crate::value::{Value, ValueRef};
use ceql_syntax::ast::AggFunc;

/// A compiled residual filter: the `AND`/`OR` tree of its terms.
#[derive(Clone, Debug)]
pub(crate) enum FilterIr {
    /// `x[P]`.
    Term(Box<TermIr>),
    /// Both hold.
    And(Box<FilterIr>, Box<FilterIr>),
    /// One holds.
    Or(Box<FilterIr>, Box<FilterIr>),
    /// A filter inside an iteration (docs/language.md#s3-4c): it holds on every
    /// iteration, a valuation being cut before each position that the iteration marker
    /// (the variable) binds.
    PerIteration(VarId, Box<FilterIr>),
}

/// Where a virtual slot of a compiled term reads its value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    /// Stored attribute `i` of the anchor event `k ∈ μ(x)`.
    Own(usize),
    /// Stored attribute `i` of the event of `μ(x)` before the anchor.
    Prev(usize),
    /// Stored attribute `i` of the chosen event of the term's reference `r`.
    Ref(usize, usize),
    /// An aggregate over `μ(var)` (stored attribute `i`; none for `count`).
    Agg(AggFunc, VarId, Option<usize>),
}

/// One term `x[P]` with its predicate compiled over virtual slots.
#[derive(Clone, Debug)]
pub(crate) struct TermIr {
    /// The filtered variable.
    pub var: VarId,
    /// The predicate; slot `i` reads `sources[i]`.
    pub pred: PredIr,
    /// What each slot reads.
    pub sources: Vec<Source>,
    /// How each slot is written in the query (`price`, `a.price`, `PREV(price)`, `avg(b.price)`).
    pub names: Vec<String>,
    /// The variables read through `y.attr`, quantified over.
    pub refs: Vec<VarId>,
    /// `P` uses `PREV`: anchors are consecutive pairs.
    pub prev: bool,
}

/// One valuation: positions ascending and the variable sets that captured each.
pub(crate) struct Valuation<'a> {
    /// Data positions, ascending.
    pub positions: &'a [u64],
    /// `vars[i]`: whether variable `v` captured `positions[i]` is `captures(i, v)`.
    pub captures: &'a dyn Fn(usize, VarId) -> bool,
}

impl Valuation<'_> {
    /// `μ(v)`, ascending.
    pub(crate) fn positions_of(&self, v: VarId) -> Vec<u64> {
        (0..self.positions.len()).filter(|&i| (self.captures)(i, v)).map(|i| self.positions[i]).collect()
    }
}

/// A run-time type error between events: the slots the term reads and the message.
#[derive(Clone, Debug)]
pub(crate) struct ResidualError {
    /// The field blamed first (`a.v`, `sum(b.v)`).
    pub field: String,
    /// What went wrong, naming every field the term reads.
    pub message: String,
}

impl FilterIr {
    /// Whether a FALSE on some of a valuation's positions stays FALSE on every
    /// valuation with more positions: true unless an aggregate is involved (the
    /// for-all of a term only gains anchors and choices; `PREV` pairs among later
    /// positions stay consecutive when earlier ones are added).
    pub(crate) fn prunable(&self) -> bool {
        match self {
            FilterIr::Term(t) => !t.sources.iter().any(|s| matches!(s, Source::Agg(..))),
            FilterIr::And(a, b) | FilterIr::Or(a, b) => a.prunable() && b.prunable(),
            // A suffix of a valuation cuts into a suffix of an iteration (before its first
            // marker) and whole iterations: FALSE on one of them stays FALSE.
            FilterIr::PerIteration(_, f) => f.prunable(),
        }
    }

    /// Whether valuation `v` satisfies the filter.
    pub(crate) fn holds(&self, v: &Valuation<'_>, store: &ValueStore) -> Result<bool, ResidualError> {
        Ok(match self {
            FilterIr::Term(t) => t.holds(v, store)?,
            FilterIr::And(a, b) => a.holds(v, store)? && b.holds(v, store)?,
            FilterIr::Or(a, b) => a.holds(v, store)? || b.holds(v, store)?,
            FilterIr::PerIteration(marker, f) => {
                // The positions before the first marker are outside the iteration (or, for
                // a suffix during pruning, the end of an iteration): a part of their own.
                let mut start = 0;
                for end in 1..=v.positions.len() {
                    if end < v.positions.len() && !(v.captures)(end, *marker) {
                        continue;
                    }
                    let captures = |i: usize, x: VarId| (v.captures)(start + i, x);
                    let part = Valuation { positions: &v.positions[start..end], captures: &captures };
                    if !f.holds(&part, store)? {
                        return Ok(false);
                    }
                    start = end;
                }
                true
            }
        })
    }
}

impl TermIr {
    /// The for-all of the design's section 2 over the anchors and the choices of referenced events.
    fn holds(&self, v: &Valuation<'_>, store: &ValueStore) -> Result<bool, ResidualError> {
        let xs = v.positions_of(self.var);
        let anchors: Vec<(u64, Option<u64>)> = if self.prev {
            xs.windows(2).map(|w| (w[1], Some(w[0]))).collect()
        } else {
            xs.iter().map(|&k| (k, None)).collect()
        };
        if anchors.is_empty() {
            return Ok(true);
        }
        let domains: Vec<Vec<u64>> = self.refs.iter().map(|&y| v.positions_of(y)).collect();
        if domains.iter().any(Vec::is_empty) {
            return Ok(true);
        }
        // Aggregates: once per valuation.
        let mut aggregates: Vec<Option<Value>> = vec![None; self.sources.len()];
        for (i, s) in self.sources.iter().enumerate() {
            if let Source::Agg(func, var, attr) = s {
                let ps = v.positions_of(*var);
                aggregates[i] = Some(aggregate::compute(*func, &ps, *attr, store).map_err(|m| ResidualError {
                    field: self.names[i].clone(),
                    message: format!("{m} ({}, in a filter of the match ending at this event)", self.names[i]),
                })?);
            }
        }
        let mut choice = vec![0usize; domains.len()];
        let mut row: Vec<ValueRef<'_>> = vec![ValueRef::Null; self.sources.len()];
        for &(k, prev) in &anchors {
            choice.iter_mut().for_each(|c| *c = 0);
            loop {
                for (i, s) in self.sources.iter().enumerate() {
                    row[i] = match s {
                        Source::Own(a) => store.get(k, *a),
                        Source::Prev(a) => store.get(prev.expect("PREV terms anchor on pairs"), *a),
                        Source::Ref(r, a) => store.get(domains[*r][choice[*r]], *a),
                        Source::Agg(..) => aggregates[i].as_ref().map_or(ValueRef::Null, Value::as_ref),
                    };
                }
                match eval_pred(&self.pred, row.as_slice()) {
                    Ok(Some(true)) => {}
                    Ok(_) => return Ok(false),
                    Err(m) => {
                        let field = m.slot.map_or_else(|| self.names.join(", "), |s| self.names[s as usize].clone());
                        return Err(ResidualError {
                            field,
                            message: format!(
                                "{} (between {}, in a filter of the match ending at this event)",
                                m.message,
                                self.names.join(" and ")
                            ),
                        });
                    }
                }
                // Next choice (odometer).
                let mut i = 0;
                while i < choice.len() {
                    choice[i] += 1;
                    if choice[i] < domains[i].len() {
                        break;
                    }
                    choice[i] = 0;
                    i += 1;
                }
                if i == choice.len() {
                    break;
                }
            }
        }
        Ok(true)
    }
}
