//! Buffers an evaluation reuses from event to event so that the hot path does not
//! allocate. None of them carries meaning from one event to the next (the class
//! memo is derived from the cache and rebuilt after a clear), so a snapshot never
//! saves them and a restored evaluation starts with fresh ones.

use super::in_place::{Labels, Landing, Marking};
use super::partition::Entry;
use crate::det::ClassId;
use crate::enumerate::Enumerator;
use crate::output::MatchBuffer;
use crate::query::CompiledQuery;
use crate::tecs::UnionList;

/// The scratch space of a [`super::Runtime`].
pub(crate) struct Scratch {
    /// Algorithm 2's stack and cons cells.
    pub(crate) enumerator: Enumerator,
    /// Recycled union-list buffers.
    pub(crate) pool: Vec<UnionList>,
    /// The `T'` being built (buffer swapped with the partition's table).
    pub(crate) next_table: Vec<Entry>,
    /// `slot_of[det]` = index in `next_table` when `stamp_of[det] == stamp`.
    pub(crate) slot_of: Vec<u32>,
    pub(crate) stamp_of: Vec<u32>,
    pub(crate) stamp: u32,
    /// [`super::Partition::dets`] of the `T'` being rebuilt: the bits of the
    /// det-states given a slot since the last `begin_table`.
    pub(crate) next_dets: u64,
    /// Predicate bits of the current event.
    pub(crate) bits: Vec<u64>,
    /// Encoded partition key of the current event.
    pub(crate) key_buf: Vec<u8>,
    /// Scratch output for deduplication when the caller only counts.
    pub(crate) dedupe_scratch: MatchBuffer,
    /// Complex events of one position that will wait for their deadline (deadlines.rs).
    /// (An `Option`, so that taking it out while the runtime fills it allocates nothing.)
    pub(crate) deferred: Option<MatchBuffer>,
    /// Per type (last: unknown types): (cache clears + 1 when cached, class) for
    /// types whose class does not depend on the event; `u64::MAX` otherwise.
    pub(crate) fixed_classes: Vec<(u64, ClassId)>,
    /// In-place update: (index in `T`, target) of each marking entry.
    pub(crate) marking: Marking,
    /// In-place update with captures on: the capture label of each marking entry.
    pub(crate) labels: Labels,
    /// In-place update: indices in `T` of the entries whose runs end.
    pub(crate) dying: Vec<usize>,
    /// In-place update: (target, node) of each new node.
    pub(crate) landing: Landing,
    /// Filters between events: the valuations enumerated before the test.
    pub(crate) candidates: MatchBuffer,
    /// Filters between events: the type error met while testing, reported by the push.
    pub(crate) residual_error: Option<crate::residual::ResidualError>,
    /// Routed equalities: why the current event cannot be routed (slot, message),
    /// reported by the push.
    pub(crate) route_error: Option<(crate::predicate::AttrSlot, String)>,
    /// Routed equalities: the kind every held partition's key shares, 0 when not known
    /// (derived from the partitions, see `route_key::check_kind`).
    pub(crate) route_kind: u8,
}

impl Scratch {
    /// Empty buffers for `query`.
    pub(crate) fn new(query: &CompiledQuery) -> Scratch {
        let fixed_classes = (0..=query.preds.len())
            .map(|t| {
                let plain = t == query.preds.len() || (query.preds[t].is_empty() && query.declared_reads[t].is_empty());
                (if plain { 0 } else { u64::MAX }, ClassId::from_index(0))
            })
            .collect();
        Scratch {
            enumerator: Enumerator::default(),
            pool: Vec::new(),
            next_table: Vec::new(),
            slot_of: Vec::new(),
            stamp_of: Vec::new(),
            stamp: 0,
            next_dets: 0,
            bits: Vec::new(),
            key_buf: Vec::new(),
            dedupe_scratch: MatchBuffer::new(),
            deferred: Some(MatchBuffer::new()),
            fixed_classes,
            marking: Marking::default(),
            labels: Labels::default(),
            dying: Vec::new(),
            landing: Landing::default(),
            candidates: MatchBuffer::new(),
            residual_error: None,
            route_error: None,
            route_kind: 0,
        }
    }
}
