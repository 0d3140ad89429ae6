//! Absences that read the match (docs/language.md#s3-3a), tested per valuation: the gap
//! between the patterns around the absence is found from the valuation's captures, and
//! each stored event of the gap, of an absent type and of the valuation's partition, is
//! tested against the absence's filters with its own variables holding that event and
//! the others those of the valuation. Cost: the length of the gap per valuation.

use super::compile::{GapIr, ResidualPlan};
use super::{ResidualError, Valuation, ValueStore};
use crate::analyze::VarId;
use crate::value::Value;

impl ResidualPlan {
    /// Whether some absence of the plan is violated in valuation `positions` (ascending)
    /// with internal capture labels `labels`, in the partition whose key is `key`
    /// ([`super::key_text`]).
    pub(crate) fn gaps_violated(
        &self,
        positions: &[u64],
        labels: &[u32],
        store: &ValueStore,
        key: &str,
    ) -> Result<bool, ResidualError> {
        for g in &self.gaps {
            if self.gap_violated(g, positions, labels, store, key)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn gap_violated(
        &self,
        g: &GapIr,
        positions: &[u64],
        labels: &[u32],
        store: &ValueStore,
        key: &str,
    ) -> Result<bool, ResidualError> {
        let last_left = (0..positions.len()).rev().find(|&i| g.left[labels[i] as usize]);
        let first_right = (0..positions.len()).find(|&i| g.right[labels[i] as usize]);
        let (Some(last_left), Some(first_right)) = (last_left, first_right) else {
            return Err(ResidualError {
                field: "ABSENT".into(),
                message: "internal: the gap of an absence was not found in a match".into(),
            });
        };
        let (lo, hi) = (positions[last_left], positions[first_right]);
        let n = self.stored_len();
        let mut with: Vec<u64> = Vec::with_capacity(positions.len() + 1);
        for row in store.rows_between(lo, hi) {
            let ty = match store.value(row, n) {
                Value::Int(t) => *t as crate::schema::TypeId,
                _ => continue,
            };
            let Some((_, own)) = g.own.iter().find(|(t, _)| *t == ty) else { continue };
            if !matches!(store.value(row, n + 1), Value::Str(k) if k.as_ref() == key) {
                continue; // another partition's event
            }
            // The valuation with the gap's event at its place: its own variables hold it,
            // the other variables what the valuation binds.
            let p = store.position(row);
            with.clear();
            with.extend(positions.iter().copied().filter(|&q| q < p));
            let at = with.len();
            with.push(p);
            with.extend(positions.iter().copied().filter(|&q| q > p));
            let captures = |i: usize, v: VarId| {
                if i == at {
                    own.contains(v)
                } else {
                    let j = if i < at { i } else { i - 1 };
                    self.captures(labels[j], v) && !own.contains(v)
                }
            };
            let valuation = Valuation { positions: &with, captures: &captures };
            let mut holds = true;
            for f in &g.filters {
                if !f.holds(&valuation, store)? {
                    holds = false;
                    break;
                }
            }
            if holds {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
