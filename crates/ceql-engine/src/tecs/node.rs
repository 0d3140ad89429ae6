//! Node layout. A node is three words; a [`NodeRef`] is a "fat" id that also carries
//! the node's kind and, for union nodes, `odepth` and the `odepth` of the right
//! child, so that the safety checks never need to read a child node.
//!
//! A union node does not store the `max` of its right child: that is read from the
//! child itself when needed ([`super::Arena::live_max`]), which reports a child in a
//! reclaimed chunk as expired. Three words instead of four is a quarter less fresh
//! memory per node, which is what a very large window pays for.

/// Kind of a tECS node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// `new-bottom(i)`: the open complex event `(i, ∅)`.
    Bottom,
    /// `extend(n, j)`: adds position `j` to every open complex event of `n`.
    Output,
    /// `⟦left⟧ ∪ ⟦right⟧`.
    Union,
    /// `extend(new-bottom(i), i)` in one node: a run that starts at `i` and marks
    /// it, the commonest way a run starts. One node instead of two.
    Begin,
}

const TAG_SHIFT: u32 = 62;
const ODEPTH_SHIFT: u32 = 60;
const RIGHT_ODEPTH_SHIFT: u32 = 58;
/// Node ids use the low 58 bits.
pub const ID_MASK: u64 = (1 << RIGHT_ODEPTH_SHIFT) - 1;

/// A reference to a node: id plus kind and odepth bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct NodeRef(pub u64);

impl NodeRef {
    /// Builds a reference.
    #[inline]
    pub fn new(id: u64, kind: NodeKind, odepth: u64, right_odepth: u64) -> NodeRef {
        debug_assert!(id <= ID_MASK);
        debug_assert!(odepth <= 3 && right_odepth <= 3, "3-bounded");
        let tag = match kind {
            NodeKind::Bottom => 0,
            NodeKind::Output => 1,
            NodeKind::Union => 2,
            NodeKind::Begin => 3,
        };
        NodeRef(tag << TAG_SHIFT | odepth << ODEPTH_SHIFT | right_odepth << RIGHT_ODEPTH_SHIFT | id)
    }

    /// The node id (allocation order).
    #[inline]
    pub fn id(self) -> u64 {
        self.0 & ID_MASK
    }

    /// The node kind.
    #[inline]
    pub fn kind(self) -> NodeKind {
        match self.0 >> TAG_SHIFT {
            0 => NodeKind::Bottom,
            1 => NodeKind::Output,
            2 => NodeKind::Union,
            _ => NodeKind::Begin,
        }
    }

    /// `odepth(n)`: 0 for non-union nodes, `1 + odepth(left)` for union nodes.
    #[inline]
    pub fn odepth(self) -> u64 {
        self.0 >> ODEPTH_SHIFT & 3
    }

    /// `odepth(right(n))` for a union node.
    #[inline]
    pub fn right_odepth(self) -> u64 {
        self.0 >> RIGHT_ODEPTH_SHIFT & 3
    }

    /// Safe nodes (docs/language.md#s6-2): non-union, or `odepth = 1` with a right child of
    /// `odepth ≤ 2`. Only safe nodes may be given to `union`, `new-ulist`, `insert`.
    #[inline]
    pub fn is_safe(self) -> bool {
        self.kind() != NodeKind::Union || (self.odepth() == 1 && self.right_odepth() <= 2)
    }
}

/// A node. Fields by kind:
///
/// | kind   | `a`                | `b`               |
/// |--------|--------------------|-------------------|
/// | bottom | position `i`       | —                 |
/// | begin  | position `i`       | —                 |
/// | output | position `j`       | `next` (NodeRef)  |
/// | union  | `left` (NodeRef)   | `right` (NodeRef) |
///
/// `max` is the largest start (in window coordinates) below the node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[repr(C)]
pub struct Node {
    /// Position, or left child.
    pub a: u64,
    /// Next / right child.
    pub b: u64,
    /// `max(n)`.
    pub max: i64,
}
