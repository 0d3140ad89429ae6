//! Identifiers, numbers and strings: unquoting and range checks (E0101).

use super::{Pair, Rule};
use crate::ast::Ident;
use crate::diagnostic::Diagnostic;
use crate::span::Span;

/// Builds an [`Ident`] from an `ident` pair, stripping back quotes (`` `a``b` `` is ``a`b``).
pub(crate) fn ident(pair: Pair<'_>) -> Ident {
    debug_assert_eq!(pair.as_rule(), Rule::ident);
    let span = Span::of(&pair);
    let inner = pair.into_inner().next().expect("ident has one alternative");
    let name = match inner.as_rule() {
        Rule::quoted_ident => {
            let s = inner.as_str();
            s[1..s.len() - 1].replace("``", "`")
        }
        _ => inner.as_str().to_string(),
    };
    Ident { name, span }
}

/// Unquotes a `string` pair: `'it''s'` → `it's`, `"say ""hi"""` → `say "hi"`.
pub(crate) fn string(pair: Pair<'_>) -> (String, Span) {
    debug_assert_eq!(pair.as_rule(), Rule::string);
    let span = Span::of(&pair);
    let inner = pair.into_inner().next().expect("string has one alternative");
    let s = inner.as_str();
    let body = &s[1..s.len() - 1];
    let text = match inner.as_rule() {
        Rule::single_quoted => body.replace("''", "'"),
        _ => body.replace("\"\"", "\""),
    };
    (text, span)
}

/// An integer literal that must fit in i64 (E0101 otherwise).
pub(crate) fn integer(pair: &Pair<'_>) -> Result<i64, Diagnostic> {
    pair.as_str().parse::<i64>().map_err(|_| {
        Diagnostic::error("E0101", "integer literal does not fit in a 64-bit signed integer", Span::of(pair))
            .with_label("must be at most 9223372036854775807")
    })
}

/// A numeric literal: integer or double.
pub(crate) enum Number {
    Int(i64),
    Float(f64),
}

/// Parses a `number` pair.
pub(crate) fn number(pair: Pair<'_>) -> Result<(Number, Span), Diagnostic> {
    debug_assert_eq!(pair.as_rule(), Rule::number);
    let span = Span::of(&pair);
    let inner = pair.into_inner().next().expect("number has one alternative");
    match inner.as_rule() {
        Rule::integer => Ok((Number::Int(integer(&inner)?), span)),
        _ => {
            let v: f64 = inner
                .as_str()
                .parse()
                .map_err(|_| Diagnostic::error("E0101", "invalid floating-point literal", span))?;
            if v.is_finite() {
                Ok((Number::Float(v), span))
            } else {
                Err(Diagnostic::error("E0101", "floating-point literal out of range", span))
            }
        }
    }
}
