//! The targets (`S>T` of the query) of the type and stream names met in one Arrow
//! batch: most batches name a handful of types, so each distinct name is resolved
//! once and later rows cost one memo read.

use super::{Runtime, Target};
use crate::error::EventError;
use crate::input::StrColumn;

/// Memo of type/stream names → target within one batch (few distinct names).
pub(super) struct TargetMemo<'a> {
    /// Targets of dictionary keys of the type column, for rows without a stream.
    pub(super) by_key: Vec<Option<Target>>,
    /// Targets of type names for rows without a stream, direct-mapped by
    /// [`NameKey::slot`]: one slot read and an integer comparison per event.
    by_slot: Vec<Option<(NameKey, &'a str, Target)>>,
    /// Every (type, stream) resolved, up to [`MEMO_NAMES`]: for names that share a
    /// slot, and for rows that name their stream.
    by_name: Vec<(&'a str, Option<&'a str>, Target)>,
}

const MEMO_NAMES: usize = 256;

/// Slots of [`TargetMemo::by_slot`] (a power of two).
const NAME_SLOTS: usize = 256;

impl<'a> TargetMemo<'a> {
    pub(super) fn new() -> Self {
        TargetMemo { by_key: Vec::new(), by_slot: vec![None; NAME_SLOTS], by_name: Vec::new() }
    }

    /// The target of a type name already resolved for a row without a stream.
    #[inline(always)]
    pub(super) fn named(&self, ty: &str) -> Option<Target> {
        let key = NameKey::of(ty);
        match self.by_slot[key.slot()] {
            Some((k, name, target)) if k == key && (key.len <= 16 || name == ty) => Some(target),
            _ => None,
        }
    }

    /// Remembers the target of a type name for rows without a stream.
    fn remember(&mut self, ty: &'a str, target: Target) {
        let key = NameKey::of(ty);
        self.by_slot[key.slot()] = Some((key, ty, target));
    }

    /// Resolves the target of `row` from its type and stream names, remembering it
    /// for the rows that follow; errors for a NULL type or an unresolvable name.
    pub(super) fn resolve(
        &mut self,
        rt: &Runtime,
        types: &StrColumn<'a>,
        streams: Option<&StrColumn<'a>>,
        row: usize,
    ) -> Result<Target, EventError> {
        let Some(ty) = types.get(row) else {
            return Err(EventError::new(rt.next_position(), &rt.config.options.type_field, None, "event type is null"));
        };
        let stream = streams.and_then(|s| s.get(row));
        let err = |(field, msg): (&'static str, String)| EventError::new(rt.next_position(), field, Some(ty), msg);
        // Dictionary-encoded types without a stream: resolve each key once.
        if let (Some(k), None) = (types.key(row), stream) {
            let target = rt.resolve_target(None, ty).map_err(err)?;
            if self.by_key.len() <= k {
                self.by_key.resize(k + 1, None);
            }
            self.by_key[k] = Some(target);
            return Ok(target);
        }
        let target = match self.by_name.iter().find(|&&(t, s, _)| t == ty && s == stream) {
            Some(&(_, _, target)) => target,
            None => {
                let target = rt.resolve_target(stream, ty).map_err(err)?;
                if self.by_name.len() < MEMO_NAMES {
                    self.by_name.push((ty, stream, target));
                }
                target
            }
        };
        if stream.is_none() {
            self.remember(ty, target);
        }
        Ok(target)
    }
}

/// A type name's length and two words that hold every byte of a name of up to
/// 16 bytes (overlapping loads), so that such names are compared as three integers.
#[derive(Clone, Copy, PartialEq, Eq)]
struct NameKey {
    len: usize,
    head: u64,
    tail: u64,
}

impl NameKey {
    #[inline(always)]
    fn of(name: &str) -> NameKey {
        let b = name.as_bytes();
        let n = b.len();
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let half = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes")) as u64;
        let (head, tail) = match n {
            8.. => (word(0), word(n - 8)),
            4..=7 => (half(0), half(n - 4)),
            1..=3 => (b[0] as u64 | (b[n / 2] as u64) << 8, b[n - 1] as u64),
            0 => (0, 0),
        };
        NameKey { len: n, head, tail }
    }

    /// Slot in [`TargetMemo::by_slot`]: the key mixed by one multiplication.
    #[inline(always)]
    fn slot(self) -> usize {
        let mixed = (self.head ^ self.tail.rotate_left(29) ^ self.len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> (64 - NAME_SLOTS.trailing_zeros())) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::NameKey;

    /// Names of up to 16 bytes are compared by their keys alone: a change in any
    /// byte, or in the length, must change the key.
    #[test]
    fn name_keys_of_short_names_see_every_byte() {
        for len in 0..=16 {
            let base = "x".repeat(len);
            for i in 0..len {
                let mut other = base.clone().into_bytes();
                other[i] = b'y';
                let other = String::from_utf8(other).unwrap();
                assert!(NameKey::of(&base) != NameKey::of(&other), "length {len}, byte {i}");
            }
            assert!(NameKey::of(&base) != NameKey::of(&"x".repeat(len + 1)), "length {len}");
            assert!(NameKey::of(&base) == NameKey::of(&base.clone()));
        }
    }
}
