//! Row hashes of `match_id` (docs/spark.md, "match_id"): Spark's `xxhash64` of a
//! row's identity values (partition keys, time in nanoseconds, order values),
//! computed over Arrow columns where the rows already are.
//!
//! Why here and not in Spark: two hash columns computed by Spark travel with every
//! row through the shuffle, the sort and the Arrow transfer to Python; hashing the
//! columns the task already holds costs a few nanoseconds per row instead. The
//! definition stays Spark's, so the ids do not change and Spark's own `xxhash64`
//! checks this code (tests/test_spark_row_hashes.py).
//!
//! Spark's `xxhash64(c1, ..., cn)` starts from the seed 42 and hashes each non-null
//! value with the previous hash as the seed (a NULL leaves it unchanged). A value is
//! hashed as XXH64 of its bytes: booleans (as 0 or 1), bytes, shorts, ints, dates
//! (days) and floats (their IEEE bits, -0.0 as 0.0, every NaN as one) as a 4-byte
//! little-endian int; longs, time stamps (microseconds), doubles (likewise
//! normalised) and decimals of up to 18 digits (the unscaled value) as an 8-byte
//! long; strings and binaries as their bytes; wider decimals as the unscaled value's
//! minimal big-endian two's complement bytes (Java's `BigInteger.toByteArray`).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type,
    TimestampMicrosecondType,
};
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::{DataType, TimeUnit};
use xxhash_rust::xxh64::xxh64;

/// Spark's seed of `xxhash64`.
const SPARK_SEED: u64 = 42;

/// The Arrow type of a column this module cannot hash as Spark does (the caller
/// lets Spark compute the row hashes instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedHashType(pub DataType);

impl std::fmt::Display for UnsupportedHashType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no Spark xxhash64 of Arrow type {}", self.0)
    }
}

impl std::error::Error for UnsupportedHashType {}

/// The two row hashes of `match_id` for every row of `columns` (all of one length):
/// `r0 = xxhash64(c1, ..., cn)` and `r1 = xxhash64(CAST(1 AS BIGINT), c1, ..., cn)`,
/// Spark's, read as unsigned.
pub fn match_id_row_hashes(columns: &[&dyn Array]) -> Result<[Vec<u64>; 2], UnsupportedHashType> {
    let rows = columns.first().map_or(0, |c| c.len());
    let mut r0 = vec![SPARK_SEED; rows];
    let mut r1 = vec![hash_long(1, SPARK_SEED); rows];
    for column in columns {
        debug_assert_eq!(column.len(), rows, "identity columns of different lengths");
        fold_column(*column, &mut r0)?;
        fold_column(*column, &mut r1)?;
    }
    Ok([r0, r1])
}

// XXH64's primes.
const P1: u64 = 0x9e37_79b1_85eb_ca87;
const P2: u64 = 0xc2b2_ae3d_27d4_eb4f;
const P3: u64 = 0x1656_67b1_9e37_79f9;
const P4: u64 = 0x85eb_ca77_c2b2_ae63;
const P5: u64 = 0x27d4_eb2f_1656_67c5;

/// XXH64 of the 4 little-endian bytes of `v`: the general function's steps for a
/// 4-byte input, unrolled (as Spark's `XXH64.hashInt`); equal to
/// `xxh64(&v.to_le_bytes(), seed)` (tested), several times faster per value.
fn hash_int(v: i32, seed: u64) -> u64 {
    let mut h = seed.wrapping_add(P5).wrapping_add(4);
    h ^= u64::from(v as u32).wrapping_mul(P1);
    h = h.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
    avalanche(h)
}

/// XXH64 of the 8 little-endian bytes of `v` (as Spark's `XXH64.hashLong`); equal
/// to `xxh64(&v.to_le_bytes(), seed)` (tested).
fn hash_long(v: i64, seed: u64) -> u64 {
    let mut h = seed.wrapping_add(P5).wrapping_add(8);
    let k = (v as u64).wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    h ^= k;
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    avalanche(h)
}

fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

/// `hashes[i] = hash(column[i], hashes[i])` for every non-null value.
fn fold_column(column: &dyn Array, hashes: &mut [u64]) -> Result<(), UnsupportedHashType> {
    match column.data_type() {
        DataType::Null => {}
        DataType::Boolean => {
            let a = column.as_boolean();
            for (i, h) in hashes.iter_mut().enumerate() {
                if a.is_valid(i) {
                    *h = hash_int(i32::from(a.value(i)), *h);
                }
            }
        }
        DataType::Int8 => fold_primitive::<Int8Type>(column, hashes, |v, h| hash_int(i32::from(v), h)),
        DataType::Int16 => fold_primitive::<Int16Type>(column, hashes, |v, h| hash_int(i32::from(v), h)),
        DataType::Int32 => fold_primitive::<Int32Type>(column, hashes, hash_int),
        DataType::Date32 => fold_primitive::<Date32Type>(column, hashes, hash_int),
        DataType::Int64 => fold_primitive::<Int64Type>(column, hashes, hash_long),
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            fold_primitive::<TimestampMicrosecondType>(column, hashes, hash_long)
        }
        DataType::Float32 => fold_primitive::<Float32Type>(column, hashes, |v, h| hash_int(float_bits(v), h)),
        DataType::Float64 => fold_primitive::<Float64Type>(column, hashes, |v, h| hash_long(double_bits(v), h)),
        DataType::Decimal128(precision, _) if *precision <= 18 => {
            // Spark: a decimal that fits a long hashes its unscaled long.
            fold_primitive::<Decimal128Type>(column, hashes, |v, h| hash_long(v as i64, h))
        }
        DataType::Decimal128(precision, _) if *precision <= 38 => {
            fold_primitive::<Decimal128Type>(column, hashes, |v, h| {
                let (bytes, start) = minimal_be_bytes(v);
                xxh64(&bytes[start..], h)
            })
        }
        DataType::Utf8 => fold_bytes(hashes, column.as_string::<i32>().iter().map(|v| v.map(str::as_bytes))),
        DataType::LargeUtf8 => fold_bytes(hashes, column.as_string::<i64>().iter().map(|v| v.map(str::as_bytes))),
        DataType::Utf8View => fold_bytes(hashes, column.as_string_view().iter().map(|v| v.map(str::as_bytes))),
        DataType::Binary => fold_bytes(hashes, column.as_binary::<i32>().iter()),
        DataType::LargeBinary => fold_bytes(hashes, column.as_binary::<i64>().iter()),
        DataType::BinaryView => fold_bytes(hashes, column.as_binary_view().iter()),
        other => return Err(UnsupportedHashType(other.clone())),
    }
    Ok(())
}

fn fold_primitive<T: ArrowPrimitiveType>(column: &dyn Array, hashes: &mut [u64], hash: impl Fn(T::Native, u64) -> u64) {
    let a = column.as_primitive::<T>();
    let values = a.values();
    if a.null_count() == 0 {
        for (h, v) in hashes.iter_mut().zip(values.iter()) {
            *h = hash(*v, *h);
        }
    } else {
        for (i, (h, v)) in hashes.iter_mut().zip(values.iter()).enumerate() {
            if a.is_valid(i) {
                *h = hash(*v, *h);
            }
        }
    }
}

fn fold_bytes<'a>(hashes: &mut [u64], values: impl Iterator<Item = Option<&'a [u8]>>) {
    for (h, v) in hashes.iter_mut().zip(values) {
        if let Some(bytes) = v {
            *h = xxh64(bytes, *h);
        }
    }
}

/// Java's `Float.floatToIntBits` of a float with -0.0 as 0.0 (Spark normalises it).
fn float_bits(v: f32) -> i32 {
    if v.is_nan() {
        0x7fc0_0000
    } else if v == 0.0 {
        0
    } else {
        v.to_bits() as i32
    }
}

/// Java's `Double.doubleToLongBits` of a double with -0.0 as 0.0.
fn double_bits(v: f64) -> i64 {
    if v.is_nan() {
        0x7ff8_0000_0000_0000
    } else if v == 0.0 {
        0
    } else {
        v.to_bits() as i64
    }
}

/// The bytes of Java's `BigInteger.toByteArray()`: big-endian two's complement,
/// without the leading bytes that only repeat the sign (at least one byte); they
/// are `bytes[start..]` of the returned `(bytes, start)`.
fn minimal_be_bytes(v: i128) -> ([u8; 16], usize) {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    (bytes, start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{BooleanArray, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray};

    fn r0(columns: &[&dyn Array]) -> Vec<i64> {
        match_id_row_hashes(columns).unwrap()[0].iter().map(|h| *h as i64).collect()
    }

    // Expected values printed by Spark 4 (`SELECT xxhash64(...)`), an independent
    // implementation of the same function.
    #[test]
    fn values_as_spark_prints_them() {
        assert_eq!(r0(&[&Int64Array::from(vec![1])]), [-7001672635703045582]);
        assert_eq!(r0(&[&Int32Array::from(vec![1])]), [-6698625589789238999]);
        assert_eq!(r0(&[&BooleanArray::from(vec![true])]), [-6698625589789238999]);
        let zeros = Float64Array::from(vec![-0.0, 0.0, f64::NAN]);
        assert_eq!(r0(&[&zeros]), [-5252525462095825812, -5252525462095825812, -3127944061524951246]);
        let text = StringArray::from(vec!["hello".to_string(), "ab".repeat(40)]);
        assert_eq!(r0(&[&text]), [-4367754540140381902, 564872144892264770]);
        let wide = Decimal128Array::from(vec![-129i128]).with_precision_and_scale(30, 0).unwrap();
        assert_eq!(r0(&[&wide]), [-6459515886037897956]);
        let narrow = Decimal128Array::from(vec![1250i128]).with_precision_and_scale(10, 2).unwrap();
        assert_eq!(r0(&[&narrow]), [4753477431033244826]);
        assert_eq!(r0(&[&Int64Array::from(vec![None::<i64>])]), [42]);
    }

    #[test]
    fn columns_chain_and_nulls_leave_the_seed() {
        // xxhash64(CAST(1 AS BIGINT), 'a', CAST(NULL AS STRING), CAST(7 AS BIGINT))
        let one = Int64Array::from(vec![1]);
        let a = StringArray::from(vec!["a"]);
        let null = StringArray::from(vec![None::<&str>]);
        let seven = Int64Array::from(vec![7]);
        assert_eq!(r0(&[&one, &a, &null, &seven]), [3239774047737110138]);
        // r1 is r0 with a leading CAST(1 AS BIGINT).
        let [_, r1] = match_id_row_hashes(&[&a, &null, &seven]).unwrap();
        assert_eq!(r1[0] as i64, 3239774047737110138);
    }

    proptest::proptest! {
        #[test]
        fn fixed_width_hashes_are_xxh64(v in proptest::prelude::any::<i64>(), seed in proptest::prelude::any::<u64>()) {
            proptest::prop_assert_eq!(hash_long(v, seed), xxh64(&v.to_le_bytes(), seed));
            proptest::prop_assert_eq!(hash_int(v as i32, seed), xxh64(&(v as i32).to_le_bytes(), seed));
        }
    }

    #[test]
    fn minimal_bytes_as_java_big_integer() {
        let bytes = |v: i128| {
            let (b, s) = minimal_be_bytes(v);
            b[s..].to_vec()
        };
        assert_eq!(bytes(0), [0x00]);
        assert_eq!(bytes(-1), [0xff]);
        assert_eq!(bytes(127), [0x7f]);
        assert_eq!(bytes(128), [0x00, 0x80]);
        assert_eq!(bytes(-128), [0x80]);
        assert_eq!(bytes(-129), [0xff, 0x7f]);
        assert_eq!(bytes(i128::MIN).len(), 16);
    }

    #[test]
    fn unsupported_type_is_an_error() {
        let list = arrow_array::ListArray::new_null(
            std::sync::Arc::new(arrow_schema::Field::new("x", DataType::Int64, true)),
            1,
        );
        assert!(match_id_row_hashes(&[&list]).is_err());
    }
}
