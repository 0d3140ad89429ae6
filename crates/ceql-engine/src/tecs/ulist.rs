//! Union-lists (docs/language.md#s6-4): `[n0, n1, ..., nk]`, safe nodes with `n0`
//! non-union, `max(n0) ≥ max(ni)` and a strictly decreasing tail. A union-list
//! stands for the union of its nodes without building it until needed (`merge`).

use super::arena::Arena;
use super::node::{NodeKind, NodeRef};

/// A node together with its `max`, as stored in union-lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Item {
    /// The node.
    pub node: NodeRef,
    /// `max(node)`.
    pub max: i64,
}

/// A union-list. Its buffer is recycled through a pool by the evaluator.
pub type UnionList = Vec<Item>;

impl Arena {
    /// `insert(ul, n)`; precondition: `n` safe, `max(n) ≤ max(n0)`.
    pub fn ulist_insert(&mut self, ul: &mut UnionList, n: Item) {
        debug_assert!(n.node.is_safe());
        debug_assert!(n.max <= ul[0].max, "processing order: inserted max ≤ head max");
        for i in 1..ul.len() {
            if ul[i].max == n.max {
                ul[i] = self.union(ul[i], n);
                return;
            }
            if ul[i].max < n.max {
                ul.insert(i, n);
                return;
            }
        }
        ul.push(n);
    }

    /// `merge(ul)`: `U(n0, U(n1, ... U(n_{k−1}, nk)))`, built right to left.
    pub fn ulist_merge(&mut self, ul: &[Item]) -> Item {
        debug_assert!(ul[0].node.kind() != NodeKind::Union, "head of a union-list is not a union node");
        let Some((&last, init)) = ul.split_last() else { unreachable!("union-lists are non-empty") };
        let mut acc = last;
        for &n in init.iter().rev() {
            acc = Item { node: self.union_node(n.node, n.max, acc.node, acc.max), max: n.max };
        }
        debug_assert!(acc.node.is_safe());
        acc
    }
}

/// `prune(ul, τ)`: drops entries with `max < τ`; returns false when the whole list
/// expired (its head is expired).
#[inline]
pub fn prune(ul: &mut UnionList, tau: i64) -> bool {
    if ul[0].max < tau {
        return false;
    }
    // Nothing to cut when the last (smallest) entry is still in the window.
    if ul[ul.len() - 1].max >= tau {
        return true;
    }
    // The tail is strictly decreasing: cut at the first expired entry.
    if let Some(i) = ul[1..].iter().position(|it| it.max < tau) {
        ul.truncate(i + 1);
    }
    true
}

/// Checks the union-list invariants (debug builds).
pub fn check_invariants(ul: &UnionList) -> bool {
    !ul.is_empty()
        && ul[0].node.kind() != NodeKind::Union
        && ul.iter().all(|i| i.node.is_safe() && i.max <= ul[0].max)
        && ul.windows(2).skip(1).all(|w| w[0].max > w[1].max)
}

/// `new-ulist(n)` for a non-union `n`, reusing a buffer from `pool`.
pub fn new_ulist(n: Item, pool: &mut Vec<UnionList>) -> UnionList {
    debug_assert!(n.node.kind() != NodeKind::Union);
    let mut ul = pool.pop().unwrap_or_default();
    ul.clear();
    ul.push(n);
    ul
}
