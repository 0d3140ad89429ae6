//! Event classes (docs/language.md#s5-3): an event's class is its type plus the bit vector
//! of its type's predicates. Classes are interned to dense ids so that the
//! determinizer can index its transition rows by class.

use crate::bitset;
use crate::schema::TypeId;
use std::collections::HashMap;

/// Dense id of an event class: the column of the cache's transition rows. Ids
/// are issued in the order classes are met and start again from 0 at each cache
/// clear, so a class id only lives for the event it was computed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct ClassId(u32);

impl ClassId {
    /// In the dense tables only: no class interned for this bit pattern yet.
    const NONE: ClassId = ClassId(u32::MAX);

    /// The class's column in the transition rows.
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The `i`-th class met since the last clear.
    #[inline(always)]
    pub(crate) fn from_index(i: usize) -> ClassId {
        debug_assert!(i < ClassId::NONE.0 as usize, "class ids stay below the sentinel");
        ClassId(i as u32)
    }
}

/// Type id used for events whose type the query does not know (they only occupy
/// their position; only `TRUE` and `NOT` guards accept them).
pub const OTHER_TYPE: TypeId = u32::MAX;

/// Types with at most this many predicates use a direct-indexed table.
const DENSE_BITS: usize = 10;

/// Interned classes.
#[derive(Clone, Debug)]
pub struct ClassTable {
    /// Predicate-bit words per type (index `types.len()` is `OTHER_TYPE`).
    words: Vec<usize>,
    /// Number of predicates per type.
    preds: Vec<usize>,
    /// Class id → (type, offset of its bits in `bits`).
    info: Vec<(TypeId, u32)>,
    bits: Vec<u64>,
    /// Per type with ≤ DENSE_BITS predicates: bit pattern → class.
    dense: Vec<Vec<ClassId>>,
    sparse: HashMap<(TypeId, Box<[u64]>), ClassId, foldhash::fast::RandomState>,
}

impl ClassTable {
    /// A table for types with `preds_per_type[t]` predicates each.
    pub fn new(preds_per_type: &[usize]) -> Self {
        let mut preds = preds_per_type.to_vec();
        preds.push(0); // OTHER_TYPE
        let words = preds.iter().map(|&m| bitset::words_for(m)).collect();
        let dense =
            preds.iter().map(|&m| if m <= DENSE_BITS { vec![ClassId::NONE; 1 << m] } else { Vec::new() }).collect();
        ClassTable { words, preds, info: Vec::new(), bits: Vec::new(), dense, sparse: HashMap::default() }
    }

    /// Words of predicate bits for events of type `ty`.
    #[inline]
    pub fn words_of(&self, ty: TypeId) -> usize {
        self.words[self.type_index(ty)]
    }

    #[inline]
    fn type_index(&self, ty: TypeId) -> usize {
        if ty == OTHER_TYPE {
            self.preds.len() - 1
        } else {
            ty as usize
        }
    }

    /// The class of type `ty` with predicate bits `bits`, interning it if new.
    /// Returns the id and whether it was new.
    #[inline]
    pub fn intern(&mut self, ty: TypeId, bits: &[u64]) -> (ClassId, bool) {
        let ti = self.type_index(ty);
        if self.preds[ti] <= DENSE_BITS {
            let key = bits.first().copied().unwrap_or(0) as usize;
            let id = self.dense[ti][key];
            if id != ClassId::NONE {
                return (id, false);
            }
            let id = self.push(ty, bits);
            self.dense[ti][key] = id;
            return (id, true);
        }
        if let Some(&id) = self.sparse.get(&(ty, Box::from(bits))) {
            return (id, false);
        }
        let id = self.push(ty, bits);
        self.sparse.insert((ty, Box::from(bits)), id);
        (id, true)
    }

    fn push(&mut self, ty: TypeId, bits: &[u64]) -> ClassId {
        self.info.push((ty, self.bits.len() as u32));
        self.bits.extend_from_slice(bits);
        ClassId::from_index(self.info.len() - 1)
    }

    /// Type and predicate bits of a class.
    pub fn get(&self, c: ClassId) -> (TypeId, &[u64]) {
        let (ty, off) = self.info[c.index()];
        let w = self.words_of(ty);
        (ty, &self.bits[off as usize..off as usize + w])
    }

    /// Number of classes.
    pub fn len(&self) -> usize {
        self.info.len()
    }

    /// Approximate heap bytes.
    pub fn memory_bytes(&self) -> usize {
        self.info.len() * 8
            + self.bits.len() * 8
            + self.dense.iter().map(|d| d.len() * 4).sum::<usize>()
            + self.sparse.len() * (48 + 8 * self.words.iter().max().copied().unwrap_or(1))
    }

    /// Forgets every class (ids are only meaningful within one event, so this is
    /// safe between events).
    pub fn clear(&mut self) {
        self.info.clear();
        self.bits.clear();
        for d in &mut self.dense {
            d.iter_mut().for_each(|c| *c = ClassId::NONE);
        }
        self.sparse.clear();
    }
}
