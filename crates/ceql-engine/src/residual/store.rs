//! The attribute values of the events still inside the window (docs/design/correlation.md
//! section 3.3): one row per accepted event, holding only the attributes the residual terms
//! read, trimmed with the window like the tECS (docs/language.md#s6-7).

use crate::value::{Value, ValueRef};
use std::collections::VecDeque;

/// Rows of stored attribute values, by ascending position.
#[derive(Clone, Debug, Default)]
pub(crate) struct ValueStore {
    rows: VecDeque<(u64, Box<[Value]>)>,
    /// Bytes held by the strings of the rows (for the state budget).
    string_bytes: usize,
}

impl ValueStore {
    /// Appends the row of `position` (positions only grow).
    pub(crate) fn push(&mut self, position: u64, row: Box<[Value]>) {
        debug_assert!(self.rows.back().is_none_or(|(p, _)| *p < position));
        self.string_bytes += row.iter().map(string_len).sum::<usize>();
        self.rows.push_back((position, row));
    }

    /// Forgets the rows before `horizon`: no future output can contain them.
    pub(crate) fn trim(&mut self, horizon: u64) {
        while let Some((p, row)) = self.rows.front() {
            if *p >= horizon {
                break;
            }
            self.string_bytes -= row.iter().map(string_len).sum::<usize>();
            self.rows.pop_front();
        }
    }

    /// Stored attribute `a` of the event at `position` (NULL if it was not stored).
    pub(crate) fn get(&self, position: u64, a: usize) -> ValueRef<'_> {
        match self.rows.binary_search_by_key(&position, |(p, _)| *p) {
            Ok(i) => self.rows[i].1.get(a).map_or(ValueRef::Null, Value::as_ref),
            Err(_) => ValueRef::Null,
        }
    }

    /// Bytes held (rows, values and strings).
    pub(crate) fn memory_bytes(&self) -> usize {
        let per_row = std::mem::size_of::<(u64, Box<[Value]>)>();
        let values: usize = self.rows.front().map_or(0, |(_, r)| r.len()) * std::mem::size_of::<Value>();
        self.rows.len() * (per_row + values) + self.string_bytes
    }

    /// The rows, oldest first (snapshots).
    pub(crate) fn export(&self) -> Vec<(u64, Vec<Value>)> {
        self.rows.iter().map(|(p, r)| (*p, r.to_vec())).collect()
    }

    /// Rebuilds a store from [`ValueStore::export`] rows.
    pub(crate) fn import(rows: Vec<(u64, Vec<Value>)>) -> ValueStore {
        let mut s = ValueStore::default();
        for (p, r) in rows {
            s.push(p, r.into_boxed_slice());
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
