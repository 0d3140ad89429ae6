//! The attribute values of the events still inside the window (docs/design/correlation.md
//! section 3.3): one row per accepted event, holding only the attributes the residual terms
//! and measures read, trimmed with the window like the tECS (docs/language.md#s6-7).
//!
//! The rows are flat (every row has the same width, the number of stored attributes), so
//! storing an event allocates nothing once the buffers have grown to the window.

use crate::value::{Value, ValueRef};
use std::collections::VecDeque;

/// Rows of stored attribute values, by ascending position.
#[derive(Clone, Debug, Default)]
pub(crate) struct ValueStore {
    /// The position of each row.
    positions: VecDeque<u64>,
    /// The values, `width` per row, row after row.
    values: VecDeque<Value>,
    /// Values per row (fixed by the first row).
    width: usize,
    /// Bytes held by the strings of the rows (for the state budget).
    string_bytes: usize,
}

impl ValueStore {
    /// Appends the row of `position` (positions only grow; every row has the width of
    /// the first).
    pub(crate) fn push(&mut self, position: u64, row: impl Iterator<Item = Value>) {
        debug_assert!(self.positions.back().is_none_or(|p| *p < position));
        let before = self.values.len();
        for v in row {
            self.string_bytes += string_len(&v);
            self.values.push_back(v);
        }
        if self.positions.is_empty() {
            self.width = self.values.len() - before;
        }
        debug_assert_eq!(self.values.len() - before, self.width, "every row has the width of the first");
        self.positions.push_back(position);
    }

    /// The rows with positions strictly between `lo` and `hi`, as row indexes.
    pub(crate) fn rows_between(&self, lo: u64, hi: u64) -> std::ops::Range<usize> {
        let start = self.positions.partition_point(|&p| p <= lo);
        let end = self.positions.partition_point(|&p| p < hi);
        start..end.max(start)
    }

    /// The position of row `i`.
    pub(crate) fn position(&self, i: usize) -> u64 {
        self.positions[i]
    }

    /// Value `a` of row `i`.
    pub(crate) fn value(&self, i: usize, a: usize) -> &Value {
        &self.values[i * self.width + a]
    }

    /// Forgets the rows before `horizon`: no future output can contain them.
    pub(crate) fn trim(&mut self, horizon: u64) {
        while let Some(&p) = self.positions.front() {
            if p >= horizon {
                break;
            }
            self.positions.pop_front();
            for _ in 0..self.width {
                let v = self.values.pop_front().expect("a full row");
                self.string_bytes -= string_len(&v);
            }
        }
    }

    /// Stored attribute `a` of the event at `position` (NULL if it was not stored).
    #[inline]
    pub(crate) fn get(&self, position: u64, a: usize) -> ValueRef<'_> {
        match self.positions.binary_search(&position) {
            Ok(i) if a < self.width => self.values[i * self.width + a].as_ref(),
            _ => ValueRef::Null,
        }
    }

    /// Bytes held (rows, values and strings).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.positions.len() * std::mem::size_of::<u64>()
            + self.values.len() * std::mem::size_of::<Value>()
            + self.string_bytes
    }

    /// The rows, oldest first (snapshots).
    pub(crate) fn export(&self) -> Vec<(u64, Vec<Value>)> {
        self.positions
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, (0..self.width).map(|a| self.values[i * self.width + a].clone()).collect()))
            .collect()
    }

    /// Rebuilds a store from [`ValueStore::export`] rows.
    pub(crate) fn import(rows: Vec<(u64, Vec<Value>)>) -> ValueStore {
        let mut s = ValueStore::default();
        for (p, r) in rows {
            s.push(p, r.into_iter());
            debug_assert!(s.width == s.values.len() / s.positions.len());
        }
        s
    }
}

fn string_len(v: &Value) -> usize {
    match v {
        Value::Str(s) => s.len(),
        _ => 0,
    }
}
