//! Typed views of Arrow columns: the value of a row as the engine reads it
//! ([`ValueRef`]), whether a column fits a declared type, and the first value the
//! engine cannot represent.

use super::{AttrSlot, Row};
use crate::value::{AttrType, ValueRef};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType};
use arrow_buffer::NullBuffer;
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
    /// Time stamps, dates (`date64`) or durations (any unit), their validity, and
    /// nanoseconds per unit. Read as nanosecond time stamps, like Python's
    /// `datetime`, `date` and `timedelta` values.
    Time(&'a [i64], Option<&'a NullBuffer>, i64),
    /// Days since the epoch (`date32`), and their validity.
    Days(&'a [i32], Option<&'a NullBuffer>),
}

/// Nanoseconds per day, for `date32` columns.
const NANOS_PER_DAY: i64 = 86_400 * 1_000_000_000;

/// String-like columns: plain, large, view, or dictionary-encoded.
pub(crate) enum StrColumn<'a> {
    Utf8(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    /// Typed keys, their validity, and the dictionary's strings.
    Dict(DictKeys<'a>, Option<&'a NullBuffer>, Vec<Option<&'a str>>),
}

/// The keys of a dictionary column, typed once per batch: reading a row's key is
/// then a slice index, not a dynamic downcast per event.
#[derive(Clone, Copy)]
pub(crate) enum DictKeys<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
}

impl<'a> DictKeys<'a> {
    /// The keys and their validity, or `None` for a key type Arrow does not allow.
    fn of(a: &'a ArrayRef, key_type: &DataType) -> Option<(DictKeys<'a>, Option<&'a NullBuffer>)> {
        macro_rules! typed {
            ($t:ty, $variant:ident) => {{
                let keys = a.as_dictionary::<$t>().keys();
                (DictKeys::$variant(keys.values()), keys.nulls())
            }};
        }
        Some(match key_type {
            DataType::Int8 => typed!(Int8Type, I8),
            DataType::Int16 => typed!(Int16Type, I16),
            DataType::Int32 => typed!(Int32Type, I32),
            DataType::Int64 => typed!(Int64Type, I64),
            DataType::UInt8 => typed!(UInt8Type, U8),
            DataType::UInt16 => typed!(UInt16Type, U16),
            DataType::UInt32 => typed!(UInt32Type, U32),
            DataType::UInt64 => typed!(UInt64Type, U64),
            _ => return None,
        })
    }

    /// The key of row `i` (a negative key becomes an index past every value).
    #[inline]
    fn get(self, i: usize) -> usize {
        match self {
            DictKeys::I8(k) => k[i] as usize,
            DictKeys::I16(k) => k[i] as usize,
            DictKeys::I32(k) => k[i] as usize,
            DictKeys::I64(k) => k[i] as usize,
            DictKeys::U8(k) => k[i] as usize,
            DictKeys::U16(k) => k[i] as usize,
            DictKeys::U32(k) => k[i] as usize,
            DictKeys::U64(k) => k[i] as usize,
        }
    }
}

impl<'a> StrColumn<'a> {
    /// A string-like column, or `None` for another type.
    pub(crate) fn of(a: &'a ArrayRef) -> Option<StrColumn<'a>> {
        Some(match a.data_type() {
            DataType::Utf8 => StrColumn::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => StrColumn::Large(a.as_string::<i64>()),
            DataType::Utf8View => StrColumn::View(a.as_string_view()),
            // polars exports a categorical column with string-view values.
            DataType::Dictionary(k, v)
                if matches!(v.as_ref(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) =>
            {
                let (keys, nulls) = DictKeys::of(a, k)?;
                let values = a.as_any_dictionary().values();
                let strs: Vec<Option<&'a str>> = match values.data_type() {
                    DataType::Utf8 => values.as_string::<i32>().iter().collect(),
                    DataType::LargeUtf8 => values.as_string::<i64>().iter().collect(),
                    _ => values.as_string_view().iter().collect(),
                };
                StrColumn::Dict(keys, nulls, strs)
            }
            _ => return None,
        })
    }

    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            StrColumn::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            StrColumn::Large(a) => a.is_valid(i).then(|| a.value(i)),
            StrColumn::View(a) => a.is_valid(i).then(|| a.value(i)),
            StrColumn::Dict(_, _, values) => values.get(self.key(i)?).copied().flatten(),
        }
    }

    /// Dictionary key of row `i`; `None` for a NULL row or a column that is not
    /// dictionary-encoded (for work done once per distinct value).
    #[inline(always)]
    pub(crate) fn key(&self, i: usize) -> Option<usize> {
        match self {
            StrColumn::Dict(keys, nulls, _) => nulls.is_none_or(|n| n.is_valid(i)).then(|| keys.get(i)),
            _ => None,
        }
    }
}

impl<'a> Column<'a> {
    /// Whether every value of the column fits a declared attribute type.
    pub(crate) fn fits(&self, t: AttrType) -> bool {
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
            Column::Time(..) | Column::Days(..) => t == AttrType::PrimaryTime,
            Column::U64(_) => false,
        }
    }

    /// The typed view of an attribute column (`None`: the batch has no such column).
    pub(crate) fn of(a: Option<&'a ArrayRef>) -> Result<Column<'a>, String> {
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
            DataType::Date32 => {
                let a = a.as_primitive::<Date32Type>();
                Column::Days(a.values(), a.nulls())
            }
            _ => match (time_like_values(a), StrColumn::of(a)) {
                (Some((values, nulls, nanos)), _) => Column::Time(values, nulls, nanos),
                (None, Some(s)) => Column::Str(s),
                (None, None) => return Err(format!("unsupported column type {}", a.data_type())),
            },
        })
    }

    /// The first row whose value the engine cannot represent, with the reason:
    /// an unsigned integer above `i64::MAX`, or a time stamp that does not fit in
    /// 64-bit nanoseconds. Events of the dict path give the same errors; reading
    /// such a value as a double or a saturated time stamp would silently merge
    /// distinct keys or ignore the window.
    pub(crate) fn first_unrepresentable(&self) -> Option<(usize, String)> {
        match self {
            Column::U64(a) => a.iter().position(|v| v.is_some_and(|v| v > i64::MAX as u64)).map(|i| {
                (i, format!("integer {} does not fit in 64 bits", a.value(i)))
            }),
            Column::Time(values, nulls, factor) if *factor > 1 => values
                .iter()
                .enumerate()
                .position(|(i, v)| nulls.is_none_or(|n| n.is_valid(i)) && v.checked_mul(*factor).is_none())
                .map(|i| {
                    (
                        i,
                        format!(
                            "time stamp {} (in units of {factor} ns) is out of range: in nanoseconds it does not fit in 64 bits",
                            values[i]
                        ),
                    )
                }),
            Column::Days(values, nulls) => values
                .iter()
                .enumerate()
                .position(|(i, &d)| nulls.is_none_or(|n| n.is_valid(i)) && (d as i64).checked_mul(NANOS_PER_DAY).is_none())
                .map(|i| (i, format!("date {} (days) is out of range: in nanoseconds it does not fit in 64 bits", values[i]))),
            _ => None,
        }
    }

    /// The value of row `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> ValueRef<'a> {
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
            Column::Time(values, nulls, factor) => {
                if nulls.is_none_or(|n| n.is_valid(i)) {
                    ValueRef::Timestamp(values[i].saturating_mul(*factor))
                } else {
                    ValueRef::Null
                }
            }
            Column::Days(values, nulls) => {
                if nulls.is_none_or(|n| n.is_valid(i)) {
                    ValueRef::Timestamp((values[i] as i64).saturating_mul(NANOS_PER_DAY))
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

/// The values, validity and nanoseconds per unit of a timestamp, duration or
/// `date64` column (all stored as `i64`, so the rows are read without a downcast
/// per event); `None` for other types.
fn time_like_values(a: &ArrayRef) -> Option<(&[i64], Option<&NullBuffer>, i64)> {
    use DataType::{Date64, Duration, Timestamp};
    use TimeUnit::{Microsecond as Us, Millisecond as Ms, Nanosecond as Ns, Second as S};
    let (values, nulls) = match a.data_type() {
        Timestamp(S, _) => i64_values::<TimestampSecondType>(a),
        Timestamp(Ms, _) => i64_values::<TimestampMillisecondType>(a),
        Timestamp(Us, _) => i64_values::<TimestampMicrosecondType>(a),
        Timestamp(Ns, _) => i64_values::<TimestampNanosecondType>(a),
        Duration(S) => i64_values::<DurationSecondType>(a),
        Duration(Ms) => i64_values::<DurationMillisecondType>(a),
        Duration(Us) => i64_values::<DurationMicrosecondType>(a),
        Duration(Ns) => i64_values::<DurationNanosecondType>(a),
        Date64 => i64_values::<Date64Type>(a),
        _ => return None,
    };
    let nanos = match a.data_type() {
        Timestamp(unit, _) | Duration(unit) => unit_nanos(*unit),
        _ => 1_000_000,
    };
    Some((values, nulls, nanos))
}

/// The `i64` values and validity of a primitive column of type `T`.
fn i64_values<T: ArrowPrimitiveType<Native = i64>>(a: &ArrayRef) -> (&[i64], Option<&NullBuffer>) {
    let a = a.as_primitive::<T>();
    (a.values(), a.nulls())
}

/// One row of a batch, read through the typed columns.
pub(crate) struct BatchRow<'b, 'a> {
    /// The batch's attribute columns, by slot.
    pub columns: &'b [Column<'a>],
    /// The row.
    pub row: usize,
}

impl Row for BatchRow<'_, '_> {
    #[inline]
    fn get(&self, slot: AttrSlot) -> ValueRef<'_> {
        self.columns[slot as usize].get(self.row)
    }
}
