//! The node arena: nodes are allocated in id order in fixed-size chunks, and whole
//! chunks are dropped once every node in them was created at a window coordinate
//! below the threshold `τ` (docs/language.md#s6-7). Such nodes can never be visited again:
//! a node is created at a coordinate ≥ every start below it, enumeration only enters
//! nodes with `max ≥ τ`, and `τ` never decreases.

use super::node::{Node, NodeKind, NodeRef};
use std::collections::VecDeque;

/// Nodes per chunk (96 KiB chunks).
pub const CHUNK_NODES: usize = 4096;
const CHUNK_SHIFT: u32 = 12;
const SPARE_CHUNKS: usize = 4;

/// Chunked node storage addressed by integer ids. The chunk being filled is kept
/// apart from the full ones, so that allocating is a store into a slice.
pub struct Arena {
    /// Full chunks, oldest first.
    full: VecDeque<Vec<Node>>,
    /// Largest creation coordinate of the nodes of each full chunk.
    full_coord: VecDeque<i64>,
    /// `full_coord[0]`, or `i64::MAX` when there is no full chunk: read on every
    /// event, so kept where reading it is one load.
    oldest_full: i64,
    /// Id of the first node of `full[0]` (or of `current` when there is no full chunk).
    base: u64,
    /// The chunk being filled (capacity `CHUNK_NODES`; nodes are pushed, so a
    /// fresh chunk is never zeroed).
    current: Vec<Node>,
    spare: Vec<Vec<Node>>,
    /// Creation coordinate of the nodes being allocated (the current event's `w(j)`).
    coord: i64,
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

fn chunk() -> Vec<Node> {
    let mut nodes = Vec::with_capacity(CHUNK_NODES);
    // A fresh chunk is only needed when the window holds many chunks (recycled
    // ones are reused); map its pages at once instead of faulting them one by one.
    crate::memory::prefault_spare(&mut nodes);
    nodes
}

/// How far ahead of the next free slot [`prefetch_ahead`] asks for memory, in nodes
/// (four cache lines).
const PREFETCH_NODES: usize = 11;

/// Asks the CPU to bring the cache line `PREFETCH_NODES` slots past the end of
/// `chunk` into cache before a node is stored there. With a window larger than the
/// cache, a recycled chunk was last written a whole window ago, so without this
/// every new node's store would wait for its line to come from memory.
#[inline(always)]
fn prefetch_ahead(chunk: &[Node]) {
    #[cfg(target_arch = "x86_64")]
    {
        // A prefetch never faults, so an address past the allocation is harmless;
        // wrapping_add keeps the pointer arithmetic defined.
        let p = chunk.as_ptr().wrapping_add(chunk.len() + PREFETCH_NODES);
        // SAFETY: _mm_prefetch only hints the cache; it does not access memory.
        unsafe { std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = chunk;
}

impl Arena {
    /// An empty arena.
    pub fn new() -> Self {
        Arena {
            full: VecDeque::new(),
            full_coord: VecDeque::new(),
            oldest_full: i64::MAX,
            base: 0,
            current: chunk(),
            spare: Vec::new(),
            coord: i64::MIN,
        }
    }

    /// Sets the creation coordinate of the nodes allocated next (non-decreasing).
    #[inline]
    pub fn set_coordinate(&mut self, w: i64) {
        debug_assert!(w >= self.coord, "window coordinates are non-decreasing");
        self.coord = w;
    }

    /// Id of the first node of the current chunk.
    #[inline]
    fn current_base(&self) -> u64 {
        self.base + (self.full.len() * CHUNK_NODES) as u64
    }

    /// The ids of the nodes held: from the base (older chunks were reclaimed) to
    /// the next node to be allocated.
    pub fn ids(&self) -> std::ops::Range<u64> {
        self.base..self.next_id()
    }

    /// Id of the next node.
    #[inline]
    fn next_id(&self) -> u64 {
        self.current_base() + self.current.len() as u64
    }

    #[inline]
    fn alloc(&mut self, node: Node) -> u64 {
        if self.current.len() == CHUNK_NODES {
            self.seal_current();
        }
        let id = self.next_id();
        self.current.push(node);
        prefetch_ahead(&self.current);
        id
    }

    #[cold]
    fn seal_current(&mut self) {
        let fresh = self.spare.pop().unwrap_or_else(chunk);
        let full = std::mem::replace(&mut self.current, fresh);
        self.full.push_back(full);
        self.full_coord.push_back(self.coord);
        self.oldest_full = self.oldest_full.min(self.coord);
    }

    /// The node behind `r`. Debug builds check that it was not reclaimed.
    #[inline]
    pub fn get(&self, r: NodeRef) -> &Node {
        let id = r.id();
        debug_assert!(id >= self.base, "node {id} was reclaimed (base {})", self.base);
        debug_assert!(id < self.next_id(), "node {id} does not exist yet");
        let offset = (id - self.base) as usize;
        let (c, i) = (offset >> CHUNK_SHIFT, offset & (CHUNK_NODES - 1));
        if c < self.full.len() {
            &self.full[c][i]
        } else {
            &self.current[i]
        }
    }

    /// `max` of the node behind `r`, or `i64::MIN` when its chunk was reclaimed. A
    /// reclaimed node was created below some earlier `τ`, and a node's `max` is at
    /// most its creation coordinate, so it is outside the window for good: any value
    /// below every future `τ` stands for it.
    #[inline]
    pub fn live_max(&self, r: NodeRef) -> i64 {
        if r.id() < self.base {
            i64::MIN
        } else {
            self.get(r).max
        }
    }

    /// `new-bottom(i)` with `max = w(i)`.
    #[inline]
    pub fn bottom(&mut self, pos: u64, w: i64) -> NodeRef {
        let id = self.alloc(Node { a: pos, b: 0, max: w });
        NodeRef::new(id, NodeKind::Bottom, 0, 0)
    }

    /// `extend(new-bottom(i), i)` as one node, with `max = w(i)`.
    #[inline]
    pub fn begin(&mut self, pos: u64, w: i64) -> NodeRef {
        let id = self.alloc(Node { a: pos, b: 0, max: w });
        NodeRef::new(id, NodeKind::Begin, 0, 0)
    }

    /// `extend(next, j)`: an output node at position `j`; `max = max(next)`.
    #[inline]
    pub fn output(&mut self, pos: u64, next: NodeRef, next_max: i64) -> NodeRef {
        let id = self.alloc(Node { a: pos, b: next.0, max: next_max });
        NodeRef::new(id, NodeKind::Output, 0, 0)
    }

    /// `U(left, right)`, a raw union node; callers keep the tECS invariants.
    #[inline]
    pub fn union_node(&mut self, left: NodeRef, left_max: i64, right: NodeRef, right_max: i64) -> NodeRef {
        debug_assert!(left_max >= right_max, "time-ordered: max(left) ≥ max(right)");
        let odepth = 1 + left.odepth();
        debug_assert!(odepth <= 3, "3-bounded");
        let id = self.alloc(Node { a: left.0, b: right.0, max: left_max });
        NodeRef::new(id, NodeKind::Union, odepth, right.odepth())
    }

    /// Frees the leading full chunks whose nodes were all created below `tau`. The
    /// chunk being filled is never freed.
    #[inline]
    pub fn expire(&mut self, tau: i64) {
        while self.full_coord.front().is_some_and(|&c| c < tau) {
            let chunk = self.full.pop_front().expect("one coordinate per full chunk");
            self.full_coord.pop_front();
            self.base += CHUNK_NODES as u64;
            if self.spare.len() < SPARE_CHUNKS {
                let mut chunk = chunk;
                chunk.clear();
                self.spare.push(chunk);
            }
        }
        self.oldest_full = self.full_coord.front().copied().unwrap_or(i64::MAX);
    }

    /// Creation coordinate of the oldest full chunk (`i64::MAX` when there is none):
    /// nothing expires while `τ` is not above it.
    #[inline]
    pub fn oldest_full_coordinate(&self) -> i64 {
        self.oldest_full
    }

    /// Nodes currently stored (live chunks).
    pub fn live_nodes(&self) -> u64 {
        self.next_id() - self.base
    }

    /// Nodes ever allocated.
    pub fn allocated(&self) -> u64 {
        self.next_id()
    }

    /// Heap bytes held by chunks (live and spare).
    pub fn memory_bytes(&self) -> usize {
        (self.full.len() + 1 + self.spare.len()) * CHUNK_NODES * std::mem::size_of::<Node>()
    }

    /// The live nodes, for snapshots: (first id, nodes in id order).
    pub fn export(&self) -> (u64, Vec<Node>) {
        let mut nodes = Vec::with_capacity(self.live_nodes() as usize);
        for c in &self.full {
            nodes.extend_from_slice(c);
        }
        nodes.extend_from_slice(&self.current);
        (self.base, nodes)
    }

    /// Rebuilds an arena from [`Arena::export`] output. `coord` is the creation
    /// coordinate recorded for every restored chunk.
    pub fn import(base: u64, nodes: &[Node], coord: i64) -> Arena {
        let mut a = Arena::new();
        debug_assert_eq!(base % CHUNK_NODES as u64, 0);
        a.base = base;
        a.coord = coord;
        for n in nodes {
            a.alloc(*n);
        }
        a
    }
}
