//! Python values → engine values.

use ceql_engine::Value;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

/// Converts an attribute value. `None` is NULL; `bool`, `int`, `float` and `str`
/// map directly; numpy scalars go through `__index__`/`__float__`; dates and
/// times (datetime, pandas Timestamp, numpy datetime64) become nanosecond time
/// stamps through `ceql._convert.to_nanos`, and pandas/numpy missing markers
/// (`NA`, `NaT`) are NULL. Anything else is an error naming the type.
pub fn to_value(obj: &Bound<'_, PyAny>) -> Result<Value, String> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<i64>().map(Value::Int).map_err(|_| "integer does not fit in 64 bits".to_string());
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s.to_cow().map(|c| Value::Str(c.into())).map_err(|e| e.to_string());
    }
    // numpy integer and boolean scalars (numpy 1 names the boolean `bool_`,
    // numpy 2 `bool`; Python's own bool was handled above).
    let type_name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    if type_name == "bool_" || type_name == "bool" {
        return obj.is_truthy().map(Value::Bool).map_err(|e| e.to_string());
    }
    if let Ok(ns) = obj.py().import("ceql._convert").and_then(|m| m.call_method1("to_nanos", (obj,))) {
        if ns.get_type().name().is_ok_and(|n| n == "Missing") {
            return Ok(Value::Null);
        }
        if !ns.is_none() {
            return ns.extract::<i64>().map(Value::Timestamp).map_err(|_| {
                "time stamp is out of range: in nanoseconds it does not fit in 64 bits (years 1677 to 2262)".to_string()
            });
        }
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(f) = obj.extract::<f64>() {
        return Ok(Value::Float(f));
    }
    Err(format!("unsupported value of type {type_name}"))
}
