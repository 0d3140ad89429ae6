//! `match_id`'s row hashes over Arrow columns (`ceql_engine::match_id_row_hashes`).

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use std::sync::Arc;

use crate::arrow::stream_of;
use crate::arrow_out::ArrowBatch;

/// The row hashes `r0, r1` of every row of `data` (an Arrow table or batch of the
/// identity columns, in order) as an Arrow batch of two signed 64-bit columns named
/// `names` (Spark's `xxhash64` is a bigint). A column type without Spark's hash here
/// raises `TypeError` (the driver lets Spark hash such columns: `ceql.spark._input`).
#[pyfunction]
pub fn match_id_row_hashes(py: Python<'_>, data: &Bound<'_, PyAny>, names: (String, String)) -> PyResult<ArrowBatch> {
    let reader = stream_of(data)?;
    let batches = reader
        .collect::<Result<Vec<RecordBatch>, _>>()
        .map_err(|e| PyTypeError::new_err(format!("cannot read the Arrow stream: {e}")))?;
    let lanes = py.detach(|| {
        let (mut r0, mut r1) = (Vec::new(), Vec::new());
        for batch in &batches {
            let columns: Vec<&dyn Array> = batch.columns().iter().map(|c| c.as_ref()).collect();
            let [a, b] = ceql_engine::match_id_row_hashes(&columns)?;
            r0.extend(a.into_iter().map(|h| h as i64));
            r1.extend(b.into_iter().map(|h| h as i64));
        }
        Ok::<_, ceql_engine::UnsupportedHashType>((r0, r1))
    });
    let (r0, r1) = lanes.map_err(|e| PyTypeError::new_err(e.to_string()))?;
    let schema =
        Schema::new(vec![Field::new(names.0, DataType::Int64, false), Field::new(names.1, DataType::Int64, false)]);
    let columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(r0)), Arc::new(Int64Array::from(r1))];
    let batch = RecordBatch::try_new(Arc::new(schema), columns).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    Ok(ArrowBatch::new(batch))
}
