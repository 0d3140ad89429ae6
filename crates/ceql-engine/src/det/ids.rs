//! The ids the determinization cache hands out, and the successors of a det-state
//! on a class: newtypes over `u32`, after regex-automata's `LazyStateID`. They are
//! the same four bytes as bare integers (`#[repr(transparent)]`, accessors always
//! inlined; callgrind instruction counts of the unary workloads within 0.7% of the
//! bare `u32`s, docs/performance.md), but a det-state cannot be taken for a class,
//! a partition, a capture list or a type, and each sentinel has one name and one
//! meaning.

use std::fmt;

/// Id of an interned det-state: the index of its key, its `finals` flag and its
/// row of transitions in the cache. Only [`super::DetCache`] issues ids, and a
/// cache clear renumbers the det-states it keeps ([`super::DetCache::clear`]
/// returns the mapping), so an id means something only to the cache that issued
/// it, until its next clear.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct DetId(u32);

impl DetId {
    /// The initial det-state `{q0}` (with the empty strategy component): the
    /// virtual run that has not started. Always id 0, also after a clear.
    pub const INITIAL: DetId = DetId(0);
    /// No det-state: the runs die (a successor that does not exist).
    pub const DEAD: DetId = DetId(u32::MAX);
    /// In the cache's rows only: successors not computed yet.
    pub(super) const UNKNOWN: DetId = DetId(u32::MAX - 1);

    /// The det-state's index in the cache's tables.
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id of the `i`-th interned det-state (only the cache issues new ones;
    /// this names those it holds).
    #[inline(always)]
    pub(crate) fn from_index(i: usize) -> DetId {
        debug_assert!(i < DetId::UNKNOWN.0 as usize, "det-state ids stay below the sentinels");
        DetId(i as u32)
    }

    /// Whether this is [`DetId::DEAD`].
    #[inline(always)]
    pub fn is_dead(self) -> bool {
        self == DetId::DEAD
    }

    /// The raw value, for the branch-free tests of [`Succ`].
    #[inline(always)]
    fn raw(self) -> u32 {
        self.0
    }
}

impl fmt::Debug for DetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DetId::DEAD => f.write_str("DEAD"),
            DetId::UNKNOWN => f.write_str("UNKNOWN"),
            DetId(d) => write!(f, "d{d}"),
        }
    }
}

/// With captures on: where the `(label, det-state)` pairs of a marked successor
/// start in the cache ([`super::DetCache::marked_list`]). Valid until the next
/// cache clear (in uncached mode, until [`super::DetCache::release_lists`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct ListId(u32);

impl ListId {
    /// The list's offset in the cache's list storage.
    #[inline(always)]
    pub(super) fn index(self) -> usize {
        self.0 as usize
    }

    /// The list starting at offset `i`.
    #[inline(always)]
    pub(super) fn from_index(i: usize) -> ListId {
        debug_assert!(i < DetId::UNKNOWN.0 as usize, "list offsets stay below the sentinels");
        ListId(i as u32)
    }
}

/// The successors of a det-state on one event class.
///
/// Output-marking and non-marking transitions lead to different det-states
/// (I/O-determinization, docs/language.md#s5-6), so that each complex event is
/// stored once in the tECS and Algorithm 1 runs unchanged for every strategy:
///
/// | part | for a det-state of `T` | for the virtual det-state |
/// |---|---|---|
/// | [`Succ::marked`] | reached by output-marking transitions: its runs get a new output node | the runs that start at the event by marking it (one begin node) |
/// | [`Succ::unmarked`] | reached by non-marking transitions: its runs keep their nodes | the runs that start here without marking it (a bottom node; `NOT` first) |
/// | [`Succ::unmarked_other`] | MAX only: a second non-marking successor, with another set `Q` of dominating runs | MAX only: the `NOT` starts, dominated by the binding ones |
/// | [`Succ::next_virtual`] | [`DetId::DEAD`] | its own next det-state: `{q0}` under ALL, with the preorder (NEXT/LAST) or the dominating states (MAX) of every live run |
///
/// Each part is [`DetId::DEAD`] when there is no such successor. With captures
/// on ([`super::DetCache::set_captures`]), the marked part is not a det-state but
/// a list of `(label, det-state)` pairs, one per capture label:
/// [`Succ::marked_list`].
///
/// The four ids are kept as an array, in the order above, and read through the
/// accessors (a 16-byte value, copied out of the cache's row as a whole).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Succ([DetId; 4]);

impl Succ {
    /// In the cache's rows: not computed yet.
    pub(super) const UNKNOWN: Succ = Succ([DetId::UNKNOWN, DetId::DEAD, DetId::DEAD, DetId::DEAD]);

    /// Successors from their parts (captures off, or no marked successor).
    #[inline(always)]
    pub(super) fn new(marked: DetId, unmarked: DetId, unmarked_other: DetId, next_virtual: DetId) -> Succ {
        Succ([marked, unmarked, unmarked_other, next_virtual])
    }

    /// Successors whose marked part is a list of `(label, det-state)` pairs
    /// (captures on).
    #[inline(always)]
    pub(super) fn with_list(list: ListId, unmarked: DetId, unmarked_other: DetId, next_virtual: DetId) -> Succ {
        Succ([DetId(list.0), unmarked, unmarked_other, next_virtual])
    }

    /// Whether these successors were computed (not [`Succ::UNKNOWN`]).
    #[inline(always)]
    pub(super) fn is_known(self) -> bool {
        self.0[0] != DetId::UNKNOWN
    }

    /// Reached by output-marking transitions (captures off; with captures on, see
    /// [`Succ::marked_list`]).
    #[inline(always)]
    pub fn marked(self) -> DetId {
        self.0[0]
    }

    /// Whether there is a marked successor (with captures on, a list).
    #[inline(always)]
    pub fn has_marked(self) -> bool {
        !self.0[0].is_dead()
    }

    /// With captures on: the list of `(label, det-state)` pairs of the marked
    /// successors ([`super::DetCache::marked_list`]); only when
    /// [`Succ::has_marked`].
    #[inline(always)]
    pub fn marked_list(self) -> ListId {
        debug_assert!(self.has_marked(), "no marked successor");
        ListId(self.0[0].raw())
    }

    /// Reached by non-marking transitions.
    #[inline(always)]
    pub fn unmarked(self) -> DetId {
        self.0[1]
    }

    /// MAX only: the second non-marking successor.
    #[inline(always)]
    pub fn unmarked_other(self) -> DetId {
        self.0[2]
    }

    /// Virtual det-state only: its own next det-state.
    #[inline(always)]
    pub fn next_virtual(self) -> DetId {
        self.0[3]
    }

    /// Whether no run continues or starts here: the marked and both unmarked
    /// parts are [`DetId::DEAD`]. One test without a branch per part: the three
    /// are `u32::MAX` exactly when their bitwise AND is.
    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.0[0].raw() & self.0[1].raw() & self.0[2].raw() == DetId::DEAD.raw()
    }

    /// Whether some run continues (or starts) without a new output node.
    #[inline(always)]
    pub fn has_unmarked(self) -> bool {
        !self.unmarked().is_dead() || !self.unmarked_other().is_dead()
    }
}

impl fmt::Debug for Succ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Succ")
            .field("marked", &self.marked())
            .field("unmarked", &self.unmarked())
            .field("unmarked_other", &self.unmarked_other())
            .field("next_virtual", &self.next_virtual())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_read_back_and_the_emptiness_test_agrees_with_the_parts() {
        let d = |i: usize| DetId::from_index(i);
        let ids = [DetId::DEAD, DetId::INITIAL, d(1), d(7)];
        for &m in &ids {
            for &u in &ids {
                for &o in &ids {
                    let s = Succ::new(m, u, o, d(3));
                    assert_eq!((s.marked(), s.unmarked(), s.unmarked_other(), s.next_virtual()), (m, u, o, d(3)));
                    assert_eq!(s.is_empty(), m.is_dead() && u.is_dead() && o.is_dead(), "{s:?}");
                    assert_eq!(s.has_unmarked(), !u.is_dead() || !o.is_dead());
                    assert_eq!(s.has_marked(), !m.is_dead());
                    assert!(s.is_known());
                }
            }
        }
        assert!(!Succ::UNKNOWN.is_known());
    }

    #[test]
    fn a_list_is_read_back_as_a_list() {
        let s = Succ::with_list(ListId::from_index(12), DetId::DEAD, DetId::DEAD, DetId::INITIAL);
        assert!(s.has_marked() && !s.is_empty());
        assert_eq!(s.marked_list(), ListId::from_index(12));
        assert_eq!(s.marked_list().index(), 12);
    }

    #[test]
    fn sentinels_are_named_in_debug_output() {
        assert_eq!(format!("{:?}", DetId::DEAD), "DEAD");
        assert_eq!(format!("{:?}", DetId::from_index(4)), "d4");
        assert_eq!(std::mem::size_of::<Succ>(), 16);
        assert_eq!(std::mem::size_of::<DetId>(), 4);
    }
}
