//! `union(n1, n2)`: the four gadgets of [CORE] Figure 5 (docs/language.md#s6-3). Given two
//! safe nodes with the same `max`, returns a safe node for `⟦n1⟧ ∪ ⟦n2⟧` using at
//! most three new union nodes.

use super::arena::Arena;
use super::node::{NodeKind, NodeRef};
use super::ulist::Item;

impl Arena {
    /// `union(n1, n2)`; precondition: both safe, `max(n1) = max(n2)`.
    pub fn union(&mut self, n1: Item, n2: Item) -> Item {
        debug_assert!(n1.node.is_safe() && n2.node.is_safe(), "union arguments must be safe");
        debug_assert_eq!(n1.max, n2.max, "union arguments have the same max");
        let m = n1.max;
        let u = match (n1.node.kind(), n2.node.kind()) {
            // (a) n1 is not a union node.
            (k, _) if k != NodeKind::Union => self.union_node(n1.node, m, n2.node, m),
            // (b) n1 is a union node and n2 is not.
            (_, k) if k != NodeKind::Union => self.union_node(n2.node, m, n1.node, m),
            // (c), (d) both are union nodes.
            _ => {
                let children = |n: NodeRef| {
                    let x = self.get(n);
                    (NodeRef(x.a), NodeRef(x.b))
                };
                let (left1, right1) = children(n1.node);
                let (left2, right2) = children(n2.node);
                // A right child in a reclaimed chunk counts as i64::MIN: it is out of
                // the window for good, and ordering it last keeps U time-ordered.
                let (rmax1, rmax2) = (self.live_max(right1), self.live_max(right2));
                let (u2, u2_max) = if rmax1 >= rmax2 {
                    (self.union_node(right1, rmax1, right2, rmax2), rmax1)
                } else {
                    (self.union_node(right2, rmax2, right1, rmax1), rmax2)
                };
                let u1 = self.union_node(left2, m, u2, u2_max);
                self.union_node(left1, m, u1, m)
            }
        };
        debug_assert!(u.is_safe(), "union returns a safe node");
        Item { node: u, max: m }
    }
}
