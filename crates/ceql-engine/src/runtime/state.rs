//! What an evaluation has seen: the determinization cache, the tECS arena, the
//! partitions with their tables `T`, and the counters. This is exactly what a
//! snapshot saves ([`super::snapshot`]); everything else is configuration or
//! scratch space.

use super::config::Config;
use super::partition::Partitions;
use super::reorder::ReorderBuffer;
use super::RuntimeStats;
use crate::det::DetCache;
use crate::residual::ValueStore;
use crate::tecs::Arena;
use std::collections::VecDeque;

/// The evaluation state of a [`super::Runtime`].
pub(crate) struct State {
    /// The lazily determinized automaton, shared by all partitions.
    pub(crate) cache: DetCache,
    /// tECS nodes.
    pub(crate) arena: Arena,
    /// One table `T` per `PARTITION BY` key.
    pub(crate) partitions: Partitions,
    /// Next position.
    pub(crate) position: u64,
    /// Largest window coordinate accepted so far (`max_w_seen`).
    pub(crate) max_w: i64,
    /// Global `CONSUME BY ANY` epoch.
    pub(crate) reset_epoch: u64,
    pub(crate) stats: RuntimeStats,
    /// Time-based windows: the first position of each distinct coordinate still
    /// inside the window (for [`super::Runtime::horizon`]).
    pub(crate) coordinate_marks: VecDeque<(i64, u64)>,
    /// Attribute values of the positions still in the window, for filters between
    /// events (empty for other queries).
    pub(crate) values: ValueStore,
    /// Complex events waiting for the deadline of a trailing absence.
    pub(crate) deadlines: super::deadlines::Deadlines,
    /// Events held until the watermark passes them (with `max_delay`).
    pub(crate) reorder: Option<ReorderBuffer>,
    /// Routed queries: window coordinate of the last event whose routing value was NaN,
    /// if any. A NaN belongs to no substream, yet `=` between it and a string
    /// is a type error that routing must still raise (docs/language.md#s3-4b).
    pub(crate) route_nan_w: Option<i64>,
}

impl State {
    /// The state before the first event.
    pub(crate) fn new(config: &Config) -> State {
        let q = &config.query;
        let mut cache = DetCache::new(q.cea.clone(), q.strategy, &q.preds_per_type(), config.options.cache);
        // Filters between events read the capture labels, whatever the output shows.
        cache.set_captures(config.options.captures || config.facts.residual);
        State {
            cache,
            arena: Arena::new(),
            partitions: Partitions::new(q.is_partitioned()),
            position: 0,
            max_w: i64::MIN,
            reset_epoch: 0,
            stats: RuntimeStats::default(),
            coordinate_marks: VecDeque::new(),
            values: ValueStore::default(),
            deadlines: Default::default(),
            reorder: config.options.max_delay.map(ReorderBuffer::new),
            route_nan_w: None,
        }
    }
}
