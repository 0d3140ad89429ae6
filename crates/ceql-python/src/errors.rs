//! Engine errors → the Python exception classes of `ceql.errors`, and Rust panics
//! → `ceql.CeqlInternalError` (a panic never crosses into Python as a crash).

use ceql_engine::{CompileError, EventError};
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Builds an exception through a factory function of `ceql.errors`.
fn from_factory<'py>(py: Python<'py>, factory: &str, args: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    let built = py.import("ceql.errors").and_then(|m| m.getattr(factory)).and_then(|f| f.call1(args));
    match built {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// A compile error with its code, location and rendering.
pub fn compile_error(py: Python<'_>, e: &CompileError) -> PyErr {
    let loc = e.location();
    from_factory(
        py,
        "_compile_error",
        (e.code(), e.render(), loc.line, loc.column, loc.end_column, e.diagnostic.message.clone(), e.origin),
    )
}

/// A malformed event, naming its position and field (or no memory for the output).
pub fn event_error(py: Python<'_>, e: &EventError) -> PyErr {
    let factory = match e.kind {
        ceql_engine::EventErrorKind::Data => "_event_error",
        ceql_engine::EventErrorKind::OutputMemory | ceql_engine::EventErrorKind::StateMemory => "_memory_error",
        // The exception a signal handler raised (KeyboardInterrupt), left pending by
        // `signal_check`.
        ceql_engine::EventErrorKind::Interrupted => {
            return PyErr::take(py).unwrap_or_else(|| pyo3::exceptions::PyValueError::new_err(INTERRUPTED))
        }
    };
    from_factory(py, factory, (e.position, e.field.clone(), e.event_type.clone(), e.message.clone(), e.to_string()))
}

/// Why an interrupted stream refuses to go on.
pub const INTERRUPTED: &str = "this stream was interrupted (KeyboardInterrupt) in the middle of an event and cannot \
                               continue: restore a snapshot taken before, or start a new stream";

/// The engine's interrupt check: runs Python's signal handlers (so that Ctrl-C stops
/// a long evaluation of one event); when one raises, the exception is left pending
/// for [`event_error`] and the evaluation stops.
pub fn signal_check() -> Box<dyn FnMut() -> bool + Send + Sync> {
    Box::new(|| {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                e.restore(py);
                true
            }
        })
    })
}

/// A bug in the engine.
pub fn internal_error(py: Python<'_>, what: &str) -> PyErr {
    from_factory(py, "_internal_error", (what.to_string(),))
}

/// Runs `f`, turning a panic into `CeqlInternalError`.
pub fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(internal_error(py, &panic_message(payload.as_ref()))),
    }
}

/// The message of a caught panic.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}
