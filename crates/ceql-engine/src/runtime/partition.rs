//! Partition states (docs/language.md#s6-5, #s6-7, #s6-8): one table `T` per `PARTITION BY`
//! key, found by hashing the encoded key. Partitions are kept in a list ordered by
//! the window coordinate of their last event, so that the ones whose every partial
//! match has left the window are dropped from the back in O(1) each.

use crate::det::DetId;
use crate::tecs::{Arena, Item, NodeRef, UnionList};
use std::hash::BuildHasher;

/// One entry of `T`: an active det-state and its union-list.
///
/// The entry also remembers `merge(ul)` once computed, until the list changes: a
/// det-state whose runs advance on every event of some type is merged again and
/// again (once per marking event, and again when a newer node becomes its head),
/// and each merge of an unchanged list would allocate the same union nodes anew.
/// Pruning the list's tail keeps the remembered node: the expired part below it is
/// never entered by enumeration (its `max` is below `τ`).
#[derive(Clone, Debug)]
pub struct Entry {
    /// The det-state.
    pub det: DetId,
    /// Its open complex events. Change it only through [`Entry::insert`],
    /// [`Entry::push_front`] or `prune` (which keeps the head, or ends the entry).
    pub ul: UnionList,
    /// The node of `merge(ul)` (its `max` is the head's), or [`NO_MERGE`] when not
    /// computed since the list last changed.
    merged: NodeRef,
    /// `ul[0].max`, read for every entry when a node lands in `T`: kept here so
    /// that scanning `T` does not follow each list's pointer.
    head: i64,
}

/// Marks [`Entry::merged`] as not computed.
const NO_MERGE: NodeRef = NodeRef(u64::MAX);

impl Entry {
    /// An entry for `det` with the list `ul`.
    #[inline]
    pub fn new(det: DetId, ul: UnionList) -> Entry {
        let head = ul[0].max;
        Entry { det, ul, merged: NO_MERGE, head }
    }

    /// `max` of the list's head: the newest start among its runs.
    #[inline]
    pub fn head_max(&self) -> i64 {
        debug_assert_eq!(self.head, self.ul[0].max, "head kept in step with the list");
        self.head
    }

    /// Makes `item`, newer than the whole list, its head, with the old list (whose
    /// merge is `old`) behind it.
    #[inline]
    pub fn push_front(&mut self, item: Item, old: Item) {
        debug_assert!(item.max > self.head && old.max == self.head);
        self.ul.clear();
        self.ul.push(item);
        self.ul.push(old);
        self.head = item.max;
        self.merged = NO_MERGE;
    }

    /// `merge(ul)`, computed at most once per version of the list.
    #[inline]
    pub fn merged(&mut self, arena: &mut Arena) -> Item {
        if self.merged == NO_MERGE {
            self.merged = arena.ulist_merge(&self.ul).node;
        }
        Item { node: self.merged, max: self.head }
    }

    /// Remembers `m` as `merge(ul)` (the list is unchanged since `m` was built).
    #[inline]
    pub fn remember_merge(&mut self, m: Item) {
        debug_assert_eq!(m.max, self.head, "a merge has the head's max");
        self.merged = m.node;
    }

    /// `insert(ul, n)`; the list changes, so its merge is forgotten.
    #[inline]
    pub fn insert(&mut self, arena: &mut Arena, n: Item) {
        arena.ulist_insert(&mut self.ul, n);
        self.merged = NO_MERGE;
    }
}

/// The bit of det-state `d` in [`Partition::dets`]: ids from 64 up have none of
/// their own, so they set every bit (the set is then unknown, which is still a
/// superset).
#[inline]
pub(crate) fn det_bit(d: DetId) -> u64 {
    if d.index() < 64 {
        1 << d.index()
    } else {
        u64::MAX
    }
}

/// The exact [`Partition::dets`] of a table.
#[inline]
pub(crate) fn dets_of(table: &[Entry]) -> u64 {
    table.iter().fold(0, |acc, e| acc | det_bit(e.det))
}

/// Index of a partition slot. A freed slot is reused by the next new key, so an
/// id names a partition only while it is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct PartitionId(u32);

impl PartitionId {
    /// The one partition of a query without `PARTITION BY` (never dropped).
    pub const ONLY: PartitionId = PartitionId(0);
    /// End of the idle list (no partition).
    const NIL: PartitionId = PartitionId(u32::MAX);

    /// The partition's slot.
    #[inline(always)]
    fn index(self) -> usize {
        self.0 as usize
    }

    /// The id of slot `i`.
    #[inline(always)]
    fn from_index(i: usize) -> PartitionId {
        debug_assert!(i < PartitionId::NIL.0 as usize, "partition ids stay below the sentinel");
        PartitionId(i as u32)
    }
}

/// The evaluation state of one substream.
#[derive(Debug)]
pub struct Partition {
    /// Encoded key. A freed slot keeps the buffer (and the table's), so that a
    /// stream of short-lived keys reuses them instead of allocating per key.
    pub key: Vec<u8>,
    /// `T`, in insertion order.
    pub table: Vec<Entry>,
    /// Reset epoch the table belongs to (`CONSUME BY ANY` is applied lazily).
    pub epoch: u64,
    /// Window coordinate of the partition's last event.
    pub last_w: i64,
    /// A superset of the det-states of `table`, one bit per det id (see
    /// [`dets_of`]): an event whose class moves none of them, and starts no run,
    /// leaves `T` as it is, which is decided without looking at `table`. Bits of
    /// entries that left may linger until the next exact recount.
    pub dets: u64,
    /// Det-state of the virtual run (the run that has not started yet). Always
    /// the initial det-state under ALL; under NEXT/LAST/MAX it carries the order
    /// or domination information of every live run (docs/language.md#s5-5).
    pub virtual_det: DetId,
    prev: PartitionId,
    next: PartitionId,
    live: bool,
    /// Taken off the idle list by [`Partitions::evict_idle`], kept for its strategy
    /// state only; `prev`/`next` then link it on the evicted list.
    evicted: bool,
}

impl Default for Partition {
    /// A free slot: no key, an empty table, the initial det-state, off the idle list.
    fn default() -> Self {
        Partition {
            key: Vec::new(),
            table: Vec::new(),
            epoch: 0,
            last_w: 0,
            dets: 0,
            virtual_det: DetId::INITIAL,
            prev: PartitionId::NIL,
            next: PartitionId::NIL,
            live: false,
            evicted: false,
        }
    }
}

/// All partitions of one evaluation.
#[derive(Debug)]
pub struct Partitions {
    slots: Vec<Partition>,
    free: Vec<PartitionId>,
    /// Live keyed partitions by the hash of their key; the key itself is read from
    /// the slot, so it is stored once (a map from key to id copied it into a second
    /// allocation per partition).
    index: hashbrown::HashTable<PartitionId>,
    hasher: foldhash::fast::RandomState,
    /// Most recently touched.
    head: PartitionId,
    /// Least recently touched.
    tail: PartitionId,
    keyed: bool,
    created: u64,
    /// Approximate heap bytes of the keyed partitions (see [`partition_bytes`]).
    bytes: usize,
    /// Partitions kept only for their strategy state (off the idle list).
    evicted: usize,
    /// The evicted list, oldest eviction last: a `CONSUME BY ANY` reset drops it
    /// whole ([`Partitions::drop_evicted`]), as no run may start before the reset.
    evicted_head: PartitionId,
    evicted_tail: PartitionId,
}

/// Approximate heap bytes of a keyed partition with a key of `key_len` bytes: its
/// slot, its key, an index entry, and an allowance for a small table. Tables are
/// bounded by the number of det-states and are usually a few entries; this
/// estimate is what the state budget counts.
fn partition_bytes(key_len: usize) -> usize {
    // The index holds an id and a control byte per partition: 8 bytes with slack.
    std::mem::size_of::<Partition>() + key_len + 8 + 64
}

impl Partitions {
    /// A table for a query with (`keyed`) or without `PARTITION BY`. Without it there
    /// is exactly one partition, id 0, that is never dropped.
    pub fn new(keyed: bool) -> Self {
        let mut p = Partitions {
            slots: Vec::new(),
            free: Vec::new(),
            index: hashbrown::HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            head: PartitionId::NIL,
            tail: PartitionId::NIL,
            keyed,
            created: 0,
            bytes: 0,
            evicted: 0,
            evicted_head: PartitionId::NIL,
            evicted_tail: PartitionId::NIL,
        };
        if !keyed {
            p.slots.push(Partition { live: true, ..Default::default() });
            p.created = 1;
        }
        p
    }

    /// The partition of `key` (created empty with `epoch` if new).
    #[inline]
    pub fn get_or_create(&mut self, key: &[u8], epoch: u64) -> PartitionId {
        match self.find(key) {
            Ok(id) => id,
            Err(hash) => self.create(key, hash, epoch),
        }
    }

    /// The live partition of `key`, or the key's hash (for [`Partitions::create`])
    /// when it has none. Lets the push settle an event that would leave a new
    /// partition empty without creating it and removing it again.
    #[inline]
    pub fn find(&self, key: &[u8]) -> Result<PartitionId, u64> {
        if !self.keyed {
            return Ok(PartitionId::ONLY);
        }
        let hash = self.hasher.hash_one(key);
        let slots = &self.slots;
        match self.index.find(hash, |&id| *slots[id.index()].key == *key) {
            Some(&id) => Ok(id),
            None => Err(hash),
        }
    }

    /// A new, empty partition for `key`, whose hash [`Partitions::find`] returned
    /// (it has no partition yet), in the reset epoch `epoch`.
    pub fn create(&mut self, key: &[u8], hash: u64, epoch: u64) -> PartitionId {
        debug_assert!(self.keyed && hash == self.hasher.hash_one(key));
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(Partition::default());
                PartitionId::from_index(self.slots.len() - 1)
            }
        };
        let p = &mut self.slots[id.index()];
        debug_assert!(!p.live && p.table.is_empty());
        p.key.clear();
        p.key.extend_from_slice(key);
        p.dets = 0;
        p.epoch = epoch;
        p.last_w = i64::MIN;
        p.virtual_det = DetId::INITIAL;
        p.prev = PartitionId::NIL;
        p.next = PartitionId::NIL;
        p.live = true;
        p.evicted = false;
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index.insert_unique(hash, id, |&id| hasher.hash_one(&*slots[id.index()].key));
        self.created += 1;
        self.bytes += partition_bytes(key.len());
        id
    }

    /// Mutable access to a partition.
    #[inline]
    pub fn get_mut(&mut self, id: PartitionId) -> &mut Partition {
        &mut self.slots[id.index()]
    }

    /// Records an event of `id` at coordinate `w` (moves it to the front).
    #[inline(always)]
    pub fn touch(&mut self, id: PartitionId, w: i64) {
        self.slots[id.index()].last_w = w;
        if self.keyed && self.head != id {
            self.move_to_front(id);
        }
    }

    /// Makes `id` the most recently touched partition.
    #[inline]
    fn move_to_front(&mut self, id: PartitionId) {
        if self.slots[id.index()].evicted {
            self.revive(id);
        } else {
            self.unlink_from(id, false);
        }
        let p = &mut self.slots[id.index()];
        p.prev = PartitionId::NIL;
        p.next = self.head;
        if self.head != PartitionId::NIL {
            self.slots[self.head.index()].prev = id;
        }
        self.head = id;
        if self.tail == PartitionId::NIL {
            self.tail = id;
        }
    }

    /// Takes an evicted partition whose key came back off the evicted list.
    #[cold]
    #[inline(never)]
    fn revive(&mut self, id: PartitionId) {
        self.unlink_from(id, true);
        self.slots[id.index()].evicted = false;
        self.evicted -= 1;
    }

    /// Whether `id` is on a list: the evicted list when it is evicted, else the idle
    /// list (a partition just created is on neither until its first touch).
    fn is_linked(&self, id: PartitionId) -> bool {
        let p = &self.slots[id.index()];
        let head = if p.evicted { self.evicted_head } else { self.head };
        p.prev != PartitionId::NIL || p.next != PartitionId::NIL || head == id
    }

    /// Takes `id` off the list it is on (see [`Partitions::is_linked`]).
    fn unlink(&mut self, id: PartitionId) {
        let evicted = self.slots[id.index()].evicted;
        self.unlink_from(id, evicted);
    }

    /// Takes `id` off the evicted list (`evicted`) or the idle list, if it is on it.
    /// Inlined with a constant `evicted` in the per-event path, where it is the idle
    /// list's unlink alone.
    #[inline(always)]
    fn unlink_from(&mut self, id: PartitionId, evicted: bool) {
        let head = if evicted { self.evicted_head } else { self.head };
        let (prev, next) = (self.slots[id.index()].prev, self.slots[id.index()].next);
        if prev == PartitionId::NIL && next == PartitionId::NIL && head != id {
            return;
        }
        if prev != PartitionId::NIL {
            self.slots[prev.index()].next = next;
        } else if evicted {
            self.evicted_head = next;
        } else {
            self.head = next;
        }
        if next != PartitionId::NIL {
            self.slots[next.index()].prev = prev;
        } else if evicted {
            self.evicted_tail = prev;
        } else {
            self.tail = prev;
        }
        let p = &mut self.slots[id.index()];
        p.prev = PartitionId::NIL;
        p.next = PartitionId::NIL;
    }

    /// Marks `id` (on no list) evicted and puts it at the front of the evicted list.
    fn push_evicted(&mut self, id: PartitionId) {
        let head = self.evicted_head;
        let p = &mut self.slots[id.index()];
        debug_assert!(!p.evicted && p.prev == PartitionId::NIL && p.next == PartitionId::NIL);
        p.evicted = true;
        p.next = head;
        if head != PartitionId::NIL {
            self.slots[head.index()].prev = id;
        }
        self.evicted_head = id;
        if self.evicted_tail == PartitionId::NIL {
            self.evicted_tail = id;
        }
        self.evicted += 1;
    }

    /// Removes a keyed partition, returning its table's union-lists to `pool`. The
    /// slot keeps its key and table buffers for the next partition created in it.
    pub fn remove(&mut self, id: PartitionId, pool: &mut Vec<UnionList>) {
        if !self.keyed {
            return;
        }
        self.unlink(id);
        let hash = self.hasher.hash_one(&*self.slots[id.index()].key);
        match self.index.find_entry(hash, |&other| other == id) {
            Ok(entry) => {
                entry.remove();
            }
            Err(_) => unreachable!("a live keyed partition is in the index"),
        }
        let p = &mut self.slots[id.index()];
        if p.evicted {
            p.evicted = false;
            self.evicted -= 1;
        }
        p.live = false;
        self.bytes -= partition_bytes(p.key.len());
        pool.extend(p.table.drain(..).map(|e| e.ul));
        self.free.push(id);
    }

    /// Drops every keyed partition whose last event is below `tau`: all its
    /// union-lists have expired. A partition whose virtual run still carries
    /// strategy state (NEXT/LAST/MAX) keeps that state, which later matches are
    /// compared with (strategy before window, docs/language.md#s3-6): its table is released and it
    /// leaves the idle list until its key is seen again.
    /// A partition of an earlier reset epoch than `epoch` (`CONSUME BY ANY` consumed
    /// its runs and its strategy state, lazily) has nothing to keep: it is removed.
    #[inline]
    pub fn evict_idle(&mut self, tau: i64, epoch: u64, pool: &mut Vec<UnionList>) {
        while self.keyed && self.tail != PartitionId::NIL && self.slots[self.tail.index()].last_w < tau {
            let id = self.tail;
            let p = &self.slots[id.index()];
            if p.virtual_det == DetId::INITIAL || p.epoch < epoch {
                self.remove(id, pool);
            } else {
                let p = &mut self.slots[id.index()];
                // Only the strategy state stays: the table's memory goes too.
                pool.extend(std::mem::take(&mut p.table).into_iter().map(|e| e.ul));
                self.unlink(id);
                self.push_evicted(id);
            }
        }
    }

    /// Removes every evicted partition of an earlier reset epoch than `epoch`: after a
    /// `CONSUME BY ANY` reset no run may start before it (docs/language.md#s3-10), so
    /// the strategy state they were kept for can no longer matter. Each partition is
    /// evicted and removed once, so the work is constant per eviction.
    pub fn drop_evicted(&mut self, epoch: u64, pool: &mut Vec<UnionList>) {
        let mut id = self.evicted_head;
        while id != PartitionId::NIL {
            let next = self.slots[id.index()].next;
            if self.slots[id.index()].epoch < epoch {
                self.remove(id, pool);
            }
            id = next;
        }
    }

    /// Ids of the live partitions.
    pub fn ids(&self) -> impl Iterator<Item = PartitionId> + '_ {
        self.slots.iter().enumerate().filter(|(_, p)| p.live).map(|(i, _)| PartitionId::from_index(i))
    }

    /// Live partitions, in no particular order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Partition> {
        self.slots.iter_mut().filter(|p| p.live)
    }

    /// Live partitions.
    pub fn iter(&self) -> impl Iterator<Item = &Partition> {
        self.slots.iter().filter(|p| p.live)
    }

    /// Number of live partitions.
    pub fn len(&self) -> usize {
        if self.keyed {
            self.index.len()
        } else {
            1
        }
    }

    /// Partitions created so far.
    pub fn created(&self) -> u64 {
        self.created
    }

    /// Approximate heap bytes of the partitions (what the state budget counts).
    pub fn memory_bytes(&self) -> usize {
        self.bytes + self.slots.capacity() * std::mem::size_of::<Partition>()
    }

    /// Partitions kept only for the strategy state of runs that left the window.
    pub fn evicted_count(&self) -> usize {
        self.evicted
    }

    /// Whether partitions are keyed.
    pub fn keyed(&self) -> bool {
        self.keyed
    }

    /// Keyed partitions that [`Partitions::evict_idle`] took off the idle list but
    /// kept for their strategy state, least recent first (then by key, so that a
    /// snapshot does not depend on hash order).
    pub fn evicted(&self) -> Vec<&Partition> {
        if !self.keyed {
            return Vec::new();
        }
        let mut out: Vec<&Partition> = self
            .index
            .iter()
            .filter(|&&id| self.slots[id.index()].evicted || !self.is_linked(id))
            .map(|&id| &self.slots[id.index()])
            .collect();
        out.sort_by(|a, b| (a.last_w, &a.key).cmp(&(b.last_w, &b.key)));
        out
    }

    /// Records the last event's coordinate of a partition without putting it on
    /// the idle list (restoring an evicted partition).
    pub fn set_last_w(&mut self, id: PartitionId, w: i64) {
        self.slots[id.index()].last_w = w;
        if !self.slots[id.index()].evicted {
            self.unlink(id);
            self.push_evicted(id);
        }
    }

    /// Partitions on the idle list from least to most recently touched (snapshot
    /// order, so that replaying `touch` in this order rebuilds the list).
    pub fn in_lru_order(&self) -> Vec<&Partition> {
        if !self.keyed {
            return vec![&self.slots[0]];
        }
        let mut out = Vec::with_capacity(self.index.len());
        let mut id = self.tail;
        while id != PartitionId::NIL {
            out.push(&self.slots[id.index()]);
            id = self.slots[id.index()].prev;
        }
        out
    }
}
