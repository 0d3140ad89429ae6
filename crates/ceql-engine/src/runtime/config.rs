//! What an evaluation fixes when it starts: the query, its options, the attribute
//! layout events are read in, and the facts of the query that every event needs.

use super::RuntimeOptions;
use crate::analyze::WindowPlan;
use crate::predicate::AttrSlot;
use crate::query::CompiledQuery;
use std::sync::Arc;

/// The immutable part of a [`super::Runtime`].
pub(crate) struct Config {
    pub(crate) query: Arc<CompiledQuery>,
    pub(crate) options: RuntimeOptions,
    /// Attribute names read per event, indexed by slot (the query's, then the
    /// time field when a duration window reads it).
    pub(crate) layout: Vec<String>,
    /// Slot of the time field in `layout`.
    pub(crate) time_slot: Option<AttrSlot>,
    /// Slot of the time field the reorder buffer reads (with `max_delay`).
    pub(crate) reorder_slot: Option<AttrSlot>,
    /// The time field's slot and nanoseconds per unit when every event type reads
    /// its time there (a duration window, no declared `primary_time`): the push's
    /// inline time coordinate (`Runtime::coordinate`); anything unusual about a
    /// value still goes through the general path.
    pub(crate) uniform_time: Option<(AttrSlot, i64)>,
    /// Facts of the query read on every event, copied out of the plan.
    pub(crate) facts: Facts,
    /// `max_state_bytes`, resolved.
    pub(crate) state_budget: usize,
    /// The trailing `ABSENT(β) FOR d`, if the query ends with one.
    pub(crate) deadline: Option<super::deadlines::Deadline>,
}

/// Per-event facts of the query, copied out of the plan so that the hot path does
/// not go through the shared query.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Facts {
    /// Window bound `ε` (`None`: unbounded).
    pub epsilon: Option<i64>,
    /// Windows on time stamps or attribute values.
    pub time_based: bool,
    /// `CONSUME BY` policy.
    pub consume: ceql_syntax::ast::ConsumePolicy,
    /// `LIMIT n`, or `u64::MAX`.
    pub limit: u64,
    /// Remove repeated complex events at each position.
    pub dedupe: bool,
    /// `PARTITION BY` present.
    pub partitioned: bool,
    /// Filters between events: values are stored per position and valuations tested.
    pub residual: bool,
    /// Absences that read the match (docs/language.md#s3-3a): every accepted event is
    /// stored with its type and partition, not only those that reach the automaton.
    pub every_row: bool,
    /// `time_based || every_row`: the push tests this once per accepted event.
    pub on_accept: bool,
}

impl Config {
    pub(crate) fn new(query: Arc<CompiledQuery>, options: RuntimeOptions) -> Config {
        let mut layout = query.attributes.clone();
        let time_slot = match (&query.plan.window, &options.time_field) {
            (WindowPlan::Duration(_), Some(f)) => Some(match layout.iter().position(|a| a == f) {
                Some(i) => i as AttrSlot,
                None => {
                    layout.push(f.clone());
                    (layout.len() - 1) as AttrSlot
                }
            }),
            _ => None,
        };
        let reorder_slot = super::reorder::reorder_slot(&mut layout, time_slot, &options);
        let facts = Facts {
            epsilon: query.plan.window.epsilon(),
            time_based: query.plan.window.is_time_based(),
            consume: query.plan.consume,
            limit: query.plan.limit.unwrap_or(u64::MAX),
            dedupe: query.dedupe_output,
            partitioned: query.is_partitioned(),
            residual: query.residual.is_some(),
            every_row: query.residual.as_ref().is_some_and(|r| !r.gaps.is_empty()),
            on_accept: false,
        };
        let facts = Facts { on_accept: facts.time_based || facts.every_row, ..facts };
        let state_budget = options.max_state_bytes.unwrap_or_else(crate::memory::default_state_budget);
        let deadline = match (&query.cea.trailing, &query.plan.trailing) {
            (Some(guard), Some((_, nanos))) => Some(super::deadlines::Deadline { guard: guard.clone(), nanos: *nanos }),
            _ => None,
        };
        let uniform_time = match time_slot {
            Some(slot) if query.primary_time.iter().all(Option::is_none) => Some((slot, options.time_unit_nanos)),
            _ => None,
        };
        Config { query, options, layout, time_slot, reorder_slot, uniform_time, facts, state_budget, deadline }
    }
}
