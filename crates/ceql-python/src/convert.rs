//! Python values → engine values.

use ceql_engine::Value;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString, PyTuple};

/// Converts an attribute value. `None` is NULL; `bool`, `int`, `float` and `str`
/// (and their subclasses, such as numpy's `float64` and `str_`) map directly.
/// Every other value goes through `ceql._convert.to_engine`, which maps numpy
/// and pandas scalars, dates, times and durations exactly (missing markers such
/// as `NA` and `NaT` are NULL) or refuses them. An integer or a time stamp that
/// does not fit in 64 bits is an error, never a double or a wrapped value.
///
/// The outer error is an exception to re-raise as it is: one that is not a bad
/// value (a `KeyboardInterrupt` while a value converts, an error inside a
/// value's own `__index__` or `__float__`); the inner one names what is wrong
/// with the value.
pub fn to_value(obj: &Bound<'_, PyAny>) -> PyResult<Result<Value, String>> {
    let py = obj.py();
    match value_of(obj) {
        Err(Bad::Raised(e)) if !is_value_error(py, &e) => Err(e),
        Err(Bad::Raised(e)) => Ok(Err(e.value(py).to_string())),
        Err(Bad::Text(m)) => Ok(Err(m)),
        Ok(v) => Ok(Ok(v)),
    }
}

/// What went wrong converting a value.
enum Bad {
    Text(String),
    Raised(PyErr),
}

impl From<PyErr> for Bad {
    fn from(e: PyErr) -> Self {
        Bad::Raised(e)
    }
}

/// The exceptions a refused value raises (`ceql._convert` raises `ValueError`;
/// extraction raises `TypeError` or `OverflowError`).
fn is_value_error(py: Python<'_>, e: &PyErr) -> bool {
    use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
    e.is_instance_of::<PyValueError>(py)
        || e.is_instance_of::<PyTypeError>(py)
        || e.is_instance_of::<PyOverflowError>(py)
}

fn value_of(obj: &Bound<'_, PyAny>) -> Result<Value, Bad> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return int_value(obj);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s.to_cow().map(|c| Value::Str(c.into())).map_err(|e| Bad::Text(e.to_string()));
    }
    let converted = obj.py().import("ceql._convert")?.call_method1("to_engine", (obj,))?;
    let pair = converted.cast::<PyTuple>().map_err(PyErr::from)?;
    let (kind, payload) = (pair.get_item(0)?, pair.get_item(1)?);
    match kind.extract::<String>()?.as_str() {
        "null" => Ok(Value::Null),
        "bool" => Ok(Value::Bool(payload.is_truthy()?)),
        "int" => int_value(&payload),
        "float" => Ok(Value::Float(payload.extract::<f64>()?)),
        "time" => payload.extract::<i64>().map(Value::Timestamp).map_err(|_| {
            Bad::Text(
                "time stamp is out of range: in nanoseconds it does not fit in 64 bits (years 1677 to 2262)"
                    .to_string(),
            )
        }),
        other => Err(Bad::Text(format!("internal: unknown value kind {other}"))),
    }
}

/// A Python int as a 64-bit integer, or an error naming it.
fn int_value(obj: &Bound<'_, PyAny>) -> Result<Value, Bad> {
    match obj.extract::<i64>() {
        Ok(i) => Ok(Value::Int(i)),
        Err(e) if !is_value_error(obj.py(), &e) => Err(Bad::Raised(e)),
        Err(_) => Err(Bad::Text(format!("integer {} does not fit in 64 bits", int_text(obj)))),
    }
}

/// A big int as the error shows it: its digits, shortened beyond 40; by its size
/// where Python refuses to print it (more than 4,300 digits by default).
fn int_text(obj: &Bound<'_, PyAny>) -> String {
    match obj.str() {
        Ok(text) => {
            let text = text.to_string_lossy();
            let digits = text.trim_start_matches('-').len();
            if text.len() <= 40 {
                text.into_owned()
            } else {
                format!("{}... ({digits} digits)", &text[..20])
            }
        }
        Err(_) => match obj.call_method0("bit_length").and_then(|b| b.extract::<u64>()) {
            Ok(bits) => format!("of {bits} bits"),
            Err(_) => "(too large to print)".to_string(),
        },
    }
}
