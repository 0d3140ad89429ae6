//! `CREATE STREAM` declarations.

use super::literal::ident;
use super::{Pair, Rule};
use crate::ast::{AttrDecl, EventDecl, StreamDecl};
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// Builds a [`StreamDecl`] from a `stream_decl` pair.
pub(crate) fn stream_decl(pair: Pair<'_>) -> Result<StreamDecl, Diagnostic> {
    let span = Span::of(&pair);
    let mut name = None;
    let mut events = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::ident => name = Some(ident(p)),
            Rule::event_decl => events.push(event_decl(p)),
            _ => {}
        }
    }
    Ok(StreamDecl { name: name.expect("stream_decl has a name"), events, span })
}

fn event_decl(pair: Pair<'_>) -> EventDecl {
    let mut name = None;
    let mut attrs = Vec::new();
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::ident => name = Some(ident(p)),
            Rule::attr_decl => {
                let mut ids = p.into_inner().filter(|q| q.as_rule() == Rule::ident).map(ident);
                let name = ids.next().expect("attr_decl has a name");
                let ty = ids.next().expect("attr_decl has a type");
                attrs.push(AttrDecl { name, ty });
            }
            _ => {}
        }
    }
    EventDecl { name: name.expect("event_decl has a name"), attrs }
}
