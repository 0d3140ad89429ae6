//! Interned total preorders of automaton states (the `T` of the NEXT/LAST strategy
//! automata, [FCEP] appendix C.3.2): a sequence of disjoint blocks of states, most
//! preferred first. Runs in one block have equal comparison keys.
//!
//! An empty block is a tie marker (NEXT only): the blocks on either side of it have
//! equal keys `K` so far and differ in `D` only, at their common start (reference
//! docs/language.md#s3-6: a run that binds its first event before one that starts with `NOT`). The
//! order between them decides only if their keys stay equal to the end.

use std::collections::HashMap;

/// Id of an interned preorder. Id 0 is the empty preorder (no live run).
pub type PreorderId = u32;

/// The interned preorders of one determinization cache.
#[derive(Default)]
pub struct Preorders {
    words: usize,
    /// Concatenated blocks of every preorder.
    data: Vec<u64>,
    /// (offset in `data`, number of blocks) per id.
    spans: Vec<(u32, u32)>,
    index: HashMap<Box<[u64]>, PreorderId, foldhash::fast::RandomState>,
}

impl Preorders {
    /// A table for state sets of `words` words; interns the empty preorder as id 0.
    pub fn new(words: usize) -> Self {
        let mut p = Preorders { words, ..Default::default() };
        p.intern(&[]);
        p
    }

    /// Interns a preorder given as its blocks concatenated (`words` words each).
    pub fn intern(&mut self, blocks: &[u64]) -> PreorderId {
        debug_assert_eq!(blocks.len() % self.words, 0);
        if let Some(&id) = self.index.get(blocks) {
            return id;
        }
        let id = self.spans.len() as PreorderId;
        self.spans.push((self.data.len() as u32, (blocks.len() / self.words) as u32));
        self.data.extend_from_slice(blocks);
        self.index.insert(Box::from(blocks), id);
        id
    }

    /// The blocks of preorder `id`, concatenated.
    pub fn blocks(&self, id: PreorderId) -> &[u64] {
        let (off, n) = self.spans[id as usize];
        &self.data[off as usize..off as usize + n as usize * self.words]
    }

    /// Approximate heap bytes.
    pub fn memory_bytes(&self) -> usize {
        self.data.len() * 16 + self.spans.len() * 8 + self.index.len() * 48
    }
}
