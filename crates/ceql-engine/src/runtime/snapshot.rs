//! Versioned snapshots of an evaluation: restoring one and continuing gives exactly
//! the output an uninterrupted evaluation would have given.
//!
//! Layout: `b"CEQLSNAP"`, format version (u32 LE), then a postcard payload. Det-state
//! ids are local to a determinization cache, so the payload stores each active
//! det-state as its set of automaton states; the cache is rebuilt lazily.

use super::{LatePolicy, Partitions, Runtime, RuntimeOptions, RuntimeStats};
use crate::cea::{LABEL_SHIFT, POSITION_MASK};
use crate::det::{CacheConfig, CacheStats, PortableDet};
use crate::query::CompiledQuery;
use crate::tecs::{Arena, Item, Node};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"CEQLSNAP";
/// Current snapshot format version (5: the options carry `max_state_bytes`; 6: the
/// options carry `captures` (with captures on, the nodes' position words carry
/// capture labels); 7: the attribute values kept for filters between events; the
/// state ends with the complex events waiting for the deadline of a trailing
/// absence and the reorder buffer, in that order; 8: the window coordinate of the last NaN
/// routing value, before the reorder buffer; 9: the options carry `type_field`; 10: after
/// the state, the measures of the complex events waiting for a deadline, a postcard
/// `Vec<Value>` of its own, so that a format 9 snapshot, which has none, still restores).
pub const SNAPSHOT_VERSION: u32 = 10;

/// The oldest format [`Runtime::restore`] reads: 9 is 10 without the waiting measures.
const OLDEST_VERSION: u32 = 9;

/// Why a snapshot cannot be restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError(pub String);

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid snapshot: {}", self.0)
    }
}

impl std::error::Error for SnapshotError {}

#[derive(Serialize, Deserialize)]
struct Options {
    type_field: String,
    time_field: Option<String>,
    time_unit_nanos: i64,
    late_drop: bool,
    enumerate: bool,
    max_cache_bytes: u64,
    max_det_states: u64,
    max_clears: u32,
    min_events_per_state: u64,
    max_state_bytes: Option<u64>,
    captures: bool,
}

#[derive(Serialize, Deserialize)]
struct PartitionState {
    key: Vec<u8>,
    epoch: u64,
    last_w: i64,
    /// Det-state of the virtual run.
    virtual_det: PortableDet,
    /// (det-state, union-list).
    entries: Vec<(PortableDet, Vec<Item>)>,
}

#[derive(Serialize, Deserialize)]
struct State {
    fingerprint: u64,
    options: Options,
    position: u64,
    max_w: i64,
    reset_epoch: u64,
    stats: RuntimeStats,
    cache_stats: CacheStats,
    coordinate_marks: Vec<(i64, u64)>,
    arena_base: u64,
    nodes: Vec<Node>,
    /// Least recently touched first.
    partitions: Vec<PartitionState>,
    /// Partitions whose runs all expired but whose virtual run keeps strategy
    /// state (NEXT/LAST/MAX): off the idle list, still compared with (docs/language.md#s3-6).
    evicted: Vec<PartitionState>,
    /// Filters between events: the stored attribute values by position.
    values: Vec<(u64, Vec<crate::value::Value>)>,
    /// Complex events waiting for their deadline (docs/language.md#s3-3b).
    deadlines: super::deadlines::Deadlines,
    /// Routed queries: window coordinate of the last NaN routing value (docs/language.md#s3-4b).
    route_nan_w: Option<i64>,
    /// The reorder buffer (`max_delay`; since version 6). Keep it last.
    reorder: Option<super::reorder::BufferState>,
}

impl Runtime {
    /// Serialises the evaluation state.
    pub fn snapshot(&self) -> Vec<u8> {
        let o = &self.config.options;
        let (arena_base, nodes) = self.state.arena.export();
        let export = |p: &super::partition::Partition| {
            let stale = p.epoch < self.state.reset_epoch;
            PartitionState {
                key: p.key.to_vec(),
                epoch: p.epoch,
                last_w: p.last_w,
                virtual_det: self.state.cache.export(if stale { crate::det::DetId::INITIAL } else { p.virtual_det }),
                entries: if stale {
                    Vec::new()
                } else {
                    p.table.iter().map(|e| (self.state.cache.export(e.det), e.ul.clone())).collect()
                },
            }
        };
        let partitions = self.state.partitions.in_lru_order().into_iter().map(export).collect();
        let evicted = self.state.partitions.evicted().into_iter().map(export).collect();
        let state = State {
            fingerprint: self.config.query.fingerprint,
            options: Options {
                type_field: o.type_field.clone(),
                time_field: o.time_field.clone(),
                time_unit_nanos: o.time_unit_nanos,
                late_drop: o.late_time_stamps == LatePolicy::Drop,
                enumerate: o.enumerate,
                max_cache_bytes: o.cache.max_cache_bytes as u64,
                max_det_states: o.cache.max_det_states as u64,
                max_clears: o.cache.max_clears,
                min_events_per_state: o.cache.min_events_per_state,
                max_state_bytes: o.max_state_bytes.map(|b| b as u64),
                captures: o.captures,
            },
            position: self.state.position,
            max_w: self.state.max_w,
            reset_epoch: self.state.reset_epoch,
            stats: self.state.stats,
            cache_stats: self.state.cache.stats(),
            coordinate_marks: self.state.coordinate_marks.iter().copied().collect(),
            arena_base,
            nodes,
            partitions,
            evicted,
            values: self.state.values.export(),
            deadlines: self.state.deadlines.clone(),
            route_nan_w: self.state.route_nan_w,
            reorder: self.state.reorder.as_ref().map(super::reorder::ReorderBuffer::export),
        };
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
        out.extend(postcard::to_stdvec(&state).expect("snapshot state is serialisable"));
        let measures = self.state.deadlines.measure_values();
        out.extend(postcard::to_stdvec(&measures).expect("measure values are serialisable"));
        out
    }

    /// Rebuilds an evaluation of `query` from [`Runtime::snapshot`] bytes.
    pub fn restore(query: Arc<CompiledQuery>, data: &[u8]) -> Result<Runtime, SnapshotError> {
        if data.len() < 12 || &data[..8] != MAGIC {
            return Err(SnapshotError("not a ceql snapshot".into()));
        }
        let version = u32::from_le_bytes(data[8..12].try_into().expect("4 bytes"));
        // Version 5 (before captures, deadlines and the reorder buffer) differs inside the
        // options, so it is refused rather than guessed.
        if !(OLDEST_VERSION..=SNAPSHOT_VERSION).contains(&version) {
            return Err(SnapshotError(format!(
                "format version {version} is not supported (expected {SNAPSHOT_VERSION}); take a new snapshot \
                 with this version of ceql"
            )));
        }
        let payload = &data[12..];
        let corrupt = |e: postcard::Error| SnapshotError(format!("corrupt payload: {e}"));
        let (state, rest): (State, &[u8]) = postcard::take_from_bytes(payload).map_err(corrupt)?;
        let measures: Vec<crate::value::Value> = if version >= 10 {
            postcard::from_bytes(rest).map_err(corrupt)?
        } else if rest.is_empty() {
            Vec::new()
        } else {
            return Err(SnapshotError("corrupt payload: bytes after the state".into()));
        };
        if state.fingerprint != query.fingerprint {
            return Err(SnapshotError("it was taken from a different query (text, schema or options differ)".into()));
        }
        let o = state.options;
        // Options the API refuses are damage here: a budget of 0 holds no state, and a
        // reorder buffer needs a time stamp.
        if o.max_cache_bytes == 0 || o.max_det_states == 0 || o.max_state_bytes == Some(0) {
            return Err(SnapshotError("a memory budget of 0".into()));
        }
        if state.reorder.is_some() && o.time_field.is_none() && query.primary_time.iter().all(Option::is_none) {
            return Err(SnapshotError("a reorder buffer without a time stamp".into()));
        }
        if o.type_field.is_empty()
            || crate::is_reserved_field(&o.type_field) && o.type_field != crate::DEFAULT_TYPE_FIELD
        {
            return Err(SnapshotError(format!("a type field named `{}`", o.type_field)));
        }
        let options = RuntimeOptions {
            type_field: o.type_field,
            time_field: o.time_field,
            time_unit_nanos: o.time_unit_nanos,
            late_time_stamps: if o.late_drop { LatePolicy::Drop } else { LatePolicy::Error },
            enumerate: o.enumerate,
            captures: o.captures,
            cache: CacheConfig {
                max_cache_bytes: o.max_cache_bytes as usize,
                max_det_states: o.max_det_states as usize,
                max_clears: o.max_clears,
                min_events_per_state: o.min_events_per_state,
            },
            max_state_bytes: o.max_state_bytes.map(|b| b as usize),
            max_delay: state.reorder.as_ref().map(super::reorder::BufferState::max_delay),
        };
        let mut rt = Runtime::new(query, options);
        rt.state.position = state.position;
        rt.state.max_w = state.max_w;
        rt.state.reset_epoch = state.reset_epoch;
        rt.state.stats = state.stats;
        rt.state.cache.restore_stats(state.cache_stats);
        rt.state.coordinate_marks = state.coordinate_marks.into_iter().collect();
        rt.state.values = crate::residual::ValueStore::import(state.values);
        rt.state.deadlines = state.deadlines;
        rt.state.route_nan_w = state.route_nan_w;
        rt.state.reorder = state.reorder.map(super::reorder::ReorderBuffer::import);
        if state.arena_base % crate::tecs::CHUNK_NODES as u64 != 0 {
            return Err(SnapshotError("arena base is not chunk-aligned".into()));
        }
        rt.state.arena = Arena::import(state.arena_base, &state.nodes, state.max_w);
        rt.state.partitions = Partitions::new(rt.config.query.is_partitioned());
        let malformed = || SnapshotError("malformed det-state".into());
        let roots = state.partitions.iter().chain(&state.evicted).flat_map(|p| &p.entries).flat_map(|(_, ul)| ul);
        let query = &rt.config.query;
        let labels = query.residual.as_ref().map_or(query.labels.len(), |r| r.to_user.len()) as u64;
        // Without captures (none asked for, no filter between events) the whole
        // word is the position: no label bits.
        let label_limit = if rt.state.cache.captures() { labels.max(1) } else { 1 };
        let fits = |a: u64| (a & POSITION_MASK) < state.position && (a >> LABEL_SHIFT) < label_limit;
        if !rt.state.arena.well_formed(roots.map(|item| item.node), fits) {
            return Err(SnapshotError(
                "malformed tECS: a node refers to a newer node or to a position not seen".into(),
            ));
        }
        let width = rt.config.query.plan.measures.len();
        if !rt.state.deadlines.restore_measures(width, measures)
            || !rt.state.deadlines.well_formed(state.position, rt.horizon(), label_limit as u32)
        {
            return Err(SnapshotError("malformed matches waiting for a deadline".into()));
        }
        let evicted = state.evicted.into_iter().map(|p| (p, false));
        for (p, linked) in state.partitions.into_iter().map(|p| (p, true)).chain(evicted) {
            let pid = rt.state.partitions.get_or_create(&p.key, p.epoch);
            let mut table = Vec::with_capacity(p.entries.len());
            for (det, ul) in p.entries {
                if ul.is_empty() {
                    return Err(malformed());
                }
                table.push(super::Entry::new(rt.state.cache.import_run(&det).ok_or_else(malformed)?, ul));
            }
            let virtual_det = rt.state.cache.import_virtual(&p.virtual_det).ok_or_else(malformed)?;
            let part = rt.state.partitions.get_mut(pid);
            part.dets = super::partition::dets_of(&table);
            part.table = table;
            part.epoch = p.epoch;
            part.virtual_det = virtual_det;
            if linked {
                rt.state.partitions.touch(pid, p.last_w);
            } else if part.table.is_empty() {
                rt.state.partitions.set_last_w(pid, p.last_w);
            } else {
                return Err(SnapshotError("an evicted partition holds runs".into()));
            }
        }
        Ok(rt)
    }
}
