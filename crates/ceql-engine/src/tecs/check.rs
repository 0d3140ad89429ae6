//! Checks of a tECS read from a snapshot: the arena is rebuilt from bytes that may be
//! damaged, while the enumerator trusts that the nodes form a DAG over positions the
//! stream has issued. A cycle would never end and a stray id would read another node.

use super::arena::Arena;
use super::node::{NodeKind, NodeRef};

impl Arena {
    /// Whether the nodes reachable from `roots` are well formed: each child is an
    /// older node than its parent (so the nodes form a DAG, as the tECS builds them),
    /// no id is beyond the last node, and `fits` accepts the position word of each
    /// node that has one (the caller checks the position, and a capture label where
    /// the automaton puts one above it). Nodes of reclaimed chunks (ids below the
    /// arena's base) are not read, as the evaluation does not read them.
    pub fn well_formed(&self, roots: impl IntoIterator<Item = NodeRef>, fits: impl Fn(u64) -> bool) -> bool {
        let ids = self.ids();
        let mut seen = vec![false; (ids.end - ids.start) as usize];
        let mut todo: Vec<(NodeRef, u64)> = roots.into_iter().map(|r| (r, ids.end)).collect();
        while let Some((r, parent)) = todo.pop() {
            let id = r.id();
            if id >= parent {
                return false;
            }
            if id < ids.start || std::mem::replace(&mut seen[(id - ids.start) as usize], true) {
                continue;
            }
            let n = self.get(r);
            match r.kind() {
                NodeKind::Bottom | NodeKind::Begin | NodeKind::Output if !fits(n.a) => return false,
                NodeKind::Bottom | NodeKind::Begin => {}
                NodeKind::Output => todo.push((NodeRef(n.b), id)),
                NodeKind::Union => todo.extend([(NodeRef(n.a), id), (NodeRef(n.b), id)]),
            }
        }
        true
    }
}
