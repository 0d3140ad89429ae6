//! PyO3 bindings of `ceql-engine` for the Python package `ceql`.
//!
//! This crate only converts: Python values and Arrow C streams into engine input,
//! engine output and errors into Python objects. Every rule of the language lives in
//! `ceql-engine`; the user-facing API (`ceql.compile`, `Query.run`, `Stream`) is
//! written in Python on top of the classes here.

mod arrow;
mod arrow_out;
mod convert;
mod errors;
mod explain;
mod match_id;
mod matches;
mod query;
mod runtime;

use pyo3::prelude::*;

/// The native module `ceql._ceql`.
#[pymodule]
fn _ceql(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<query::NativeQuery>()?;
    m.add_class::<runtime::NativeRuntime>()?;
    m.add_class::<matches::Match>()?;
    m.add_class::<arrow_out::ArrowBatch>()?;
    m.add_function(wrap_pyfunction!(arrow_out::empty_output, m)?)?;
    m.add_function(wrap_pyfunction!(match_id::match_id_row_hashes, m)?)?;
    m.add_function(wrap_pyfunction!(match_id::match_id_lanes, m)?)?;
    m.add_function(wrap_pyfunction!(match_id::match_id_hex, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
