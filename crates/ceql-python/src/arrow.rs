//! Arrow C stream import through the PyCapsule interface (`__arrow_c_stream__`),
//! which pyarrow tables and batches, polars frames and others implement.

use arrow_array::cast::AsArray;
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array, GenericStringArray, OffsetSizeTrait, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// Opens the Arrow C stream of `obj`.
pub fn stream_of(obj: &Bound<'_, PyAny>) -> PyResult<CheckedStream> {
    let capsule = obj.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(PyErr::from)?;
    let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule named "arrow_array_stream" holds an FFI_ArrowArrayStream
    // (Arrow PyCapsule interface); `from_raw` moves it out and leaves a released
    // stream behind, which the capsule destructor then ignores.
    let reader = unsafe { RecordBatchStreamReader::from_raw(ptr.as_ptr() as *mut FFI_ArrowArrayStream) };
    let reader =
        reader.map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("cannot read the Arrow stream: {e}")))?;
    Ok(CheckedStream { inner: reader })
}

/// The batches of an imported Arrow stream, each with its text columns checked.
/// The C interface hands over buffers as they are: a string column that is not
/// UTF-8 (pyarrow's JSON reader makes one from a Latin-1 file) would reach code
/// that reads it as `str` without checking, which is undefined behaviour and
/// panicked when turned into a Python `str`. The check is arrow's own full
/// validation, run only on columns that hold text.
pub struct CheckedStream {
    inner: RecordBatchStreamReader,
}

impl RecordBatchReader for CheckedStream {
    fn schema(&self) -> SchemaRef {
        self.inner.schema()
    }
}

impl Iterator for CheckedStream {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.inner.next()?.and_then(checked))
    }
}

fn checked(batch: RecordBatch) -> Result<RecordBatch, ArrowError> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let valid = match field.data_type() {
            // The common case, at a fraction of the full validation's cost.
            DataType::Utf8 => text_is_valid(column.as_string::<i32>()),
            DataType::LargeUtf8 => text_is_valid(column.as_string::<i64>()),
            t if holds_text(t) => column.to_data().validate_full().is_ok(),
            _ => true,
        };
        if !valid {
            return Err(ArrowError::InvalidArgumentError(format!("column `{}` is not valid UTF-8 text", field.name())));
        }
    }
    Ok(batch)
}

/// Whether a string array's bytes are UTF-8 and its offsets fall on character
/// boundaries: one pass over the bytes the array uses rather than one check per
/// value (ASCII, the common case, needs no boundary check). The offsets' order is
/// the producer's promise, as for every Arrow import; their ends are checked.
fn text_is_valid<O: OffsetSizeTrait>(a: &GenericStringArray<O>) -> bool {
    let (offsets, bytes) = (a.value_offsets(), a.values().as_slice());
    let (Some(first), Some(last)) = (offsets.first(), offsets.last()) else { return true };
    let (first, last) = (first.as_usize(), last.as_usize());
    if first > last || last > bytes.len() {
        return false;
    }
    let used = &bytes[first..last];
    if used.is_ascii() {
        return true;
    }
    if a.null_count() > 0 {
        // A null slot's bytes mean nothing (Arrow allows any there): each value alone.
        return (0..a.len()).all(|i| {
            a.is_null(i) || {
                let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
                start <= end && end <= bytes.len() && std::str::from_utf8(&bytes[start..end]).is_ok()
            }
        });
    }
    // A byte 0b10xx_xxxx continues a character: no value may start there.
    std::str::from_utf8(used).is_ok()
        && offsets
            .iter()
            .all(|o| o.as_usize().checked_sub(first).is_some_and(|i| used.get(i).is_none_or(|b| (*b as i8) >= -0x40)))
}

/// Whether values of type `t` hold text anywhere (nested types, dictionaries).
fn holds_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => holds_text(v),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => holds_text(f.data_type()),
        DataType::Struct(fs) => fs.iter().any(|f| holds_text(f.data_type())),
        DataType::Union(fs, _) => fs.iter().any(|(_, f)| holds_text(f.data_type())),
        DataType::RunEndEncoded(_, v) => holds_text(v.data_type()),
        _ => false,
    }
}
