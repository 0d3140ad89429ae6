//! The input side of the data path: typed, read-only views of the columns of an
//! Arrow batch, below the predicates (which evaluate them column-wise) and the
//! runtime (which reads events through them). Nothing here knows about queries.
//!
//! A batch must have a `type` column (string or dictionary of strings) and may have
//! a `stream` column; attribute columns are matched by name to the runtime's
//! attribute layout, and a missing column reads as an absent attribute.

mod columns;
mod row;

pub(crate) use columns::{BatchRow, Column, StrColumn};
pub use row::{AttrSlot, Row};
