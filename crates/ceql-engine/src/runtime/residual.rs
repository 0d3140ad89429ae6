//! OUTPUT with filters between events (docs/design/correlation.md, section 3.2) or
//! measures (docs/language.md#s3-5a): the valuations of the final det-states are
//! enumerated with their capture labels, one at a time, tested against the residual
//! filters, their measures computed, projected as the user asked, and appended without
//! repeats (captures off: equal complex events with equal measures are one output), up
//! to LIMIT. Memory: one valuation, plus the set of distinct outputs at this position.

use super::partition::Entry;
use super::Runtime;
use crate::output::{MatchBuffer, Position};
use crate::predicate::Row;
use crate::residual::Valuation;
use crate::schema::TypeId;
use std::collections::HashSet;

/// What tells two outputs of one position apart, in one allocation: the start, the
/// number of projected positions, the positions, their capture labels (captures on),
/// and the measures' canonical bytes, eight to a word.
type OutputKey = Vec<u64>;

impl Runtime {
    /// Keeps the attribute values the residual filters read for the event at
    /// `position`, after forgetting those no future output can contain (the rows
    /// before [`Runtime::horizon`]: the store is trimmed with the window).
    #[inline(never)]
    pub(super) fn store_values<R: Row + ?Sized>(&mut self, ty: TypeId, row: &R, position: u64) {
        // The position is committed, so `horizon` speaks for the next event; this
        // event's outputs may start one position earlier (`WITHIN n EVENTS`).
        let horizon = self.horizon().saturating_sub(1);
        self.state.values.trim(horizon);
        if ty == crate::det::OTHER_TYPE {
            return; // never captured
        }
        let plan = self.config.query.residual.as_ref().expect("a residual query");
        self.state.values.push(position, plan.row(ty, row));
    }

    /// OUTPUT for a query with residual filters; returns whether some valuation passed.
    /// The valuations are tested one at a time as the enumerator produces them. A type
    /// error between events stops the test; the push reports it.
    #[inline(never)]
    pub(super) fn emit_tested<P: Position>(
        &mut self,
        next: &[Entry],
        position: u64,
        tau: i64,
        out: &mut MatchBuffer<P>,
    ) -> bool {
        let plan = self.config.query.residual.clone().expect("a residual query");
        let mut one = std::mem::take(&mut self.scratch.candidates);
        let mut enumerator = std::mem::take(&mut self.scratch.enumerator);
        let user_captures = self.config.options.captures;
        let store_output = self.config.options.enumerate;
        let mut left = self.config.facts.limit;
        let mut seen: HashSet<OutputKey> = HashSet::new();
        let mut measures: Vec<crate::value::Value> = Vec::new();
        let mut measure_key: Vec<u8> = Vec::new();
        let mut key: OutputKey = Vec::new();
        let mut scratch: Vec<u64> = Vec::new();
        let mut any = false;
        let mut error = None;
        let (mut kept, mut kept_labels) = (Vec::new(), Vec::new());
        let values = &self.state.values;
        let mut each = |c: &MatchBuffer<u64>| -> bool {
            let m = c.get(0);
            let labels = m.labels;
            let captures = |i: usize, v: crate::analyze::VarId| plan.captures(labels[i], v);
            let valuation = Valuation { positions: m.positions, captures: &captures };
            for f in &plan.filters {
                match f.holds(&valuation, values) {
                    Ok(true) => {}
                    Ok(false) => return true,
                    Err(e) => {
                        error = Some(e);
                        return false;
                    }
                }
            }
            any = true;
            if !store_output || left == 0 {
                // Without output (or past LIMIT), one passing valuation is all CONSUME BY needs.
                return false;
            }
            // The user's projection (and captures, if asked for).
            kept.clear();
            kept_labels.clear();
            for (i, &p) in m.positions.iter().enumerate() {
                let l = plan.to_user[labels[i] as usize];
                if l != 0 {
                    kept.push(p);
                    kept_labels.push(if user_captures { l } else { 0 });
                }
            }
            if !plan.measures.is_empty() {
                if let Err(e) = plan.measure_values(&valuation, values, &mut measures, &mut scratch) {
                    error = Some(e);
                    return false;
                }
                measure_key.clear();
                measures.iter().for_each(|v| crate::residual::measure_key(v, &mut measure_key));
            }
            key.clear();
            key.extend([m.start, kept.len() as u64]);
            key.extend_from_slice(&kept);
            if user_captures {
                key.extend(kept_labels.iter().map(|&l| l as u64));
            }
            key.extend(measure_key.chunks(8).map(|c| c.iter().fold(0u64, |w, &b| w << 8 | b as u64)));
            if seen.contains(&key) {
                return true;
            }
            seen.insert(key.clone());
            if !out.begin(m.start, position) || !out.push_measures(&measures) {
                return false;
            }
            for (&p, &l) in kept.iter().zip(&kept_labels) {
                let ok = if user_captures {
                    out.push_labelled_position(p | (l as u64) << crate::cea::LABEL_SHIFT)
                } else {
                    out.push_position(p)
                };
                if !ok {
                    return false;
                }
            }
            out.finish();
            left -= 1;
            true
        };
        // Pruning: a conjunct without aggregates that fails on the positions enumerated
        // so far (a suffix of the valuation) fails on the whole valuation.
        let prunable: Vec<&crate::residual::FilterIr> = plan.filters.iter().filter(|f| f.prunable()).collect();
        let mut words: Vec<u64> = Vec::new();
        let mut keep = |partial: &[u64]| -> bool {
            words.clear();
            words.extend(partial.iter().map(|w| w & crate::cea::POSITION_MASK));
            let captures =
                |i: usize, v: crate::analyze::VarId| plan.captures((partial[i] >> crate::cea::LABEL_SHIFT) as u32, v);
            let valuation = Valuation { positions: &words, captures: &captures };
            // An error is left to the test of the whole valuation, which reports it.
            prunable.iter().all(|f| f.holds(&valuation, values).unwrap_or(true))
        };
        'entries: for e in next {
            if !self.state.cache.is_final(e.det) || e.head_max() < tau {
                continue;
            }
            for &item in &e.ul {
                if !enumerator.for_each_valuation(
                    &self.state.arena,
                    item,
                    position,
                    tau,
                    &mut one,
                    if prunable.is_empty() { None } else { Some(&mut keep) },
                    &mut each,
                ) {
                    break 'entries;
                }
            }
        }
        self.scratch.residual_error = error;
        self.scratch.candidates = one;
        self.scratch.enumerator = enumerator;
        any
    }
}
