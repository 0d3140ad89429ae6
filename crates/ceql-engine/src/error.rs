//! Errors of the engine: compile-time diagnostics and per-event data errors.

use ceql_syntax::Diagnostic;
use std::fmt;

/// A query that failed to compile: the first error diagnostic, with the text it
/// points into so that it can be rendered with its caret snippet.
#[derive(Clone, Debug)]
pub struct CompileError {
    /// The diagnostic (code, message, span, label). Boxed, so that a `Result`
    /// carrying this error stays small on the success path.
    pub diagnostic: Box<Diagnostic>,
    /// The text the span points into (the query, or the schema text).
    pub source: String,
    /// Name of that text in the rendering (`query` or `schema`).
    pub origin: &'static str,
}

impl CompileError {
    /// Wraps a diagnostic about `source`.
    pub fn new(diagnostic: Diagnostic, source: &str, origin: &'static str) -> Self {
        CompileError { diagnostic: Box::new(diagnostic), source: source.to_string(), origin }
    }

    /// The error code (`E0100`, ...).
    pub fn code(&self) -> &'static str {
        self.diagnostic.code
    }

    /// 1-based line, column and exclusive end column of the primary span.
    pub fn location(&self) -> ceql_syntax::Location {
        self.diagnostic.location(&self.source)
    }

    /// The full rendering with caret snippet (docs/language.md#s4).
    pub fn render(&self) -> String {
        self.diagnostic.render(&self.source, self.origin)
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for CompileError {}

/// A malformed event: the engine rejects it and names the position and the field.
#[derive(Clone, Debug, PartialEq)]
pub struct EventError {
    /// Position of the event in the input (0-based).
    pub position: u64,
    /// The offending field (`type`, `stream`, an attribute, or the time field).
    pub field: String,
    /// Event type of the event, when known.
    pub event_type: Option<String>,
    /// What is wrong.
    pub message: String,
    /// Data error, or no memory for the output.
    pub kind: EventErrorKind,
}

/// What an [`EventError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventErrorKind {
    /// The event itself is malformed.
    Data,
    /// The event was processed, but memory for the complex events it completed
    /// could not be obtained (the output, unlike the state, grows with the answer).
    OutputMemory,
    /// The evaluation's state (partitions, partial matches, determinization cache)
    /// outgrew its budget; the message says which part and how to bound it.
    StateMemory,
    /// The caller's interrupt check stopped the evaluation of the event
    /// ([`crate::Runtime::set_interrupt_check`]); the evaluation cannot go on.
    Interrupted,
}

impl EventError {
    /// A new error about `field` of the event at `position`.
    pub fn new(position: u64, field: impl Into<String>, event_type: Option<&str>, message: impl Into<String>) -> Self {
        EventError {
            position,
            field: field.into(),
            event_type: event_type.map(str::to_string),
            message: message.into(),
            kind: EventErrorKind::Data,
        }
    }

    /// The output of the event at `position` did not fit in memory.
    pub fn out_of_memory(position: u64) -> Self {
        EventError {
            kind: EventErrorKind::OutputMemory,
            ..EventError::new(
                position,
                "output",
                None,
                "not enough memory for the complex events completed by this event; bound the output \
                 (WITHIN, LIMIT, CONSUME BY, a strategy) or consume it in smaller batches",
            )
        }
    }

    /// The evaluation's state outgrew its budget before the event at `position`
    /// (which was not processed); `message` names the part and the remedy.
    pub fn state_memory(position: u64, message: impl Into<String>) -> Self {
        EventError { kind: EventErrorKind::StateMemory, ..EventError::new(position, "", None, message) }
    }

    /// The event at `position` is beyond the largest position (`max`) the output
    /// can hold: an output of 32-bit positions met an input of more than 2^32 events.
    pub fn position_overflow(position: u64, max: u64) -> Self {
        EventError::new(
            position,
            "output",
            None,
            format!(
                "the output holds positions up to {max} only; ask for 64-bit positions \
                 (position_type=\"uint64\" in Python) to evaluate longer inputs"
            ),
        )
    }

    /// The event at `position` is beyond the largest position (`max`, 2^48 − 1) an
    /// evaluation with captures on can name (the label shares the position's word).
    pub fn captures_overflow(position: u64, max: u64) -> Self {
        EventError::new(
            position,
            "output",
            None,
            format!("with captures on, positions go up to {max} only; evaluate longer inputs with captures off"),
        )
    }
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "event at position {}", self.position)?;
        if let Some(t) = &self.event_type {
            write!(f, " (type `{t}`)")?;
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ", field `{}`: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for EventError {}
