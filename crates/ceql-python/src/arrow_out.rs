//! Arrow export through the PyCapsule interface: `pyarrow.record_batch(obj)` (or
//! any consumer of `__arrow_c_array__`) takes the buffers without copying.

use arrow_array::ffi::to_ffi;
use arrow_array::RecordBatchReader;
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
/// (uint32 row numbers when `narrow`, a `variables` column when `captures`, and the
/// measure columns of `query`, typed from the schema of the Arrow data `events` when
/// given: docs/language.md#s3-5a), for its schema: built from an empty output
/// buffer, without evaluating anything.
#[pyfunction]
#[pyo3(signature = (narrow, captures=false, query=None, events=None))]
pub fn empty_output(
    narrow: bool,
    captures: bool,
    query: Option<&crate::query::NativeQuery>,
    events: Option<&Bound<'_, PyAny>>,
) -> PyResult<ArrowBatch> {
    let schema = events.map(crate::arrow::stream_of).transpose()?.map(|r| r.schema());
    let fields = query.map_or_else(Vec::new, |q| q.inner.measure_fields(schema.as_deref()));
    let names: Option<&[Vec<String>]> = captures.then_some(&[]);
    let batch = if narrow {
        MatchBuffer::<u32>::empty().into_record_batch_with_measures(0, names, &fields)
    } else {
        MatchBuffer::new().into_record_batch_with_measures(0, names, &fields)
    };
    Ok(ArrowBatch::new(batch.map_err(PyValueError::new_err)?))
}
