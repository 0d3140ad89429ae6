//! The evaluator: Algorithm 1 of [CORE] over the lazily determinized CEA, with
//! partitions, windows, consumption and limits (docs/language.md#s6).

mod batch;
mod budget;
#[cfg(test)]
mod captures_tests;
mod clock;
mod config;
#[cfg(test)]
mod correlation_tests;
mod deadlines;
#[cfg(test)]
mod deadlines_tests;
mod in_place;
mod ingest;
mod interrupt;
#[cfg(test)]
mod narrow_output_tests;
mod partition;
mod push;
mod reorder;
mod reorder_batch;
#[cfg(test)]
mod reorder_tests;
mod residual;
mod route_key;
#[cfg(test)]
mod routing_tests;
#[cfg(test)]
mod runs_model_tests;
mod scratch;
mod snapshot;
mod state;
mod step;
mod target_memo;

pub use batch::looks_like_type_field;
pub(crate) use batch::Precomputed;
pub(crate) use budget::BUDGET_CHECK_ROWS;
pub use clock::float_nanos;
use config::Config;
pub use ingest::Target;
pub use partition::{Entry, Partitions};
pub use reorder::{Fate, ReorderStats};
use scratch::Scratch;
pub use snapshot::SnapshotError;
use state::State;

use crate::analyze::WindowPlan;
use crate::det::{CacheConfig, CacheStats};
use crate::query::CompiledQuery;
use std::sync::Arc;

/// What to do with an event whose time stamp is smaller than an earlier one, under
/// a duration window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LatePolicy {
    /// Reject it with an `EventError` (default: input must be in time order).
    #[default]
    Error,
    /// Drop it and count it, as docs/language.md#s3-7 does for attribute windows.
    Drop,
}

/// Options of one evaluation.
#[derive(Clone, Debug)]
pub struct RuntimeOptions {
    /// Field holding the event type of Arrow input and of the bindings' mappings
    /// (default `type`): data often names it `event_type` or `kind`, and renaming a
    /// column costs the user a copy (docs/api.md, "Input events: the `type` field").
    pub type_field: String,
    /// Attribute holding the event time stamp (docs/language.md#s1-4), for duration windows
    /// when the event type declares no `primary_time`.
    pub time_field: Option<String>,
    /// Nanoseconds per unit of a numeric `time_field` value (1 for ns, 10^9 for s).
    pub time_unit_nanos: i64,
    /// Out-of-order time stamps under a duration window.
    pub late_time_stamps: LatePolicy,
    /// Enumerate complex events (off: only update, for benchmarks; consumption still works).
    pub enumerate: bool,
    /// Report captures (docs/language.md#s3-2a): every output is a valuation, and
    /// each of its positions carries the label of the variables that captured it
    /// ([`crate::MatchBuffer::labels`]). Off: complex events, exactly as before.
    pub captures: bool,
    /// Determinization cache budget.
    pub cache: CacheConfig,
    /// Budget of the whole state (cache, tECS arena, partitions) in bytes; `None`
    /// is `crate::memory::default_state_budget`. See `runtime/budget.rs`.
    pub max_state_bytes: Option<usize>,
    /// Reorder out-of-order input (docs/language.md#s3-7a): hold each event until the
    /// watermark (largest time stamp seen minus this many nanoseconds) passes it.
    /// `None`: events are evaluated as they arrive. See [`Runtime::push_delayed`].
    pub max_delay: Option<u64>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            type_field: crate::DEFAULT_TYPE_FIELD.to_string(),
            time_field: None,
            time_unit_nanos: 1,
            late_time_stamps: LatePolicy::Error,
            enumerate: true,
            captures: false,
            cache: CacheConfig::default(),
            max_state_bytes: None,
            max_delay: None,
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
    /// Partitions created. A key whose event starts no run gets none (its state
    /// would be empty), so keys seen only in idle events are not counted.
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
    /// The reorder buffer's counters (`None` without `max_delay`).
    pub reorder: Option<ReorderStats>,
}

/// One evaluation of a compiled query over an unbounded input.
///
/// Its fields have one owner each: `Config` is fixed when the evaluation starts,
/// `State` is what the evaluation has seen (what a snapshot saves), and
/// `Scratch` holds buffers reused from event to event that carry no meaning
/// between events. New per-run state goes into `State`, and into the snapshot.
pub struct Runtime {
    pub(crate) config: Config,
    pub(crate) state: State,
    pub(crate) scratch: Scratch,
    pub(crate) interrupt: interrupt::Interrupt,
}

impl Runtime {
    /// A fresh evaluation of `query`.
    pub fn new(query: Arc<CompiledQuery>, options: RuntimeOptions) -> Runtime {
        let config = Config::new(query, options);
        let state = State::new(&config);
        let scratch = Scratch::new(&config.query);
        Runtime { config, state, scratch, interrupt: interrupt::Interrupt::default() }
    }

    /// The compiled query.
    pub fn query(&self) -> &Arc<CompiledQuery> {
        &self.config.query
    }

    /// Attribute names to supply with each event, in slot order (the `values` of
    /// [`Runtime::push`]). Includes the time field when a duration window uses it.
    pub fn attribute_names(&self) -> &[String] {
        &self.config.layout
    }

    /// Position the next event will get.
    pub fn next_position(&self) -> u64 {
        self.state.position
    }

    /// Options of this evaluation.
    pub fn options(&self) -> &RuntimeOptions {
        &self.config.options
    }

    /// Lowest position that a complex event reported in the future can contain:
    /// a caller that keeps event payloads may forget everything before it.
    pub fn horizon(&self) -> u64 {
        let h = self.window_horizon();
        self.state.deadlines.horizon().map_or(h, |d| d.min(h))
    }

    /// [`Runtime::horizon`] for the matches the automaton can still report (without
    /// those waiting for a deadline, whose positions
    /// [`Runtime::take_deferred_positions`] gives).
    pub fn window_horizon(&self) -> u64 {
        match self.config.query.plan.window {
            WindowPlan::Unbounded => 0,
            // A future match ends at j' ≥ position and starts at ≥ j' − n.
            WindowPlan::Events(n) => self.state.position.saturating_sub(n as u64),
            // A future match starts at a coordinate ≥ τ of the current coordinate.
            _ => self.state.coordinate_marks.front().map_or(self.state.position, |&(_, p)| p),
        }
    }

    /// tECS nodes allocated since the start.
    pub fn arena_allocated(&self) -> u64 {
        self.state.arena.allocated()
    }

    /// Counters and sizes.
    pub fn statistics(&self) -> Statistics {
        Statistics {
            runtime: RuntimeStats {
                events: self.state.position,
                partitions_created: self.state.partitions.created(),
                ..self.state.stats
            },
            cache: self.state.cache.stats(),
            det_states: self.state.cache.num_states(),
            cache_bytes: self.state.cache.memory_bytes(),
            partitions: self.state.partitions.len(),
            live_nodes: self.state.arena.live_nodes(),
            arena_bytes: self.state.arena.memory_bytes(),
            reorder: self.reorder_stats(),
        }
    }
}
