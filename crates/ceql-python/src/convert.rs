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
pub fn to_value(obj: &Bound<'_, PyAny>) -> Result<Value, String> {
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
        return s.to_cow().map(|c| Value::Str(c.into())).map_err(|e| e.to_string());
    }
    let converted = obj.py().import("ceql._convert").and_then(|m| m.call_method1("to_engine", (obj,)));
    let converted = converted.map_err(|e| e.value(obj.py()).to_string())?;
    let pair = converted.cast::<PyTuple>().map_err(|e| e.to_string())?;
    let (kind, payload) = (pair.get_item(0).map_err(|e| e.to_string())?, pair.get_item(1).map_err(|e| e.to_string())?);
    match kind.extract::<String>().map_err(|e| e.to_string())?.as_str() {
        "null" => Ok(Value::Null),
        "bool" => payload.is_truthy().map(Value::Bool).map_err(|e| e.to_string()),
        "int" => int_value(&payload),
        "float" => payload.extract::<f64>().map(Value::Float).map_err(|e| e.to_string()),
        "time" => payload.extract::<i64>().map(Value::Timestamp).map_err(|_| {
            "time stamp is out of range: in nanoseconds it does not fit in 64 bits (years 1677 to 2262)".to_string()
        }),
        other => Err(format!("internal: unknown value kind {other}")),
    }
}

/// A Python int as a 64-bit integer, or an error naming it.
fn int_value(obj: &Bound<'_, PyAny>) -> Result<Value, String> {
    obj.extract::<i64>().map(Value::Int).map_err(|_| format!("integer {} does not fit in 64 bits", int_text(obj)))
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
