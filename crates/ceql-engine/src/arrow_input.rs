//! Columnar ingestion: feeds an Arrow `RecordBatch` to a [`Runtime`] without
//! materialising per-event objects. The batch must have a `type` column (string or
//! dictionary of strings) and may have a `stream` column; the attribute columns are
//! matched by name to [`Runtime::attribute_names`]. A missing column reads as an
//! absent attribute.

use crate::error::EventError;
use crate::output::MatchBuffer;
use crate::predicate::columnar::{eval_batch, Tri};
use crate::predicate::{AttrSlot, Row};
use crate::runtime::{Precomputed, Runtime, Target};
use crate::value::{AttrType, ValueRef};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};

/// Typed view of one attribute column.
pub(crate) enum Column<'a> {
    Absent,
    Null,
    Bool(&'a arrow_array::BooleanArray),
    I64(&'a arrow_array::Int64Array),
    I32(&'a arrow_array::Int32Array),
    I16(&'a arrow_array::Int16Array),
    I8(&'a arrow_array::Int8Array),
    U32(&'a arrow_array::UInt32Array),
    U16(&'a arrow_array::UInt16Array),
    U8(&'a arrow_array::UInt8Array),
    U64(&'a arrow_array::UInt64Array),
    F64(&'a arrow_array::Float64Array),
    F32(&'a arrow_array::Float32Array),
    Str(StrColumn<'a>),
    /// Time stamps with nanoseconds per unit.
    Time(&'a dyn Array, i64),
}

/// String-like columns: plain, large, view, or dictionary-encoded.
pub(crate) enum StrColumn<'a> {
    Utf8(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    Dict(&'a dyn Array, Vec<Option<&'a str>>),
}

impl<'a> StrColumn<'a> {
    fn of(a: &'a ArrayRef) -> Option<StrColumn<'a>> {
        Some(match a.data_type() {
            DataType::Utf8 => StrColumn::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => StrColumn::Large(a.as_string::<i64>()),
            DataType::Utf8View => StrColumn::View(a.as_string_view()),
            DataType::Dictionary(_, v) if matches!(v.as_ref(), DataType::Utf8 | DataType::LargeUtf8) => {
                let dict = a.as_any_dictionary();
                let values = dict.values();
                let strs: Vec<Option<&'a str>> = match values.data_type() {
                    DataType::Utf8 => values.as_string::<i32>().iter().collect(),
                    _ => values.as_string::<i64>().iter().collect(),
                };
                StrColumn::Dict(a.as_ref(), strs)
            }
            _ => return None,
        })
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            StrColumn::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            StrColumn::Large(a) => a.is_valid(i).then(|| a.value(i)),
            StrColumn::View(a) => a.is_valid(i).then(|| a.value(i)),
            StrColumn::Dict(a, values) => {
                if !a.is_valid(i) {
                    return None;
                }
                let key = dict_key(*a, i)?;
                values.get(key).copied().flatten()
            }
        }
    }

    /// Dictionary key of row `i` (for caching per distinct value).
    fn key(&self, i: usize) -> Option<usize> {
        match self {
            StrColumn::Dict(a, _) => dict_key(*a, i),
            _ => None,
        }
    }
}

pub(crate) fn dict_key(a: &dyn Array, i: usize) -> Option<usize> {
    let DataType::Dictionary(k, _) = a.data_type() else { return None };
    Some(match k.as_ref() {
        DataType::Int8 => a.as_dictionary::<Int8Type>().keys().value(i) as usize,
        DataType::Int16 => a.as_dictionary::<Int16Type>().keys().value(i) as usize,
        DataType::Int32 => a.as_dictionary::<Int32Type>().keys().value(i) as usize,
        DataType::Int64 => a.as_dictionary::<Int64Type>().keys().value(i) as usize,
        DataType::UInt8 => a.as_dictionary::<UInt8Type>().keys().value(i) as usize,
        DataType::UInt16 => a.as_dictionary::<UInt16Type>().keys().value(i) as usize,
        DataType::UInt32 => a.as_dictionary::<UInt32Type>().keys().value(i) as usize,
        DataType::UInt64 => a.as_dictionary::<UInt64Type>().keys().value(i) as usize,
        _ => return None,
    })
}

impl<'a> Column<'a> {
    /// Whether every value of the column fits a declared attribute type.
    fn fits(&self, t: AttrType) -> bool {
        match self {
            Column::Absent | Column::Null => true,
            Column::I64(_)
            | Column::I32(_)
            | Column::I16(_)
            | Column::I8(_)
            | Column::U32(_)
            | Column::U16(_)
            | Column::U8(_) => {
                matches!(t, AttrType::Int | AttrType::Double | AttrType::PrimaryTime)
            }
            Column::F64(_) | Column::F32(_) => t == AttrType::Double,
            Column::Bool(_) => t == AttrType::Boolean,
            Column::Str(_) => t == AttrType::String,
            Column::Time(..) => t == AttrType::PrimaryTime,
            Column::U64(_) => false,
        }
    }

    fn of(a: Option<&'a ArrayRef>) -> Result<Column<'a>, String> {
        let Some(a) = a else { return Ok(Column::Absent) };
        Ok(match a.data_type() {
            DataType::Null => Column::Null,
            DataType::Boolean => Column::Bool(a.as_boolean()),
            DataType::Int64 => Column::I64(a.as_primitive()),
            DataType::Int32 => Column::I32(a.as_primitive()),
            DataType::Int16 => Column::I16(a.as_primitive()),
            DataType::Int8 => Column::I8(a.as_primitive()),
            DataType::UInt64 => Column::U64(a.as_primitive()),
            DataType::UInt32 => Column::U32(a.as_primitive()),
            DataType::UInt16 => Column::U16(a.as_primitive()),
            DataType::UInt8 => Column::U8(a.as_primitive()),
            DataType::Float64 => Column::F64(a.as_primitive()),
            DataType::Float32 => Column::F32(a.as_primitive()),
            DataType::Timestamp(unit, _) => Column::Time(a.as_ref(), unit_nanos(*unit)),
            _ => match StrColumn::of(a) {
                Some(s) => Column::Str(s),
                None => return Err(format!("unsupported column type {}", a.data_type())),
            },
        })
    }

    #[inline]
    fn get(&self, i: usize) -> ValueRef<'a> {
        macro_rules! prim {
            ($a:expr, $map:expr) => {
                if $a.is_valid(i) {
                    $map($a.value(i))
                } else {
                    ValueRef::Null
                }
            };
        }
        match self {
            Column::Absent => ValueRef::Absent,
            Column::Null => ValueRef::Null,
            Column::Bool(a) => prim!(a, ValueRef::Bool),
            Column::I64(a) => prim!(a, ValueRef::Int),
            Column::I32(a) => prim!(a, |v| ValueRef::Int(v as i64)),
            Column::I16(a) => prim!(a, |v| ValueRef::Int(v as i64)),
            Column::I8(a) => prim!(a, |v| ValueRef::Int(v as i64)),
            Column::U32(a) => prim!(a, |v| ValueRef::Int(v as i64)),
            Column::U16(a) => prim!(a, |v| ValueRef::Int(v as i64)),
            Column::U8(a) => prim!(a, |v| ValueRef::Int(v as i64)),
            Column::U64(a) => prim!(a, |v: u64| if v <= i64::MAX as u64 {
                ValueRef::Int(v as i64)
            } else {
                ValueRef::Float(v as f64)
            }),
            Column::F64(a) => prim!(a, ValueRef::Float),
            Column::F32(a) => prim!(a, |v| ValueRef::Float(v as f64)),
            Column::Str(s) => s.get(i).map_or(ValueRef::Null, ValueRef::Str),
            Column::Time(a, factor) => {
                if a.is_valid(i) {
                    ValueRef::Timestamp(timestamp_value(*a, i).saturating_mul(*factor))
                } else {
                    ValueRef::Null
                }
            }
        }
    }
}

fn unit_nanos(u: TimeUnit) -> i64 {
    match u {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

fn timestamp_value(a: &dyn Array, i: usize) -> i64 {
    match a.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => a.as_primitive::<TimestampSecondType>().value(i),
        DataType::Timestamp(TimeUnit::Millisecond, _) => a.as_primitive::<TimestampMillisecondType>().value(i),
        DataType::Timestamp(TimeUnit::Microsecond, _) => a.as_primitive::<TimestampMicrosecondType>().value(i),
        _ => a.as_primitive::<TimestampNanosecondType>().value(i),
    }
}

/// One row of a batch, read through the typed columns.
struct BatchRow<'b, 'a> {
    columns: &'b [Column<'a>],
    row: usize,
}

impl Row for BatchRow<'_, '_> {
    #[inline]
    fn get(&self, slot: AttrSlot) -> ValueRef<'_> {
        self.columns[slot as usize].get(self.row)
    }
}

/// Memo of type/stream names → target within one batch (few distinct names).
#[derive(Default)]
struct TargetMemo {
    by_key: Vec<Option<Result<Target, (&'static str, String)>>>,
    by_name: Vec<(String, Option<String>, Target)>,
}

const MEMO_NAMES: usize = 256;

impl Runtime {
    /// Pushes every row of `batch` in order. Complex events are appended to `out`.
    /// On a malformed row the error names its position; rows before it were processed.
    pub fn push_batch(&mut self, batch: &RecordBatch, out: &mut MatchBuffer) -> Result<(), EventError> {
        let schema = batch.schema();
        let col = |name: &str| schema.index_of(name).ok().map(|i| batch.column(i));
        let type_col = col("type")
            .ok_or_else(|| EventError::new(self.next_position(), "type", None, "the batch has no `type` column"))?;
        let types = StrColumn::of(type_col).ok_or_else(|| {
            EventError::new(
                self.next_position(),
                "type",
                None,
                format!("`type` must be a string column, found {}", type_col.data_type()),
            )
        })?;
        let streams = match col("stream") {
            Some(c) => Some(StrColumn::of(c).ok_or_else(|| {
                EventError::new(
                    self.next_position(),
                    "stream",
                    None,
                    format!("`stream` must be a string column, found {}", c.data_type()),
                )
            })?),
            None => None,
        };
        let columns: Vec<Column<'_>> = self
            .attribute_names()
            .to_vec()
            .iter()
            .map(|n| {
                let c = if crate::is_reserved_field(n) { None } else { col(n) };
                Column::of(c).map_err(|m| EventError::new(self.next_position(), n.clone(), None, m))
            })
            .collect::<Result<_, _>>()?;
        // Predicates that can be evaluated column-wise, for the whole batch.
        let rows = batch.num_rows();
        let per_type: Vec<Vec<Option<Tri>>> = self
            .query()
            .preds
            .iter()
            .map(|preds| preds.iter().map(|p| eval_batch(p, &columns, rows)).collect())
            .collect();
        let fits: Vec<bool> = (0..columns.len())
            .map(|slot| {
                let declared = self.query().declared_reads.iter().flatten().filter(|(s, _)| *s as usize == slot);
                declared.clone().all(|(_, t)| columns[slot].fits(*t))
            })
            .collect();
        let mut memo = TargetMemo::default();
        for row in 0..rows {
            let Some(ty) = types.get(row) else {
                return Err(EventError::new(self.next_position(), "type", None, "event type is null"));
            };
            let stream = streams.as_ref().and_then(|s| s.get(row));
            let target = self.memo_target(&mut memo, &types, row, ty, stream)?;
            let pre = Precomputed { per_type: &per_type, row, declared_ok: &fits };
            self.push_precomputed(target, &BatchRow { columns: &columns, row }, Some(&pre), out).map_err(|mut e| {
                e.event_type = Some(ty.to_string());
                e
            })?;
        }
        Ok(())
    }

    fn memo_target(
        &self,
        memo: &mut TargetMemo,
        types: &StrColumn<'_>,
        row: usize,
        ty: &str,
        stream: Option<&str>,
    ) -> Result<Target, EventError> {
        let err = |(field, msg): (&'static str, String)| EventError::new(self.next_position(), field, Some(ty), msg);
        // Dictionary-encoded types without a stream column: resolve each key once.
        if let (Some(k), None) = (types.key(row), stream) {
            if memo.by_key.len() <= k {
                memo.by_key.resize(k + 1, None);
            }
            let entry = memo.by_key[k].get_or_insert_with(|| self.resolve_target(None, ty));
            return entry.clone().map_err(err);
        }
        if let Some((_, _, target)) = memo.by_name.iter().find(|(t, s, _)| t == ty && s.as_deref() == stream) {
            return Ok(*target);
        }
        let target = self.resolve_target(stream, ty).map_err(err)?;
        if memo.by_name.len() < MEMO_NAMES {
            memo.by_name.push((ty.to_string(), stream.map(str::to_string), target));
        }
        Ok(target)
    }
}
