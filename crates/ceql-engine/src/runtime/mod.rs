//! The evaluator: Algorithm 1 of [CORE] over the lazily determinized CEA, with
//! partitions, windows, consumption and limits (reference §6).

mod budget;
mod clock;
mod in_place;
mod ingest;
#[cfg(test)]
mod narrow_output_tests;
mod partition;
mod snapshot;
mod step;

pub(crate) use budget::BUDGET_CHECK_ROWS;
pub use ingest::Target;
pub use partition::{Entry, Partition, PartitionId, Partitions};
pub use snapshot::{SnapshotError, SNAPSHOT_VERSION};

use crate::analyze::WindowPlan;
use crate::det::{CacheConfig, CacheStats, DetCache};
use crate::enumerate::Enumerator;
use crate::error::EventError;
use crate::output::{MatchBuffer, Position};
use crate::predicate::{AttrSlot, Row};
use crate::query::CompiledQuery;
use crate::tecs::{Arena, UnionList};
use ingest::Outcome;
use std::sync::Arc;

/// Predicate results computed column-wise for a batch (see
/// [`crate::predicate::columnar`]): for each type, each predicate's results, or
/// `None` when it is evaluated row by row.
pub(crate) struct Precomputed<'a> {
    pub per_type: &'a [Vec<Option<crate::predicate::columnar::Tri>>],
    /// Row of the batch.
    pub row: usize,
    /// Per attribute slot: the column's type fits every declaration of it.
    pub declared_ok: &'a [bool],
}

/// What to do with an event whose time stamp is smaller than an earlier one, under
/// a duration window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LatePolicy {
    /// Reject it with an [`EventError`] (default: input must be in time order).
    #[default]
    Error,
    /// Drop it and count it, as reference §3.7 does for attribute windows.
    Drop,
}

/// Options of one evaluation.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// Attribute holding the event time stamp (reference §1.4), for duration windows
    /// when the event type declares no `primary_time`.
    pub time_field: Option<String>,
    /// Nanoseconds per unit of a numeric `time_field` value (1 for ns, 10^9 for s).
    pub time_unit_nanos: i64,
    /// Out-of-order time stamps under a duration window.
    pub late_time_stamps: LatePolicy,
    /// Enumerate complex events (off: only update, for benchmarks; consumption still works).
    pub enumerate: bool,
    /// Determinization cache budget.
    pub cache: CacheConfig,
    /// Budget of the whole state (cache, tECS arena, partitions) in bytes; `None`
    /// is [`crate::memory::default_state_budget`]. See `runtime/budget.rs`.
    pub max_state_bytes: Option<usize>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            time_field: None,
            time_unit_nanos: 1,
            late_time_stamps: LatePolicy::Error,
            enumerate: true,
            cache: CacheConfig::default(),
            max_state_bytes: None,
        }
    }
}

/// Counters of one evaluation.
#[derive(Clone, Copy, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RuntimeStats {
    /// Events pushed (every position; equal to the next position).
    pub events: u64,
    /// Events that reached a partition.
    pub accepted: u64,
    /// Complex events emitted.
    pub matches: u64,
    /// Events dropped as late (time-based windows).
    pub late: u64,
    /// Events without a partition key.
    pub no_key: u64,
    /// Events of streams outside `FROM`.
    pub skipped: u64,
    /// Partitions created.
    pub partitions_created: u64,
}

/// A snapshot of the counters and sizes of an evaluation.
#[derive(Clone, Copy, Debug)]
pub struct Statistics {
    /// Event counters.
    pub runtime: RuntimeStats,
    /// Determinization cache counters.
    pub cache: CacheStats,
    /// Det-states currently interned.
    pub det_states: usize,
    /// Bytes held by the determinization cache.
    pub cache_bytes: usize,
    /// Live partitions.
    pub partitions: usize,
    /// tECS nodes currently stored.
    pub live_nodes: u64,
    /// Bytes held by the node arena.
    pub arena_bytes: usize,
}

/// One evaluation of a compiled query over an unbounded input.
pub struct Runtime {
    pub(crate) query: Arc<CompiledQuery>,
    pub(crate) options: RuntimeOptions,
    /// Attribute names read per event, indexed by slot.
    pub(crate) layout: Vec<String>,
    pub(crate) time_slot: Option<AttrSlot>,
    pub(crate) cache: DetCache,
    pub(crate) arena: Arena,
    pub(crate) partitions: Partitions,
    pub(crate) enumerator: Enumerator,
    /// Recycled union-list buffers.
    pub(crate) pool: Vec<UnionList>,
    /// The `T'` being built (buffer swapped with the partition's table).
    pub(crate) next_table: Vec<Entry>,
    /// `slot_of[det]` = index in `next_table` when `stamp_of[det] == stamp`.
    pub(crate) slot_of: Vec<u32>,
    pub(crate) stamp_of: Vec<u32>,
    pub(crate) stamp: u32,
    /// [`Partition::dets`] of the `T'` being rebuilt: the bits of the det-states
    /// given a slot since the last `begin_table`.
    pub(crate) next_dets: u64,
    pub(crate) bits: Vec<u64>,
    pub(crate) key_buf: Vec<u8>,
    /// Next position.
    pub(crate) position: u64,
    /// Largest window coordinate accepted so far (`max_w_seen`).
    pub(crate) max_w: i64,
    /// Global `CONSUME BY ANY` epoch.
    pub(crate) reset_epoch: u64,
    pub(crate) stats: RuntimeStats,
    /// Time-based windows: the first position of each distinct coordinate still
    /// inside the window (for [`Runtime::horizon`]).
    pub(crate) coordinate_marks: std::collections::VecDeque<(i64, u64)>,
    /// Facts of the query read on every event, copied out of the plan.
    pub(crate) facts: Facts,
    /// Scratch output for deduplication when the caller only counts.
    pub(crate) dedupe_scratch: MatchBuffer,
    /// Per type (last: unknown types): (cache clears + 1 when cached, class) for
    /// types whose class does not depend on the event; `u64::MAX` otherwise.
    pub(crate) fixed_classes: Vec<(u64, crate::det::ClassId)>,
    /// In-place update scratch: (index in `T`, target) of each marking entry.
    pub(crate) marking: in_place::Marking,
    /// In-place update scratch: indices in `T` of the entries whose runs end.
    pub(crate) dying: Vec<usize>,
    /// In-place update scratch: (target, node) of each new node.
    pub(crate) landing: in_place::Landing,
    /// `max_state_bytes`, resolved.
    pub(crate) state_budget: usize,
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
}

impl Runtime {
    /// A fresh evaluation of `query`.
    pub fn new(query: Arc<CompiledQuery>, options: RuntimeOptions) -> Runtime {
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
        let cache = DetCache::new(query.cea.clone(), query.strategy, &query.preds_per_type(), options.cache);
        let partitions = Partitions::new(query.is_partitioned());
        Runtime {
            layout,
            time_slot,
            cache,
            arena: Arena::new(),
            partitions,
            enumerator: Enumerator::default(),
            pool: Vec::new(),
            next_table: Vec::new(),
            slot_of: Vec::new(),
            stamp_of: Vec::new(),
            stamp: 0,
            next_dets: 0,
            bits: Vec::new(),
            key_buf: Vec::new(),
            position: 0,
            max_w: i64::MIN,
            reset_epoch: 0,
            stats: RuntimeStats::default(),
            coordinate_marks: std::collections::VecDeque::new(),
            facts: Facts {
                epsilon: query.plan.window.epsilon(),
                time_based: query.plan.window.is_time_based(),
                consume: query.plan.consume,
                limit: query.plan.limit.unwrap_or(u64::MAX),
                dedupe: query.dedupe_output,
                partitioned: query.is_partitioned(),
            },
            dedupe_scratch: MatchBuffer::new(),
            marking: in_place::Marking::default(),
            dying: Vec::new(),
            landing: in_place::Landing::default(),
            state_budget: options.max_state_bytes.unwrap_or_else(crate::memory::default_state_budget),
            fixed_classes: (0..=query.preds.len())
                .map(|t| {
                    let plain =
                        t == query.preds.len() || (query.preds[t].is_empty() && query.declared_reads[t].is_empty());
                    (if plain { 0 } else { u64::MAX }, 0)
                })
                .collect(),
            options,
            query,
        }
    }

    /// The compiled query.
    pub fn query(&self) -> &Arc<CompiledQuery> {
        &self.query
    }

    /// Attribute names to supply with each event, in slot order (the `values` of
    /// [`Runtime::push`]). Includes the time field when a duration window uses it.
    pub fn attribute_names(&self) -> &[String] {
        &self.layout
    }

    /// Position the next event will get.
    pub fn next_position(&self) -> u64 {
        self.position
    }

    /// Options of this evaluation.
    pub fn options(&self) -> &RuntimeOptions {
        &self.options
    }

    /// Pushes one event: `values[i]` is the value of `attribute_names()[i]`.
    /// Complex events ending at this event are appended to `out`.
    pub fn push<P: Position>(
        &mut self,
        stream: Option<&str>,
        event_type: &str,
        values: &[crate::value::ValueRef<'_>],
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        let target = self
            .resolve_target(stream, event_type)
            .map_err(|(field, msg)| EventError::new(self.position, field, Some(event_type), msg))?;
        self.push_target(target, values, out).map_err(|mut e| {
            e.event_type = Some(event_type.to_string());
            e
        })
    }

    /// Pushes one event whose target was resolved with [`Runtime::resolve_target`]
    /// (lets columnar input resolve each distinct type name once).
    pub fn push_target<R: Row + ?Sized, P: Position>(
        &mut self,
        target: Target,
        row: &R,
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        self.check_state_budget()?;
        self.push_precomputed(target, row, None, out)
    }

    /// As [`Runtime::push_target`], with predicate results already computed for the
    /// batch the row belongs to.
    pub(crate) fn push_precomputed<R: Row + ?Sized, P: Position>(
        &mut self,
        target: Target,
        row: &R,
        pre: Option<&Precomputed<'_>>,
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        let position = self.position;
        // A narrow output cannot name this event (for u64 this is never true).
        if position > P::MAX {
            return Err(EventError::position_overflow(position, P::MAX));
        }
        let ty = match target {
            Target::Skip => {
                self.position += 1;
                self.stats.skipped += 1;
                if !self.facts.time_based {
                    self.max_w = position as i64;
                }
                self.reclaim();
                return Ok(());
            }
            Target::Type(t) => t,
        };
        let type_name = |rt: &Runtime| (ty != crate::det::OTHER_TYPE).then(|| rt.query.type_name(ty));
        let w = match self.coordinate(ty, row, position) {
            Ok(Outcome::Accept(w)) => w,
            Ok(Outcome::Late) => {
                self.position += 1;
                self.stats.late += 1;
                return Ok(());
            }
            Err((field, msg)) => return Err(EventError::new(position, field, type_name(self).as_deref(), msg)),
        };
        if !self.encode_key(ty, row) {
            self.position += 1;
            self.stats.no_key += 1;
            self.max_w = self.max_w.max(w);
            self.reclaim();
            return Ok(());
        }
        // Clear the determinization cache between events when it is over budget
        // (class ids are computed next and only live for this event).
        if self.cache.over_budget() {
            self.clear_cache()?;
        }
        let class = match self.fixed_class(ty) {
            Some(c) => c,
            None => {
                let words = self
                    .predicate_bits(ty, row, pre)
                    .map_err(|(field, msg)| EventError::new(position, field, type_name(self).as_deref(), msg))?;
                self.cache.class_of(ty, &self.bits[..words])
            }
        };
        // Committed: the event is accepted.
        self.position += 1;
        self.stats.accepted += 1;
        self.max_w = self.max_w.max(w);
        if self.facts.time_based && self.coordinate_marks.back().is_none_or(|&(last, _)| last < w) {
            self.coordinate_marks.push_back((w, position));
        }
        // Accepted coordinates never decrease, so `w` is now `max_w` and this is the
        // threshold of both the event and the reclamation after it.
        let tau = self.threshold(w);
        let pid = self.partitions.get_or_create(&self.key_buf, self.reset_epoch);
        if let Some(begun) = self.settle_idle(pid, class, w, tau) {
            self.on_event(pid, begun, class, position, w, tau, out);
        }
        self.reclaim_at(tau);
        if out.overflowed() {
            return Err(EventError::out_of_memory(position));
        }
        Ok(())
    }

    /// The threshold `τ` for the current coordinate: starts with `w < τ` are outside
    /// the window from now on.
    #[inline]
    pub(crate) fn threshold(&self, w: i64) -> i64 {
        match self.facts.epsilon {
            None => i64::MIN,
            Some(eps) => w.saturating_sub(eps),
        }
    }

    /// Frees tECS chunks and partitions that can no longer contribute (§6.7).
    #[inline(always)]
    fn reclaim(&mut self) {
        if self.facts.epsilon.is_none() || self.max_w == i64::MIN {
            return;
        }
        self.reclaim_at(self.threshold(self.max_w));
    }

    /// [`Runtime::reclaim`] when the threshold of `max_w` is known to be `tau`.
    #[inline(always)]
    fn reclaim_at(&mut self, tau: i64) {
        debug_assert!(self.max_w == i64::MIN || tau == self.threshold(self.max_w));
        // Most events free nothing: without partitions or time marks, that is one
        // comparison here instead of a call (unbounded windows have τ = i64::MIN).
        if self.arena.oldest_full_coordinate() >= tau && !self.facts.partitioned && !self.facts.time_based {
            return;
        }
        if self.facts.epsilon.is_some() {
            self.reclaim_below(tau);
        }
    }

    /// The work of [`Runtime::reclaim`] for the threshold `tau`.
    fn reclaim_below(&mut self, tau: i64) {
        if self.arena.oldest_full_coordinate() < tau {
            self.arena.expire(tau);
        }
        if self.facts.partitioned {
            self.partitions.evict_idle(tau, &mut self.pool);
        }
        if self.facts.time_based {
            while self.coordinate_marks.front().is_some_and(|&(w, _)| w < tau) {
                self.coordinate_marks.pop_front();
            }
        }
    }

    /// Lowest position that a complex event reported in the future can contain:
    /// a caller that keeps event payloads may forget everything before it.
    pub fn horizon(&self) -> u64 {
        match self.query.plan.window {
            WindowPlan::Unbounded => 0,
            // A future match ends at j' ≥ position and starts at ≥ j' − n.
            WindowPlan::Events(n) => self.position.saturating_sub(n as u64),
            // A future match starts at a coordinate ≥ τ of the current coordinate.
            _ => self.coordinate_marks.front().map_or(self.position, |&(_, p)| p),
        }
    }

    /// tECS nodes allocated since the start.
    pub fn arena_allocated(&self) -> u64 {
        self.arena.allocated()
    }

    /// Counters and sizes.
    pub fn statistics(&self) -> Statistics {
        Statistics {
            runtime: RuntimeStats {
                events: self.position,
                partitions_created: self.partitions.created(),
                ..self.stats
            },
            cache: self.cache.stats(),
            det_states: self.cache.num_states(),
            cache_bytes: self.cache.memory_bytes(),
            partitions: self.partitions.len(),
            live_nodes: self.arena.live_nodes(),
            arena_bytes: self.arena.memory_bytes(),
        }
    }
}
