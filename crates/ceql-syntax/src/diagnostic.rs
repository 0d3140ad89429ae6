//! Diagnostics: a code, a message, a primary span and a label, rendered as the
//! caret snippet of docs/language.md#s4.

use crate::span::{line_text, locate, Location, Span};
use std::fmt::Write as _;

/// Whether a diagnostic aborts compilation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Aborts compilation (`E....` codes).
    Error,
    /// Collected on the compiled query (`W....` codes).
    Warning,
}

/// One error or warning about a query, with the span it points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable code from the reference (`E0100`, `W0402`, ...).
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// One-line summary shown after the code.
    pub message: String,
    /// Primary span (the caret line underlines it).
    pub span: Span,
    /// Text printed after the carets; may be empty.
    pub label: String,
}

impl Diagnostic {
    /// A new error with code `code` at `span`.
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Self {
        Diagnostic { code, severity: Severity::Error, message: message.into(), span, label: String::new() }
    }

    /// A new warning with code `code` at `span`.
    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Self {
        Diagnostic { code, severity: Severity::Warning, message: message.into(), span, label: String::new() }
    }

    /// Sets the label printed after the carets.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Line and columns of the primary span in `source`.
    pub fn location(&self, source: &str) -> Location {
        locate(source, self.span)
    }

    /// Renders the diagnostic against `source`, named `origin` in the `-->` line:
    ///
    /// ```text
    /// error[E0201]: unknown event type `SEL`
    ///  --> query:2:7
    ///   |
    /// 2 | WHERE SEL AS s ; BUY AS b
    ///   |       ^^^ not declared in any stream of FROM (declared: BUY, SELL)
    /// ```
    pub fn render(&self, source: &str, origin: &str) -> String {
        let loc = self.location(source);
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let gutter = loc.line.to_string().len();
        let pad = " ".repeat(gutter);
        // A CR or VT inside the line (whitespace, not a line end: docs/language.md#s2-1)
        // would move a terminal's cursor and garble the snippet: shown as a space.
        let text: String =
            line_text(source, loc.line).chars().map(|c| if matches!(c, '\r' | '\u{0B}') { ' ' } else { c }).collect();
        // Tabs before the caret are kept so the caret lines up in a terminal.
        let lead: String = text.chars().take(loc.column - 1).map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        let carets = "^".repeat(loc.end_column - loc.column);
        let mut out = String::new();
        let _ = writeln!(out, "{kind}[{}]: {}", self.code, self.message);
        let _ = writeln!(out, "{pad}--> {origin}:{}:{}", loc.line, loc.column);
        let _ = writeln!(out, "{pad} |");
        let _ = writeln!(out, "{} | {}", loc.line, text);
        let _ = write!(out, "{pad} | {lead}{carets}");
        if !self.label.is_empty() {
            let _ = write!(out, " {}", self.label);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_reference_example() {
        let src = "SELECT * FROM Stock\nWHERE SEL AS s ; BUY AS b";
        let start = src.find("SEL AS").unwrap();
        let d = Diagnostic::error("E0201", "unknown event type `SEL`", Span::new(start, start + 3))
            .with_label("not declared in any stream of FROM (declared: BUY, SELL)");
        let expected = "error[E0201]: unknown event type `SEL`\n --> query:2:7\n  |\n2 | WHERE SEL AS s ; BUY AS b\n  |       ^^^ not declared in any stream of FROM (declared: BUY, SELL)";
        assert_eq!(d.render(src, "query"), expected);
    }

    #[test]
    fn a_carriage_return_inside_a_line_is_shown_as_a_space() {
        // CR alone is whitespace, not a line end (a `--` comment runs past it).
        let src = "SELECT *\rFROM S\rWHERE A ; ;\rB";
        let start = src.rfind(';').unwrap();
        let d = Diagnostic::error("E0100", "unexpected `;`", Span::new(start, start + 1));
        let expected = "error[E0100]: unexpected `;`\n --> query:1:27\n  |\n1 | SELECT * FROM S WHERE A ; ; B\n  |                           ^";
        assert_eq!(d.render(src, "query"), expected);
    }
}
