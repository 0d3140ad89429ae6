//! The timed Enumerable Compact Set of [CORE] §5 (docs/language.md#s6-2 to #s6-4): an immutable
//! DAG of bottom, begin, output and union nodes stored in an arena, with the union gadgets
//! and union-lists that keep every update constant-time.

mod arena;
mod check;
mod node;
#[cfg(test)]
mod tests;
mod ulist;
mod union;

pub use arena::{Arena, CHUNK_NODES};
pub use node::{Node, NodeKind, NodeRef};
pub use ulist::{check_invariants, new_ulist, prune, Item, UnionList};
