//! # ceql-syntax
//!
//! The CEQL language front end: a [pest] grammar (`ceql.pest`), an AST that keeps
//! source spans, and diagnostics rendered with line, column and a caret snippet.
//!
//! ```
//! let text = ceql_syntax::parse_query_text("SELECT * FROM S WHERE A ; B+ ; C WITHIN 10 EVENTS").unwrap();
//! assert_eq!(text.query.from[0].name, "S");
//! ```
#![warn(missing_docs)]

pub mod ast;
pub mod diagnostic;
mod display;
pub mod limits;
mod parser;
pub mod span;

pub use diagnostic::{Diagnostic, Severity};
pub use display::{aggregate as aggregate_to_string, cel_to_string, pred_to_string, query_to_string};
pub use limits::{MAX_DEPTH, MAX_NESTING};
pub use parser::{parse_query_text, parse_schema};
pub use span::{Location, Span};
