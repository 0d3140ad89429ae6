//! The integer type of the positions a [`MatchBuffer`](super::MatchBuffer) stores.
//!
//! Positions are `u64` in the engine. An output that will be materialised whole
//! (`Query.run_arrow` over a table of known length) can store them as `u32`
//! instead: a three-event match then takes 36 bytes instead of 56, and most of the
//! cost of a large output is the kernel supplying fresh pages for it.

use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::ArrowPrimitiveType;
use arrow_buffer::ArrowNativeType;
use std::fmt::Debug;
use std::hash::Hash;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// An unsigned integer type for output positions: `u64` (any stream) or `u32`
/// (streams of at most 2^32 events; the runtime refuses an event beyond that
/// with an error instead of truncating its position).
pub trait Position:
    ArrowNativeType + Default + Eq + Ord + Hash + Debug + Send + Sync + 'static + sealed::Sealed
{
    /// The largest position the type holds.
    const MAX: u64;
    /// The Arrow type of the output's position columns.
    type Arrow: ArrowPrimitiveType<Native = Self>;
    /// `p` in this type; the caller guarantees `p <= Self::MAX`.
    fn narrow(p: u64) -> Self;
    /// The position as `u64`.
    fn widen(self) -> u64;
}

impl Position for u64 {
    const MAX: u64 = u64::MAX;
    type Arrow = UInt64Type;
    #[inline(always)]
    fn narrow(p: u64) -> Self {
        p
    }
    #[inline(always)]
    fn widen(self) -> u64 {
        self
    }
}

impl Position for u32 {
    const MAX: u64 = u32::MAX as u64;
    type Arrow = UInt32Type;
    #[inline(always)]
    fn narrow(p: u64) -> Self {
        debug_assert!(p <= <Self as Position>::MAX, "position {p} does not fit in u32");
        p as u32
    }
    #[inline(always)]
    fn widen(self) -> u64 {
        self as u64
    }
}
