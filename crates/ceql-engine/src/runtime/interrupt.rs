//! Interrupting an event's evaluation from outside: testing filters between events
//! can enumerate exponentially many valuations of one event (a filter reading an
//! iteration under `;`, docs/language.md#s3-4a), with no output to hand back. The
//! caller installs a check (the Python bindings run Python's signal handlers, so that
//! Ctrl-C works); the enumeration polls it every [`POLL_EVERY`] valuations and stops
//! when it says so. The event is then half evaluated: the evaluation cannot go on.

use super::Runtime;
use crate::error::{EventError, EventErrorKind};

/// Valuations tested between two polls (a poll is a function call; a valuation is
/// hundreds of instructions).
pub(crate) const POLL_EVERY: u32 = 1 << 14;

/// A check that says whether to stop, and whether it did.
#[derive(Default)]
pub(crate) struct Interrupt {
    pub(crate) check: Option<Box<dyn FnMut() -> bool + Send + Sync>>,
    /// Set when the check stopped an event: the evaluation state is then inconsistent.
    pub(crate) hit: bool,
}

impl Runtime {
    /// Installs (or removes) the check that can stop a long evaluation of one event
    /// (see the module's documentation). When it returns `true` the push fails with an
    /// [`EventErrorKind::Interrupted`] error and every later push fails too.
    pub fn set_interrupt_check(&mut self, check: Option<Box<dyn FnMut() -> bool + Send + Sync>>) {
        self.interrupt.check = check;
    }

    /// Whether an event's evaluation was interrupted: the state is then half updated,
    /// and the evaluation refuses to go on.
    pub fn interrupted(&self) -> bool {
        self.interrupt.hit
    }

    /// The error of an interrupted event at `position`.
    pub(crate) fn interrupted_error(position: u64) -> EventError {
        let mut e = EventError::new(position, "", None, "the evaluation was interrupted during this event");
        e.kind = EventErrorKind::Interrupted;
        e
    }
}
