//! Arrow export through the PyCapsule interface: `pyarrow.record_batch(obj)` (or
//! any consumer of `__arrow_c_array__`) takes the buffers without copying.

use arrow_array::ffi::to_ffi;
use arrow_array::{Array, RecordBatch, StructArray};
use ceql_engine::MatchBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

/// A record batch waiting to be taken by an Arrow consumer.
#[pyclass(module = "ceql._ceql")]
pub struct ArrowBatch {
    batch: Option<RecordBatch>,
}

impl ArrowBatch {
    /// Wraps a batch.
    pub fn new(batch: RecordBatch) -> Self {
        ArrowBatch { batch: Some(batch) }
    }
}

#[pymethods]
impl ArrowBatch {
    /// Arrow PyCapsule interface: (schema capsule, array capsule). The batch can be
    /// exported once.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let batch = self.batch.take().ok_or_else(|| PyValueError::new_err("this Arrow batch was already exported"))?;
        let data = StructArray::from(batch).into_data();
        let (array, schema) = to_ffi(&data).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let schema = PyCapsule::new_with_value(py, schema, c"arrow_schema")?;
        let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    /// Number of rows (before export).
    fn __len__(&self) -> usize {
        self.batch.as_ref().map_or(0, |b| b.num_rows())
    }
}

/// An empty batch in the layout of `NativeRuntime.push_arrow_columnar`'s output
/// (uint32 row numbers when `narrow`, a `variables` column when `captures`), for
/// its schema: built from an empty output buffer, without evaluating anything.
#[pyfunction]
#[pyo3(signature = (narrow, captures=false))]
pub fn empty_output(narrow: bool, captures: bool) -> ArrowBatch {
    let batch = match (narrow, captures) {
        (true, false) => MatchBuffer::<u32>::empty().into_record_batch(0),
        (false, false) => MatchBuffer::new().into_record_batch(0),
        (true, true) => MatchBuffer::<u32>::empty().into_record_batch_with_variables(0, &[]),
        (false, true) => MatchBuffer::new().into_record_batch_with_variables(0, &[]),
    };
    ArrowBatch::new(batch)
}
