//! CEQL text → AST. pest does the lexing and the flat parse; the builders in the
//! submodules turn pest pairs into [`crate::ast`] nodes and apply the CEL operator
//! precedence of docs/language.md#s2-3.

mod cel;
mod errors;
mod literal;
mod pred;
mod query;
mod schema;

use crate::ast::{QueryText, StreamDecl};
use crate::diagnostic::Diagnostic;
use pest::Parser as _;

/// The pest parser generated from `ceql.pest`.
#[derive(pest_derive::Parser)]
#[grammar = "ceql.pest"]
pub(crate) struct CeqlParser;

pub(crate) type Pair<'i> = pest::iterators::Pair<'i, Rule>;

/// Parses declarations followed by exactly one query (the text given to `compile`).
pub fn parse_query_text(source: &str) -> Result<QueryText, Diagnostic> {
    if source.trim().is_empty() {
        return Err(Diagnostic::error("E0100", "empty query text: expected SELECT", crate::Span::new(0, 0)));
    }
    crate::limits::check_nesting(source)?;
    let mut pairs = CeqlParser::parse(Rule::query_text, source).map_err(|e| errors::from_pest(source, e))?;
    let root = pairs.next().expect("query_text always yields its root pair");
    let mut streams = Vec::new();
    let mut query = None;
    for pair in root.into_inner() {
        match pair.as_rule() {
            Rule::stream_decl => streams.push(schema::stream_decl(pair)?),
            Rule::query => query = Some(query::query(pair)?),
            _ => {}
        }
    }
    let text = QueryText { streams, query: query.expect("grammar requires one query") };
    crate::limits::check_depth(&text)?;
    Ok(text)
}

/// Parses one or more `CREATE STREAM` declarations (the `schema=` text).
pub fn parse_schema(source: &str) -> Result<Vec<StreamDecl>, Diagnostic> {
    crate::limits::check_nesting(source)?;
    let mut pairs = CeqlParser::parse(Rule::schema_text, source).map_err(|e| errors::from_pest(source, e))?;
    let root = pairs.next().expect("schema_text always yields its root pair");
    root.into_inner().filter(|p| p.as_rule() == Rule::stream_decl).map(schema::stream_decl).collect()
}
