//! The in-place update of `T`: the common shape of an event that leaves every
//! det-state of `T` where it is (the skip loops of `;`) or ends its runs (a final
//! det-state after its output, the left side of `:`), and at most a few of them
//! also mark into another det-state (the run that advances).
//!
//! For such an event `T'` is `T` plus a few new nodes, so the table is updated
//! where it stands instead of being rebuilt entry by entry (docs/language.md#s6-5,
//! EXEC_TRANS): one transition lookup per entry, plus O(|T|) per new node. That
//! is what keeps long sequences (`A1 ; … ; A9`, with eight det-states alive)
//! fast. Every other event takes the general rebuild of `step.rs`.
//!
//! Why the result equals the rebuild's `T'` as a set of complex events: each
//! entry that stays keeps its own list (the rebuild moves it unchanged, or merges
//! it into a list an earlier entry created there); an entry whose runs end is
//! removed (the rebuild drops it); each new node is added to its target's list,
//! or starts it. The targets are required to be distinct and to
//! differ from every marking entry, so no node is computed from a list that the
//! same event changed. The representation may differ from the rebuild's (a
//! list's head can be replaced by a newer node, with the old list merged behind
//! it), but it keeps the union-list invariants and the non-increasing heads of `T`.

use super::partition::{det_bit, dets_of, Entry};
use super::Runtime;
use crate::det::{ClassId, DetId, ListId, Succ};
use crate::tecs::{new_ulist, prune, Item};

/// More marking entries than this fall back to the rebuild: the distinctness check
/// of their targets is quadratic.
const MAX_MARKING: usize = 8;

/// A few values recorded during one event, in a fixed array: recording a value
/// that may or may not count is a store and an add, not a branch on the stream's
/// data. Holds at most `MAX_MARKING + 1` values.
pub(crate) struct Scratch<T> {
    items: [T; MAX_MARKING + 1],
    len: usize,
}

impl<T: Copy> Scratch<T> {
    fn filled_with(unused: T) -> Self {
        Scratch { items: [unused; MAX_MARKING + 1], len: 0 }
    }

    /// Forgets every value.
    #[inline]
    fn clear(&mut self) {
        self.len = 0;
    }

    /// Records `value`, keeping it only when `keep`; the caller keeps the count
    /// at most `MAX_MARKING + 1`.
    #[inline]
    fn push_if(&mut self, value: T, keep: bool) {
        self.items[self.len] = value;
        self.len += keep as usize;
    }

    /// The recorded values.
    #[inline]
    fn as_slice(&self) -> &[T] {
        &self.items[..self.len]
    }
}

/// The marking entries of one event: (index in `T`, target det-state).
pub(crate) type Marking = Scratch<(u32, DetId)>;

impl Default for Marking {
    fn default() -> Self {
        Scratch::filled_with((0, DetId::DEAD))
    }
}

impl Marking {
    /// Records that entry `i` marks into `target` unless `target` is
    /// [`DetId::DEAD`]; false when that makes more than [`MAX_MARKING`] entries.
    #[inline]
    fn note(&mut self, i: usize, target: DetId) -> bool {
        self.push_if((i as u32, target), !target.is_dead());
        self.len <= MAX_MARKING
    }
}

/// With captures on: the capture label of each marking entry's new node, in the
/// order of [`Marking`].
pub(crate) type Labels = Scratch<u32>;

impl Default for Labels {
    fn default() -> Self {
        Scratch::filled_with(0)
    }
}

/// The new nodes of one event and their target det-states: one per marking
/// entry, plus the run that starts at the event.
pub(crate) type Landing = Scratch<(DetId, Item)>;

impl Default for Landing {
    fn default() -> Self {
        Scratch::filled_with((DetId::DEAD, Item { node: crate::tecs::NodeRef(0), max: i64::MIN }))
    }
}

impl Runtime {
    /// Updates `table` (the partition's `T`) in place for an event of class `class`
    /// at `position`, coordinate `w` and threshold `tau`, when the event has the
    /// shape described in the module documentation. `start` are the successors of
    /// the virtual det-state.
    ///
    /// `dets` is the partition's [`super::Partition::dets`] for `table`, kept a
    /// superset of its det-states (exact again after entries are dropped);
    /// `mask` is the class's [`crate::det::DetCache::mover_mask`].
    ///
    /// Returns `None` when the event needs the general rebuild; `table` is then
    /// only pruned, which the rebuild repeats harmlessly. Otherwise returns
    /// whether `T'` may hold a final det-state.
    ///
    /// `CAP` (captures on): the marked part of a successor is a list of `(label,
    /// det-state)` pairs; the update applies when each list has one pair (one
    /// new node per marking entry, as without captures), whose label goes into
    /// the node's position word. Otherwise the rebuild makes one node per pair.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn update_in_place<const CAP: bool>(
        &mut self,
        table: &mut Vec<Entry>,
        dets: &mut u64,
        mask: Option<u64>,
        start: Succ,
        class: ClassId,
        position: u64,
        w: i64,
        tau: i64,
    ) -> Option<bool> {
        if start.has_unmarked() {
            return None;
        }
        self.scratch.marking.clear();
        if CAP {
            self.scratch.labels.clear();
        }
        self.scratch.dying.clear();
        // Pass 1, read-only apart from pruning: find the entries that mark.
        let (expired, mut any_final) = if table.last().is_none_or(|e| e.head_max() >= tau) {
            // No entry expired, so only the entries the class moves need a look
            // (their lists, and those of the targets below, are pruned when used).
            match mask {
                Some(mask) => (false, self.find_marking_by_mask::<CAP>(table, mask & *dets, class, tau)?),
                None => self.find_marking::<CAP>(table, class, tau)?,
            }
        } else {
            self.find_marking::<CAP>(table, class, tau)?
        };
        if !start.has_marked() && self.scratch.marking.as_slice().is_empty() {
            self.drop_ended(table, dets, expired, tau);
            return Some(any_final);
        }
        // The run that starts by marking the event, if any (with captures: the
        // single (label, det-state) of its list, or the rebuild).
        let mut start_label = 0;
        let start_target = if !CAP {
            start.marked()
        } else if start.has_marked() {
            let target;
            (start_label, target) = self.single_marked(start.marked_list())?;
            target
        } else {
            DetId::DEAD
        };
        // Every target must be new to this event: distinct, and not a marking entry.
        let marking = self.scratch.marking.as_slice();
        let is_marking = |t| marking.iter().any(|&(i, _)| table[i as usize].det == t);
        if !start_target.is_dead() && (is_marking(start_target) || marking.iter().any(|m| m.1 == start_target)) {
            return None;
        }
        for (k, &(_, t)) in marking.iter().enumerate() {
            if is_marking(t) || marking[k + 1..].iter().any(|m| m.1 == t) {
                return None;
            }
        }

        // Pass 2: the new nodes, computed from the lists as they were before the event.
        self.scratch.landing.clear();
        if !start_target.is_dead() {
            let word = if CAP { super::step::labelled(position, start_label) } else { position };
            let node = self.state.arena.begin(word, w);
            self.scratch.landing.push_if((start_target, Item { node, max: w }), true);
        }
        for (k, &(i, target)) in self.scratch.marking.as_slice().iter().enumerate() {
            let merged = table[i as usize].merged(&mut self.state.arena);
            let word = if CAP { super::step::labelled(position, self.scratch.labels.as_slice()[k]) } else { position };
            let node = self.state.arena.output(word, merged.node, merged.max);
            self.scratch.landing.push_if((target, Item { node, max: merged.max }), true);
        }
        // The lists of ending runs were read above (some of them mark); now they go.
        self.drop_ended(table, dets, expired, tau);

        // Pass 3: add each node to its target, keeping the heads of T non-increasing.
        for li in 0..self.scratch.landing.len {
            let (target, item) = self.scratch.landing.as_slice()[li];
            any_final |= self.state.cache.is_final(target);
            // Where the target is, and the first entry whose head is below the new
            // node (where a new head goes): one pass without early exits, whose
            // branches the stream would make unpredictable.
            let (mut found, mut slot) = (usize::MAX, table.len());
            for (i, e) in table.iter().enumerate().rev() {
                found = if e.det == target { i } else { found };
                slot = if e.head_max() < item.max { i } else { slot };
            }
            let found = (found != usize::MAX).then_some(found);
            if let Some(k) = found {
                // Heads are in the window here; the tail may not be (lazy pruning).
                prune(&mut table[k].ul, tau);
            }
            match found {
                Some(k) if item.max <= table[k].head_max() => table[k].insert(&mut self.state.arena, item),
                Some(k) => {
                    // The node is newer than the list's head: it becomes the head,
                    // the old list is merged behind it, and the entry moves up.
                    let old = table[k].merged(&mut self.state.arena);
                    table[k].push_front(item, old);
                    table[slot..=k].rotate_right(1);
                }
                None => {
                    let ul = new_ulist(item, &mut self.scratch.pool);
                    table.insert(slot, Entry::new(target, ul));
                    *dets |= det_bit(target);
                }
            }
        }
        Some(any_final)
    }

    /// With captures on: the one `(label, det-state)` pair of a marked successor's
    /// list, or `None` (the rebuild) when the list has several labels.
    #[inline]
    fn single_marked(&self, list: ListId) -> Option<(u32, DetId)> {
        match self.state.cache.marked_list(list) {
            &[pair] => Some(pair),
            _ => None,
        }
    }

    /// Records that entry `i` of `T`, with successors `s`, marks (if it does):
    /// its target, and with `CAP` the label of its single pair ([`Runtime::single_marked`]).
    /// `None` when there are too many marking entries, or a list with several labels.
    #[inline(always)]
    fn note_marking<const CAP: bool>(&mut self, i: usize, s: Succ) -> Option<()> {
        let target = if CAP && s.has_marked() {
            let (label, target) = self.single_marked(s.marked_list())?;
            self.scratch.labels.push_if(label, true);
            target
        } else if CAP {
            DetId::DEAD
        } else {
            s.marked()
        };
        self.scratch.marking.note(i, target).then_some(())
    }

    /// Pass 1 over every entry: prunes it, and records the marking ones in
    /// `self.scratch.marking` and those whose runs end in `self.scratch.dying`. Returns (whether
    /// an entry expired, whether an entry that stays accepts), or `None` when an
    /// entry does more than stay or end, and mark.
    fn find_marking<const CAP: bool>(&mut self, table: &mut [Entry], class: ClassId, tau: i64) -> Option<(bool, bool)> {
        let mut expired = false;
        let mut any_final = false;
        let mut hits = 0;
        for (i, e) in table.iter_mut().enumerate() {
            if !prune(&mut e.ul, tau) {
                expired = true;
                continue;
            }
            let s = match self.state.cache.lookup(e.det, class) {
                Some(s) => {
                    hits += 1;
                    s
                }
                None => self.state.cache.step(e.det, class),
            };
            let stays = s.unmarked() == e.det;
            if !(stays || s.unmarked().is_dead())
                || !s.unmarked_other().is_dead()
                || self.note_marking::<CAP>(i, s).is_none()
            {
                self.state.cache.count_hits(hits);
                return None;
            }
            if stays {
                any_final |= self.state.cache.is_final(e.det);
            } else {
                self.scratch.dying.push(i);
            }
        }
        self.state.cache.count_hits(hits);
        Some((expired, any_final))
    }

    /// Pass 1 when no entry expired and the class has a mover mask: only entries
    /// whose bit is set are looked at (final det-states always have theirs set).
    /// Returns whether an entry that stays accepts (always false), or `None` as
    /// [`Runtime::find_marking`] does.
    #[inline(always)]
    fn find_marking_by_mask<const CAP: bool>(
        &mut self,
        table: &mut [Entry],
        mask: u64,
        class: ClassId,
        tau: i64,
    ) -> Option<bool> {
        // Det ids are below 64 while the cache has a mask, and the entries of T
        // have distinct det ids, so T has at most 64 entries: gather the bits of
        // the moving entries first, without a branch per entry (which entry moves
        // is as random as the stream, and a mispredicted branch costs more than
        // the test).
        if mask == 0 {
            // No det-state of T moves (the caller intersected the mask with them).
            return Some(false);
        }
        let mut moving = 0u64;
        for (i, e) in table.iter().enumerate() {
            moving |= (mask >> e.det.index() & 1) << i;
        }
        // Hits are counted once at the end, and a transition not computed yet is
        // left to the rebuild (which computes it: once per det-state and class).
        // With `step` here, the successors of the cached and the computed path
        // met in a stack slot, and the loop kept its address in a register and
        // spilled the runtime's instead (about 8 instructions per moving entry
        // against fc1761e, callgrind on `seq3_w100`). Masks exist only in cached
        // mode (`DetCache::mover_mask`), so a miss here is rare.
        let mut hits = 0;
        let mut applies = true;
        while moving != 0 {
            let i = moving.trailing_zeros() as usize;
            moving &= moving - 1;
            let e = &mut table[i];
            prune(&mut e.ul, tau);
            let Some(s) = self.state.cache.lookup(e.det, class) else {
                applies = false;
                break;
            };
            hits += 1;
            let stays = s.unmarked() == e.det;
            // A final det-state that stayed would accept again here: left to the
            // general path (final det-states are entered by marking transitions
            // only, so this does not happen with the constructions of det/).
            if !(stays || s.unmarked().is_dead())
                || !s.unmarked_other().is_dead()
                || (stays && self.state.cache.is_final(e.det))
                || self.note_marking::<CAP>(i, s).is_none()
            {
                applies = false;
                break;
            }
            if !stays {
                self.scratch.dying.push(i);
            }
        }
        self.state.cache.count_hits(hits);
        applies.then_some(false)
    }

    /// Removes the entries whose runs ended (`self.scratch.dying`) and, when `expired`,
    /// those whose lists left the window; recounts `dets` if any went.
    #[inline(always)]
    fn drop_ended(&mut self, table: &mut Vec<Entry>, dets: &mut u64, expired: bool, tau: i64) {
        if !self.scratch.dying.is_empty() || expired {
            self.drop_ended_slow(table, dets, expired, tau);
        }
    }

    /// The work of [`Runtime::drop_ended`] when something ends.
    fn drop_ended_slow(&mut self, table: &mut Vec<Entry>, dets: &mut u64, expired: bool, tau: i64) {
        if !self.scratch.dying.is_empty() {
            self.drop_dying(table);
        }
        if expired {
            self.drop_expired(table, tau);
        }
        *dets = dets_of(table);
    }

    /// Removes the entries recorded in `self.scratch.dying` (ascending indices), recycling
    /// their buffers.
    #[inline]
    fn drop_dying(&mut self, table: &mut Vec<Entry>) {
        for &i in self.scratch.dying.iter().rev() {
            let entry = table.remove(i);
            self.scratch.pool.push(entry.ul);
        }
    }

    /// Removes the entries whose list expired, recycling their buffers.
    fn drop_expired(&mut self, table: &mut Vec<Entry>, tau: i64) {
        let pool = &mut self.scratch.pool;
        table.retain_mut(|e| {
            let keep = e.head_max() >= tau;
            if !keep {
                pool.push(std::mem::take(&mut e.ul));
            }
            keep
        });
    }
}
