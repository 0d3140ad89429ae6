//! Capture labels (docs/language.md#s3-2a): the projected variable set of each
//! output-marking transition, interned to a small id.
//!
//! With captures on, the determinization splits marked successors by label
//! instead of by the output mark alone (docs/language.md#s5-6), and every output
//! node records its label next to its position (docs/language.md#s6-2).

use super::Cea;
use crate::analyze::{Projection, VarId, Variables};

/// Largest label id: labels live in the top bits of a node's position word
/// (see [`LABEL_SHIFT`]).
pub const MAX_LABELS: usize = 1 << (64 - LABEL_SHIFT);

/// Bit of a node's position word where its label starts. Positions stay below
/// 2^48 while captures are on (the runtime refuses an event beyond that).
pub const LABEL_SHIFT: u32 = 48;

/// The positions part of a node's position word.
pub const POSITION_MASK: u64 = (1 << LABEL_SHIFT) - 1;

/// The variable sets that output-marking transitions capture, after projection.
/// Id 0 is the empty set: the label of every non-marking transition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureLabels {
    sets: Vec<Vec<VarId>>,
}

impl CaptureLabels {
    /// The variables of label `l`, ascending.
    pub fn vars(&self, l: u32) -> &[VarId] {
        &self.sets[l as usize]
    }

    /// Number of labels (the empty one included).
    pub(crate) fn len(&self) -> usize {
        self.sets.len()
    }
}

/// Sets the `label` of every transition of `cea`: the id of the reported
/// variables of `L ∩ SELECT` (`L` for `SELECT *`, `∅` for `SELECT NONE`; see
/// [`Variables::is_reported`]); a transition is output-marked iff its label is
/// not 0. Returns the labels, in order of first use.
pub fn assign_labels(cea: &mut Cea, projection: &Projection, variables: &Variables) -> CaptureLabels {
    let mut labels = CaptureLabels { sets: vec![Vec::new()] };
    for t in cea.out.iter_mut().flatten() {
        let kept: Vec<VarId> = (0..variables.len())
            .filter(|&v| {
                // Iteration markers are labelled too (they only exist when every variable is:
                // filters tested per valuation, docs/language.md#s3-4c), then projected away.
                t.vars.contains(v)
                    && (variables.is_reported(v) || variables.is_marker(v))
                    && match projection {
                        Projection::All => true,
                        Projection::Nothing => false,
                        Projection::Vars(sel) => sel.contains(v),
                    }
            })
            .collect();
        debug_assert_eq!(kept.is_empty(), !t.marked, "marked iff the projected variable set is not empty");
        t.label = match labels.sets.iter().position(|s| *s == kept) {
            Some(i) => i as u32,
            None => {
                labels.sets.push(kept);
                (labels.sets.len() - 1) as u32
            }
        };
    }
    labels
}

impl CaptureLabels {
    /// The labels after `projection` (reported variables of `L ∩ SELECT`), and the
    /// projected label of each of these labels (0 when nothing of it is kept). Used
    /// when the automaton runs with every variable captured internally (residual
    /// filters) and the output is projected afterwards.
    pub(crate) fn project(&self, projection: &Projection, variables: &Variables) -> (CaptureLabels, Vec<u32>) {
        let mut out = CaptureLabels { sets: vec![Vec::new()] };
        let map = self
            .sets
            .iter()
            .map(|set| {
                let kept: Vec<VarId> = set
                    .iter()
                    .copied()
                    .filter(|&v| {
                        variables.is_reported(v)
                            && match projection {
                                Projection::All => true,
                                Projection::Nothing => false,
                                Projection::Vars(sel) => sel.contains(v),
                            }
                    })
                    .collect();
                match out.sets.iter().position(|s| *s == kept) {
                    Some(i) => i as u32,
                    None => {
                        out.sets.push(kept);
                        (out.sets.len() - 1) as u32
                    }
                }
            })
            .collect();
        (out, map)
    }
}
