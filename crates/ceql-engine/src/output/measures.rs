//! Measure columns of the Arrow output (docs/language.md#s3-5a): one nullable column
//! per measure, named after it, of a type fixed before the first event from the
//! declarations or, without them, from the input's Arrow column.

use super::{MatchBuffer, Position};
use crate::analyze::MeasurePlan;
use crate::value::{TypeKind, Value};
use crate::CompiledQuery;
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, LargeStringArray, NullArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use ceql_syntax::ast::AggFunc;
use std::sync::Arc;

impl CompiledQuery {
    /// The names of the measures of the `SELECT` list, in its order (empty without).
    pub fn measure_names(&self) -> Vec<String> {
        self.plan.measures.iter().map(|m| m.name.clone()).collect()
    }

    /// The Arrow fields of the measure columns. `input` is the schema of the Arrow
    /// events, which types a measure of an undeclared attribute; without it (input
    /// read row by row) such a measure is typed `Null`, for the caller to type from
    /// the values.
    pub fn measure_fields(&self, input: Option<&Schema>) -> Vec<Field> {
        self.plan.measures.iter().map(|m| Field::new(&m.name, measure_type(m, input), true)).collect()
    }
}

/// The column type of measure `m` (the table of docs/language.md#s3-5a).
fn measure_type(m: &MeasurePlan, input: Option<&Schema>) -> DataType {
    let arg = match m.kind {
        _ if m.func == AggFunc::Count => return DataType::Int64,
        _ if m.func == AggFunc::Avg => return DataType::Float64,
        TypeKind::Int => DataType::Int64,
        TypeKind::Float => DataType::Float64,
        TypeKind::Str => DataType::LargeUtf8,
        TypeKind::Bool => DataType::Boolean,
        TypeKind::Null => DataType::Null,
        TypeKind::Unknown => {
            let column = m.attr.as_ref().and_then(|a| input.and_then(|s| s.field_with_name(a).ok()));
            column.map_or(DataType::Null, |f| engine_type(f.data_type()))
        }
    };
    match m.func {
        // A sum, min or max of strings or booleans fails on the first value, so its
        // column only ever holds NULLs.
        AggFunc::Sum | AggFunc::Min | AggFunc::Max if !matches!(arg, DataType::Int64 | DataType::Float64) => {
            DataType::Null
        }
        _ => arg,
    }
}

/// The output type of the values the engine reads from an input column of type `t`
/// (`input/columns.rs`): integers, floats, strings, booleans, time stamps as
/// nanoseconds.
fn engine_type(t: &DataType) -> DataType {
    use DataType::*;
    match t {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => Int64,
        Float16 | Float32 | Float64 => Float64,
        Boolean => Boolean,
        Utf8 | LargeUtf8 | Utf8View => LargeUtf8,
        Dictionary(_, v) if matches!(v.as_ref(), Utf8 | LargeUtf8 | Utf8View) => LargeUtf8,
        Timestamp(..) | Duration(_) | Date32 | Date64 => Int64,
        _ => Null,
    }
}

impl<P: Position> MatchBuffer<P> {
    /// `fields` (the query's measure columns typed without an input schema) with each
    /// column of unknown type (`Null`: an attribute without a declaration) typed from
    /// the values held: `Int64` for integers and time stamps, `Float64` if any value is
    /// a double, `LargeUtf8`, `Boolean`. Why: matches that waited for a deadline can be
    /// handed over by a runtime restored from a snapshot before it read any input whose
    /// schema would type them; a caller with a fixed schema casts these columns to it.
    pub fn measure_fields_from_values(&self, fields: Vec<Field>) -> Vec<Field> {
        let width = self.measure_width;
        fields
            .into_iter()
            .enumerate()
            .map(|(k, f)| {
                if f.data_type() != &DataType::Null || width == 0 {
                    return f;
                }
                let mut t = DataType::Null;
                for v in self.measures.iter().skip(k).step_by(width) {
                    t = match (v, &t) {
                        (Value::Null, _) => continue,
                        (Value::Float(_), _) | (Value::Int(_) | Value::Timestamp(_), DataType::Float64) => {
                            DataType::Float64
                        }
                        (Value::Int(_) | Value::Timestamp(_), _) => DataType::Int64,
                        (Value::Str(_), _) => DataType::LargeUtf8,
                        (Value::Bool(_), _) => DataType::Boolean,
                    };
                }
                Field::new(f.name(), t, true)
            })
            .collect()
    }

    /// The record batch of [`MatchBuffer::into_record_batch`] (with the `variables`
    /// column when `names` is given, captures on), plus one column per measure of
    /// `fields` ([`CompiledQuery::measure_fields`]). A value that does not fit its
    /// column's type is an error naming the measure, never a conversion (an integer
    /// into a `double` column excepted: declarations that mix `int` and `double`).
    pub fn into_record_batch_with_measures(
        mut self,
        first_id: u64,
        names: Option<&[Vec<String>]>,
        fields: &[Field],
    ) -> Result<RecordBatch, String> {
        let values = std::mem::take(&mut self.measures);
        let width = if self.is_empty() { fields.len() } else { self.measure_width };
        let n = self.len();
        let batch = match names {
            Some(names) => self.into_record_batch_with_variables(first_id, names),
            None => self.into_record_batch(first_id),
        };
        if fields.is_empty() {
            return Ok(batch);
        }
        if width != fields.len() {
            return Err(format!("internal: {width} measures per match, {} columns", fields.len()));
        }
        let mut out_fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut columns = batch.columns().to_vec();
        for (k, field) in fields.iter().enumerate() {
            let column = (0..n).map(|i| &values[i * width + k]);
            columns.push(measure_column(field, column)?);
            out_fields.push(field.clone());
        }
        RecordBatch::try_new(Arc::new(Schema::new(out_fields)), columns).map_err(|e| e.to_string())
    }
}

/// The column of one measure.
fn measure_column<'a>(field: &Field, values: impl Iterator<Item = &'a Value>) -> Result<ArrayRef, String> {
    let wrong = |v: &Value| {
        format!("measure `{}`: the value {v:?} does not fit its column of type {}", field.name(), field.data_type())
    };
    macro_rules! collect {
        ($array:ty, $pat:pat => $out:expr) => {{
            let vs: Result<Vec<_>, String> = values
                .map(|v| match v {
                    Value::Null => Ok(None),
                    $pat => Ok(Some($out)),
                    other => Err(wrong(other)),
                })
                .collect();
            Arc::new(<$array>::from(vs?)) as ArrayRef
        }};
    }
    Ok(match field.data_type() {
        DataType::Int64 => collect!(Int64Array, Value::Int(i) | Value::Timestamp(i) => *i),
        DataType::Float64 => {
            let vs: Result<Vec<Option<f64>>, String> = values
                .map(|v| match v {
                    Value::Null => Ok(None),
                    Value::Float(f) => Ok(Some(*f)),
                    Value::Int(i) => Ok(Some(*i as f64)),
                    other => Err(wrong(other)),
                })
                .collect();
            Arc::new(Float64Array::from(vs?))
        }
        DataType::LargeUtf8 => collect!(LargeStringArray, Value::Str(s) => s.as_ref()),
        DataType::Boolean => collect!(BooleanArray, Value::Bool(b) => *b),
        DataType::Null => {
            let mut len = 0;
            for v in values {
                if *v != Value::Null {
                    return Err(wrong(v));
                }
                len += 1;
            }
            Arc::new(NullArray::new(len))
        }
        other => return Err(format!("internal: measure column type {other}")),
    })
}
