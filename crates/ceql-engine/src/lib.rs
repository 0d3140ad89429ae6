//! # ceql-engine
//!
//! The CORE complex event recognition algorithm (CORE: Bucchi, Grez, Quintana,
//! Riveros, Vansummeren) for CEQL queries, usable without Python:
//!
//! 1. [`CompiledQuery::compile`] parses (via `ceql-syntax`), runs the static checks
//!    of the reference (docs/language.md#s4) and builds the complex event automaton (docs/language.md#s5-4).
//! 2. A [`Runtime`] evaluates it on an unbounded stream: lazy I/O-determinization
//!    with a bounded cache (docs/language.md#s5-6), the tECS with constant time per event (docs/language.md#s6), and
//!    output-linear-delay enumeration into a reusable [`MatchBuffer`].
//!
//! ```
//! use ceql_engine::{CompiledQuery, CompileOptions, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
//! use std::sync::Arc;
//!
//! let q = CompiledQuery::compile("SELECT * FROM S WHERE A ; B+ ; C WITHIN 10 EVENTS", None, CompileOptions::default()).unwrap();
//! let mut rt = Runtime::new(Arc::new(q), RuntimeOptions::default());
//! let mut out = MatchBuffer::new();
//! for t in ["A", "B", "B", "C"] {
//!     rt.push(None, t, &[], &mut out).unwrap();
//! }
//! // The order within one end position is the enumeration's (deterministic, unspecified).
//! let mut found: Vec<Vec<u64>> = out.iter().map(|m| m.positions.to_vec()).collect();
//! found.sort();
//! assert_eq!(found, vec![vec![0, 1, 2, 3], vec![0, 1, 3], vec![0, 2, 3]]);
//! ```
//!
//! ## What a Rust user depends on
//!
//! Only the items re-exported here; the pipeline's modules (`analyze`, `predicate`,
//! `cea`, `det`, `tecs`, `runtime`, ...) are private, so that new operators can
//! change them freely:
//!
//! * compiling: [`CompiledQuery`] (with [`CompiledQuery::facts`] → [`QueryFacts`],
//!   [`WindowPlan`]), [`CompileOptions`], [`CompileError`];
//! * evaluating: [`Runtime`] with [`RuntimeOptions`], [`CacheConfig`], [`LatePolicy`],
//!   [`Target`], [`RuntimeStats`]/[`Statistics`], snapshots ([`SnapshotError`]);
//!   events as [`ValueRef`]/[`Value`] pairs or Arrow record batches; bad events as
//!   [`EventError`] with its [`EventErrorKind`];
//! * output: [`MatchBuffer`] of [`MatchRef`]s over [`Position`]s (`u64` or `u32`);
//! * seeing what the engine does: [`CompiledQuery::explain`], [`CompiledQuery::to_dot`],
//!   [`CompiledQuery::automaton_view`] ([`AutomatonView`]), [`Runtime::explain_cache`]
//!   and [`Runtime::det_states_dot`].
#![warn(missing_docs)]

mod analyze;
mod bitset;
mod cea;
mod det;
mod enumerate;
mod error;
mod explain;
mod facts;
mod input;
mod memory;
mod output;
mod predicate;
mod query;
mod residual;
mod runtime;
mod schema;
mod tecs;
mod value;

pub use det::CacheConfig;

/// Input fields that carry an event's type and stream, never attributes (docs/language.md#s1-2):
/// an attribute with one of these names reads as absent.
pub const RESERVED_FIELDS: [&str; 2] = ["type", "stream"];

/// The field read as the event type unless [`RuntimeOptions::type_field`] names another.
pub const DEFAULT_TYPE_FIELD: &str = "type";

/// Bytes of one tECS node (docs/language.md#s6): the unit of the state that a window keeps, for
/// reasoning about memory per event (`RuntimeStats` counts nodes).
pub const TECS_NODE_BYTES: usize = std::mem::size_of::<tecs::Node>();

/// Whether `name` is one of [`RESERVED_FIELDS`].
pub fn is_reserved_field(name: &str) -> bool {
    RESERVED_FIELDS.contains(&name)
}
pub use analyze::WindowPlan;
pub use error::{CompileError, EventError, EventErrorKind};
pub use explain::{AutomatonView, StateView, TransitionView};
pub use facts::QueryFacts;
pub use output::{
    match_id_lanes, match_id_row_hashes, match_id_text, MatchBuffer, MatchIdError, MatchRef, Position, RowHashes,
    UnsupportedHashType,
};
pub use query::{CompileOptions, CompiledQuery};
pub use runtime::{
    float_nanos, looks_like_type_field, Fate, LatePolicy, ReorderStats, Runtime, RuntimeOptions, RuntimeStats,
    SnapshotError, Statistics, Target,
};
pub use value::{Value, ValueRef};
