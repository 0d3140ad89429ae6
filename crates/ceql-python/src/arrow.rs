//! Arrow C stream import through the PyCapsule interface (`__arrow_c_stream__`),
//! which pyarrow tables and batches, polars frames and others implement.

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// Opens the Arrow C stream of `obj`.
pub fn stream_of(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatchStreamReader> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(PyErr::from)?;
    let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule named "arrow_array_stream" holds an FFI_ArrowArrayStream
    // (Arrow PyCapsule interface); `from_raw` moves it out and leaves a released
    // stream behind, which the capsule destructor then ignores.
    let reader = unsafe { RecordBatchStreamReader::from_raw(ptr.as_ptr() as *mut FFI_ArrowArrayStream) };
    reader.map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("cannot read the Arrow stream: {e}")))
}
