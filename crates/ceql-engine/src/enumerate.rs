//! Algorithm 2 of [CORE] (docs/language.md#s6-5): enumerates the complex events below a
//! tECS node that start inside the window, with output-linear delay.
//!
//! The stack holds (node, partial data list) pairs; the data list is a persistent
//! cons-list in a scratch vector, so pushing is O(1). Because the stack is LIFO, no
//! remaining entry refers to a cons cell created after it was pushed, so the cells
//! are truncated on every pop: the scratch space is bounded by the DAG depth, not by
//! the size of the output.

use crate::output::{MatchBuffer, Position};
use crate::tecs::{Arena, Item, NodeKind, NodeRef};

const NIL: u32 = u32::MAX;

/// The pruning test of [`Enumerator::for_each_valuation`]: whether to go on below a
/// partial valuation (its position words, ascending).
pub type Keep<'a> = &'a mut dyn FnMut(&[u64]) -> bool;

/// Reusable enumeration buffers.
#[derive(Default)]
pub struct Enumerator {
    /// (node, head of its data list, cons length when pushed).
    stack: Vec<(NodeRef, u32, u32)>,
    /// Cons cells: (position, next cell).
    cons: Vec<(u64, u32)>,
    /// The partial valuation handed to the pruning test of [`Enumerator::for_each_valuation`].
    partial: Vec<u64>,
}

impl Enumerator {
    /// Appends to `out` the complex events `([start, end], D)` of `root` with
    /// `w(start) ≥ tau`, at most `budget` of them; returns how many were appended.
    ///
    /// `CAP`: the nodes' position words carry capture labels (captures on); each
    /// position is written with its label, and a begin node's start is its
    /// position without the label.
    pub fn enumerate<P: Position, const CAP: bool>(
        &mut self,
        arena: &Arena,
        root: Item,
        end: u64,
        tau: i64,
        budget: u64,
        out: &mut MatchBuffer<P>,
    ) -> u64 {
        if root.max < tau || budget == 0 {
            return 0;
        }
        self.stack.clear();
        self.cons.clear();
        self.stack.push((root.node, NIL, 0));
        let mut emitted = 0;
        while let Some((mut m, mut p, cons_len)) = self.stack.pop() {
            self.cons.truncate(cons_len as usize);
            loop {
                let node = arena.get(m);
                match m.kind() {
                    kind @ (NodeKind::Bottom | NodeKind::Begin) => {
                        let start = if CAP { node.a & crate::cea::POSITION_MASK } else { node.a };
                        if !out.begin(start, end) {
                            return emitted;
                        }
                        // A begin node also marks its own position, the first one.
                        if kind == NodeKind::Begin && !push::<P, CAP>(out, node.a) {
                            return emitted;
                        }
                        let mut cell = p;
                        while cell != NIL {
                            let (pos, next) = self.cons[cell as usize];
                            if !push::<P, CAP>(out, pos) {
                                return emitted;
                            }
                            cell = next;
                        }
                        out.finish();
                        emitted += 1;
                        if emitted == budget {
                            return emitted;
                        }
                        break;
                    }
                    NodeKind::Output => {
                        self.cons.push((node.a, p));
                        p = (self.cons.len() - 1) as u32;
                        m = NodeRef(node.b);
                    }
                    NodeKind::Union => {
                        let right = NodeRef(node.b);
                        if arena.live_max(right) >= tau {
                            self.stack.push((right, p, self.cons.len() as u32));
                        }
                        m = NodeRef(node.a);
                    }
                }
            }
        }
        emitted
    }

    /// Algorithm 2 with captures on, one valuation at a time: each valuation of
    /// `root` starting inside the window is written alone into `one` (cleared
    /// before each) and handed to `each`, which returns whether to go on. Used by
    /// filters between events (docs/design/correlation.md, section 3.2), whose valuations are
    /// tested as they come instead of being collected first: the memory is one
    /// valuation, however many there are.
    ///
    /// `keep`, if given, sees each partial valuation as it grows backwards (its
    /// position words, ascending: the positions from the latest one added to the end);
    /// when it says no, every valuation that extends it is skipped (pruning: a for-all
    /// that fails on some positions fails on every superset of them). Without it
    /// (nothing to prune) the partial valuations are not built.
    #[allow(clippy::too_many_arguments)]
    pub fn for_each_valuation(
        &mut self,
        arena: &Arena,
        root: Item,
        end: u64,
        tau: i64,
        one: &mut MatchBuffer<u64>,
        mut keep: Option<Keep<'_>>,
        each: &mut dyn FnMut(&MatchBuffer<u64>) -> bool,
    ) -> bool {
        let mut partial = std::mem::take(&mut self.partial);
        let go_on = self.valuations(arena, root, end, tau, one, &mut keep, each, &mut partial);
        self.partial = partial;
        go_on
    }

    /// The body of [`Enumerator::for_each_valuation`], with its scratch list.
    #[allow(clippy::too_many_arguments)]
    fn valuations(
        &mut self,
        arena: &Arena,
        root: Item,
        end: u64,
        tau: i64,
        one: &mut MatchBuffer<u64>,
        keep: &mut Option<Keep<'_>>,
        each: &mut dyn FnMut(&MatchBuffer<u64>) -> bool,
        partial: &mut Vec<u64>,
    ) -> bool {
        if root.max < tau {
            return true;
        }
        self.stack.clear();
        self.cons.clear();
        self.stack.push((root.node, NIL, 0));
        while let Some((mut m, mut p, cons_len)) = self.stack.pop() {
            self.cons.truncate(cons_len as usize);
            loop {
                let node = arena.get(m);
                match m.kind() {
                    kind @ (NodeKind::Bottom | NodeKind::Begin) => {
                        one.clear();
                        let ok = one.begin(node.a & crate::cea::POSITION_MASK, end)
                            && (kind != NodeKind::Begin || one.push_labelled_position(node.a));
                        let mut cell = p;
                        let mut ok = ok;
                        while ok && cell != NIL {
                            let (pos, next) = self.cons[cell as usize];
                            ok = one.push_labelled_position(pos);
                            cell = next;
                        }
                        if !ok {
                            return false;
                        }
                        one.finish();
                        if !each(one) {
                            return false;
                        }
                        break;
                    }
                    NodeKind::Output => {
                        self.cons.push((node.a, p));
                        p = (self.cons.len() - 1) as u32;
                        if let Some(keep) = keep.as_mut() {
                            partial.clear();
                            let mut cell = p;
                            while cell != NIL {
                                let (pos, next) = self.cons[cell as usize];
                                partial.push(pos);
                                cell = next;
                            }
                            if !keep(partial) {
                                break;
                            }
                        }
                        m = NodeRef(node.b);
                    }
                    NodeKind::Union => {
                        let right = NodeRef(node.b);
                        if arena.live_max(right) >= tau {
                            self.stack.push((right, p, self.cons.len() as u32));
                        }
                        m = NodeRef(node.a);
                    }
                }
            }
        }
        true
    }
}

/// Writes one position word: with `CAP`, a labelled position.
#[inline(always)]
fn push<P: Position, const CAP: bool>(out: &mut MatchBuffer<P>, word: u64) -> bool {
    if CAP {
        out.push_labelled_position(word)
    } else {
        out.push_position(word)
    }
}
