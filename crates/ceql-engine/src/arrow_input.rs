//! Columnar ingestion: feeds an Arrow `RecordBatch` to a [`Runtime`] without
//! materialising per-event objects. The batch must have a `type` column (string or
//! dictionary of strings) and may have a `stream` column; the attribute columns are
//! matched by name to [`Runtime::attribute_names`]. A missing column reads as an
//! absent attribute.

use crate::error::EventError;
use crate::output::{MatchBuffer, Position};
use crate::predicate::columnar::{eval_batch, Tri};
use crate::predicate::{AttrSlot, Row};
use crate::runtime::{Precomputed, Runtime, Target};
use crate::value::{AttrType, ValueRef};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, RecordBatch};
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
    fn of(a: &'a ArrayRef) -> Option<StrColumn<'a>> {
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
            Column::Time(..) | Column::Days(..) => t == AttrType::PrimaryTime,
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
    fn first_unrepresentable(&self) -> Option<(usize, String)> {
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
struct TargetMemo<'a> {
    /// Targets of dictionary keys of the type column, for rows without a stream.
    by_key: Vec<Option<Target>>,
    /// Targets of type names for rows without a stream, direct-mapped by
    /// [`NameKey::slot`]: one slot read and an integer comparison per event.
    by_slot: Vec<Option<(NameKey, &'a str, Target)>>,
    /// Every (type, stream) resolved, up to [`MEMO_NAMES`]: for names that share a
    /// slot, and for rows that name their stream.
    by_name: Vec<(&'a str, Option<&'a str>, Target)>,
}

const MEMO_NAMES: usize = 256;

/// Slots of [`TargetMemo::by_slot`] (a power of two).
const NAME_SLOTS: usize = 256;

impl<'a> TargetMemo<'a> {
    fn new() -> Self {
        TargetMemo { by_key: Vec::new(), by_slot: vec![None; NAME_SLOTS], by_name: Vec::new() }
    }

    /// The target of a type name already resolved for a row without a stream.
    #[inline(always)]
    fn named(&self, ty: &str) -> Option<Target> {
        let key = NameKey::of(ty);
        match self.by_slot[key.slot()] {
            Some((k, name, target)) if k == key && (key.len <= 16 || name == ty) => Some(target),
            _ => None,
        }
    }

    /// Remembers the target of a type name for rows without a stream.
    fn remember(&mut self, ty: &'a str, target: Target) {
        let key = NameKey::of(ty);
        self.by_slot[key.slot()] = Some((key, ty, target));
    }
}

/// A type name's length and two words that hold every byte of a name of up to
/// 16 bytes (overlapping loads), so that such names are compared as three integers.
#[derive(Clone, Copy, PartialEq, Eq)]
struct NameKey {
    len: usize,
    head: u64,
    tail: u64,
}

impl NameKey {
    #[inline(always)]
    fn of(name: &str) -> NameKey {
        let b = name.as_bytes();
        let n = b.len();
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let half = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes")) as u64;
        let (head, tail) = match n {
            8.. => (word(0), word(n - 8)),
            4..=7 => (half(0), half(n - 4)),
            1..=3 => (b[0] as u64 | (b[n / 2] as u64) << 8, b[n - 1] as u64),
            0 => (0, 0),
        };
        NameKey { len: n, head, tail }
    }

    /// Slot in [`TargetMemo::by_slot`]: the key mixed by one multiplication.
    #[inline(always)]
    fn slot(self) -> usize {
        let mixed = (self.head ^ self.tail.rotate_left(29) ^ self.len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> (64 - NAME_SLOTS.trailing_zeros())) as usize
    }
}

impl Runtime {
    /// Pushes every row of `batch` in order. Complex events are appended to `out`.
    /// On a malformed row the error names its position; rows before it were processed.
    pub fn push_batch<P: Position>(&mut self, batch: &RecordBatch, out: &mut MatchBuffer<P>) -> Result<(), EventError> {
        let schema = batch.schema();
        // Two columns of one name would be read as one (the first) by the engine and
        // as the other by whatever shows the events: refuse the batch instead.
        let mut names = std::collections::HashSet::with_capacity(schema.fields().len());
        if let Some(dup) = schema.fields().iter().map(|f| f.name().as_str()).find(|n| !names.insert(*n)) {
            return Err(EventError::new(
                self.next_position(),
                dup,
                None,
                format!("the input has two columns named `{dup}`; rename one of them"),
            ));
        }
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
        // Rows from the first unrepresentable value on are not read: it is an error
        // at its own position, after the rows before it were processed.
        let bad = columns
            .iter()
            .enumerate()
            .filter_map(|(slot, c)| c.first_unrepresentable().map(|(row, msg)| (row, slot, msg)))
            .min_by_key(|&(row, _, _)| row);
        let readable = bad.as_ref().map_or(rows, |&(row, _, _)| row);
        let mut memo = TargetMemo::new();
        // The state budget is checked between runs of rows, not per row.
        for first in (0..readable).step_by(super::runtime::BUDGET_CHECK_ROWS) {
            self.check_state_budget()?;
            for row in first..readable.min(first + super::runtime::BUDGET_CHECK_ROWS) {
                // Without a stream column (the common case) a type met before costs one
                // memo read: by dictionary key, or by the name's slot.
                let known = match (&streams, types.key(row)) {
                    (None, Some(k)) => memo.by_key.get(k).copied().flatten(),
                    (None, None) => types.get(row).and_then(|ty| memo.named(ty)),
                    (Some(_), _) => None,
                };
                let target = match known {
                    Some(target) => target,
                    None => self.target_of_row(&mut memo, &types, streams.as_ref(), row)?,
                };
                let pre = Precomputed { per_type: &per_type, row, declared_ok: &fits };
                self.push_precomputed(target, &BatchRow { columns: &columns, row }, Some(&pre), out).map_err(
                    |mut e| {
                        e.event_type = types.get(row).map(str::to_string);
                        e
                    },
                )?;
            }
        }
        if let Some((row, slot, msg)) = bad {
            let field = self.attribute_names()[slot].clone();
            return Err(EventError::new(self.next_position(), field, types.get(row), msg));
        }
        Ok(())
    }

    /// Resolves the target of `row` from its type and stream names, remembering it
    /// for the rows that follow; errors for a NULL type or an unresolvable name.
    fn target_of_row<'a>(
        &self,
        memo: &mut TargetMemo<'a>,
        types: &StrColumn<'a>,
        streams: Option<&StrColumn<'a>>,
        row: usize,
    ) -> Result<Target, EventError> {
        let Some(ty) = types.get(row) else {
            return Err(EventError::new(self.next_position(), "type", None, "event type is null"));
        };
        let stream = streams.and_then(|s| s.get(row));
        let err = |(field, msg): (&'static str, String)| EventError::new(self.next_position(), field, Some(ty), msg);
        // Dictionary-encoded types without a stream: resolve each key once.
        if let (Some(k), None) = (types.key(row), stream) {
            let target = self.resolve_target(None, ty).map_err(err)?;
            if memo.by_key.len() <= k {
                memo.by_key.resize(k + 1, None);
            }
            memo.by_key[k] = Some(target);
            return Ok(target);
        }
        let target = match memo.by_name.iter().find(|&&(t, s, _)| t == ty && s == stream) {
            Some(&(_, _, target)) => target,
            None => {
                let target = self.resolve_target(stream, ty).map_err(err)?;
                if memo.by_name.len() < MEMO_NAMES {
                    memo.by_name.push((ty, stream, target));
                }
                target
            }
        };
        if stream.is_none() {
            memo.remember(ty, target);
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::NameKey;

    /// Names of up to 16 bytes are compared by their keys alone: a change in any
    /// byte, or in the length, must change the key.
    #[test]
    fn name_keys_of_short_names_see_every_byte() {
        for len in 0..=16 {
            let base = "x".repeat(len);
            for i in 0..len {
                let mut other = base.clone().into_bytes();
                other[i] = b'y';
                let other = String::from_utf8(other).unwrap();
                assert!(NameKey::of(&base) != NameKey::of(&other), "length {len}, byte {i}");
            }
            assert!(NameKey::of(&base) != NameKey::of(&"x".repeat(len + 1)), "length {len}");
            assert!(NameKey::of(&base) == NameKey::of(&base.clone()));
        }
    }
}
