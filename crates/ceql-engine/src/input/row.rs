//! One event as the engine reads it: its attribute values by slot. Every input path
//! (a slice of values, a row of an Arrow batch) implements [`Row`].

use crate::value::ValueRef;

/// Index of an attribute in the runtime's attribute layout (the names the query reads).
pub type AttrSlot = u32;

/// Read access to the attributes of one event, by slot.
pub trait Row {
    /// The value of attribute `slot` (`Absent` when the event does not carry it).
    fn get(&self, slot: AttrSlot) -> ValueRef<'_>;
}

impl Row for [ValueRef<'_>] {
    #[inline]
    fn get(&self, slot: AttrSlot) -> ValueRef<'_> {
        self.get(slot as usize).copied().unwrap_or(ValueRef::Absent)
    }
}
