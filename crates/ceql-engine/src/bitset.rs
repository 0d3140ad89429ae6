//! Fixed-width bit sets over `u64` words. Used for sets of automaton states (the
//! det-states of docs/language.md#s5-6) and sets of variables; the width is fixed per query so that
//! sets can live side by side in flat buffers.

/// Number of `u64` words needed for `bits` bits (at least one).
#[inline]
pub fn words_for(bits: usize) -> usize {
    bits.div_ceil(64).max(1)
}

/// Sets bit `i`.
#[inline]
pub fn set(words: &mut [u64], i: usize) {
    words[i / 64] |= 1u64 << (i % 64);
}

/// Tests bit `i`.
#[inline]
pub fn test(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}

/// True if no bit is set.
#[inline]
pub fn is_empty(words: &[u64]) -> bool {
    words.iter().all(|&w| w == 0)
}

/// Iterates the set bits in increasing order.
pub fn iter(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(wi, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let b = w.trailing_zeros() as usize;
            w &= w - 1;
            Some(wi * 64 + b)
        })
    })
}

/// True if `a ∩ b ≠ ∅`.
#[inline]
pub fn intersects(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

/// A growable set of small integers (variables of a query).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    /// The empty set.
    pub fn new() -> Self {
        BitSet { words: Vec::new() }
    }

    /// Adds `i`.
    pub fn insert(&mut self, i: usize) {
        if self.words.len() <= i / 64 {
            self.words.resize(i / 64 + 1, 0);
        }
        set(&mut self.words, i);
    }

    /// Tests `i`.
    pub fn contains(&self, i: usize) -> bool {
        i / 64 < self.words.len() && test(&self.words, i)
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        is_empty(&self.words)
    }

    /// Adds every element of `other`.
    pub fn union_with(&mut self, other: &BitSet) {
        if self.words.len() < other.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// True if the sets share an element.
    pub fn intersects(&self, other: &BitSet) -> bool {
        intersects(&self.words, &other.words)
    }

    /// Keeps only the elements of `other`.
    pub fn intersect_with(&mut self, other: &BitSet) {
        for (i, a) in self.words.iter_mut().enumerate() {
            *a &= other.words.get(i).copied().unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitset_basics() {
        let mut s = BitSet::new();
        s.insert(3);
        s.insert(130);
        assert!(s.contains(3) && s.contains(130) && !s.contains(4));
        assert_eq!(iter(&s.words).collect::<Vec<_>>(), vec![3, 130]);
        let mut t = BitSet::new();
        t.insert(130);
        assert!(s.intersects(&t));
        assert_eq!(words_for(64), 1);
        assert_eq!(words_for(65), 2);
    }
}
