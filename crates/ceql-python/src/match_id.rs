//! `match_id` over Arrow data: the row hashes (`ceql_engine::match_id_row_hashes`),
//! the lanes of complex events (`ceql_engine::match_id_lanes`) and their text
//! (`ceql_engine::match_id_text`).

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
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

/// The batches of an Arrow stream.
fn batches_of(data: &Bound<'_, PyAny>) -> PyResult<Vec<RecordBatch>> {
    stream_of(data)?
        .collect::<Result<Vec<RecordBatch>, _>>()
        .map_err(|e| PyTypeError::new_err(format!("cannot read the Arrow stream: {e}")))
}

/// The two 64-bit columns of an Arrow stream, concatenated, as `u64` (signed
/// columns are read as their two's complement).
fn two_lanes(data: &Bound<'_, PyAny>) -> PyResult<[Vec<u64>; 2]> {
    let mut lanes = [Vec::new(), Vec::new()];
    for batch in batches_of(data)? {
        if batch.num_columns() != 2 {
            return Err(PyTypeError::new_err("expected two columns of 64-bit hashes"));
        }
        for (lane, column) in lanes.iter_mut().zip(batch.columns()) {
            match column.data_type() {
                DataType::Int64 => lane
                    .extend(column.as_primitive::<arrow_array::types::Int64Type>().values().iter().map(|v| *v as u64)),
                DataType::UInt64 => lane.extend_from_slice(column.as_primitive::<UInt64Type>().values()),
                other => {
                    return Err(PyTypeError::new_err(format!("hash columns must be 64-bit integers, not {other}")))
                }
            }
        }
    }
    Ok(lanes)
}

/// `h0, h1` of every complex event of `matches` (an Arrow batch of the engine's
/// output layout: `start`, `end`, `positions`) as an Arrow batch of two uint64
/// columns `h0`, `h1`: `rows` holds the row hashes (two 64-bit columns) of the rows
/// at stream positions `base, base + 1, ...`; `labels` (captures) the `c0, c1` of
/// every data row (two 64-bit columns).
#[pyfunction]
#[pyo3(signature = (seeds, rows, base, matches, labels=None))]
pub fn match_id_lanes(
    py: Python<'_>,
    seeds: (u64, u64),
    rows: &Bound<'_, PyAny>,
    base: u64,
    matches: &Bound<'_, PyAny>,
    labels: Option<&Bound<'_, PyAny>>,
) -> PyResult<ArrowBatch> {
    let row_lanes = two_lanes(rows)?;
    let label_lanes = labels.map(two_lanes).transpose()?;
    let batches = batches_of(matches)?;
    let lanes = py.detach(|| {
        let (mut h0, mut h1) = (Vec::new(), Vec::new());
        let mut label_offset = 0;
        for batch in &batches {
            let labels = label_lanes.as_ref().map(|l| [&l[0][label_offset..], &l[1][label_offset..]]);
            let hashes = ceql_engine::RowHashes { lanes: [&row_lanes[0], &row_lanes[1]], base };
            let [a, b] = ceql_engine::match_id_lanes([seeds.0, seeds.1], hashes, batch, labels)?;
            label_offset += data_rows(batch);
            h0.extend(a);
            h1.extend(b);
        }
        Ok::<_, ceql_engine::MatchIdError>((h0, h1))
    });
    let (h0, h1) = lanes.map_err(|e| PyRuntimeError::new_err(format!("ceql.spark: {e}")))?;
    let schema =
        Schema::new(vec![Field::new("h0", DataType::UInt64, false), Field::new("h1", DataType::UInt64, false)]);
    let columns: Vec<ArrayRef> = vec![Arc::new(UInt64Array::from(h0)), Arc::new(UInt64Array::from(h1))];
    let batch = RecordBatch::try_new(Arc::new(schema), columns).map_err(|e| PyTypeError::new_err(e.to_string()))?;
    Ok(ArrowBatch::new(batch))
}

/// The `match_id` column (32 hex digits each) of the lanes `lanes` (an Arrow batch
/// of two 64-bit columns `h0`, `h1`), as a one-column Arrow batch `match_id`.
#[pyfunction]
pub fn match_id_hex(py: Python<'_>, lanes: &Bound<'_, PyAny>) -> PyResult<ArrowBatch> {
    let [h0, h1] = two_lanes(lanes)?;
    let text = py.detach(|| ceql_engine::match_id_text(&h0, &h1));
    let schema = Schema::new(vec![Field::new("match_id", DataType::Utf8, false)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(text) as ArrayRef])
        .map_err(|e| PyTypeError::new_err(e.to_string()))?;
    Ok(ArrowBatch::new(batch))
}

/// Data rows of a batch of matches (the span of its `positions` offsets).
fn data_rows(batch: &RecordBatch) -> usize {
    fn span<O: arrow_array::OffsetSizeTrait>(offsets: &[O]) -> usize {
        match (offsets.first(), offsets.last()) {
            (Some(a), Some(b)) => b.as_usize() - a.as_usize(),
            _ => 0,
        }
    }
    batch.column_by_name("positions").map_or(0, |c| match c.data_type() {
        DataType::LargeList(_) => span(c.as_list::<i64>().offsets()),
        DataType::List(_) => span(c.as_list::<i32>().offsets()),
        _ => 0,
    })
}
