//! `match_id` of complex events (docs/spark.md, "match_id", steps 3 and 5), from
//! the row hashes of the rows they are made of ([`super::match_id_row_hashes`]).
//!
//! Why in Rust: the Spark glue computed these lanes with a dozen numpy passes over
//! every data row of every output; one pass here costs a fraction of that on
//! output-heavy queries. The measures' part (step 6) stays with the glue, which
//! knows the measure values' Python types; the hex text ([`match_id_text`]) is
//! written here once the lanes are final.

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;

/// MurmurHash3's 64-bit finalizer.
pub fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// Why the lanes of a batch of complex events cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchIdError(pub String);

impl std::fmt::Display for MatchIdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MatchIdError {}

/// The row hashes of retained rows: row `i` is stream position `base + i`.
#[derive(Clone, Copy, Debug)]
pub struct RowHashes<'a> {
    /// `r0`, `r1` of every row.
    pub lanes: [&'a [u64]; 2],
    /// Stream position of the first row.
    pub base: u64,
}

/// `h0, h1` of every complex event of `matches` (the engine's Arrow output:
/// `start`, `end` and the list column `positions`, as stream positions), with the
/// query's seeds `q0, q1`; `labels` (captures) gives `c0, c1` of every data row,
/// in the order of the flattened `positions`.
pub fn match_id_lanes(
    seeds: [u64; 2],
    rows: RowHashes<'_>,
    matches: &RecordBatch,
    labels: Option<[&[u64]; 2]>,
) -> Result<[Vec<u64>; 2], MatchIdError> {
    let column = |name: &str| {
        matches.column_by_name(name).ok_or_else(|| MatchIdError(format!("the matches have no column {name:?}")))
    };
    let starts = positions_of(column("start")?.as_ref())?;
    let ends = positions_of(column("end")?.as_ref())?;
    let list = column("positions")?;
    let (offsets, data): (Vec<usize>, Vec<u64>) = match list.data_type() {
        DataType::LargeList(_) => {
            let l = list.as_list::<i64>();
            (l.offsets().iter().map(|o| *o as usize).collect(), positions_of(l.values().as_ref())?)
        }
        DataType::List(_) => {
            let l = list.as_list::<i32>();
            (l.offsets().iter().map(|o| *o as usize).collect(), positions_of(l.values().as_ref())?)
        }
        other => return Err(MatchIdError(format!("positions must be a list column, not {other}"))),
    };
    // Labels are given per data row from the first offset on (a sliced list column
    // starts past 0).
    let first = offsets.first().copied().unwrap_or(0);
    if let Some(l) = labels {
        let needed = offsets.last().copied().unwrap_or(0) - first;
        if l[0].len() < needed || l[1].len() < needed {
            return Err(MatchIdError("fewer labels than data rows".into()));
        }
    }
    let n_rows = rows.lanes[0].len().min(rows.lanes[1].len());
    let row = |p: u64| -> Result<usize, MatchIdError> {
        match p.checked_sub(rows.base) {
            Some(i) if (i as usize) < n_rows => Ok(i as usize),
            _ => Err(MatchIdError(format!("a match refers to stream position {p}, whose row is no longer retained"))),
        }
    };
    let mut out = [Vec::with_capacity(starts.len()), Vec::with_capacity(starts.len())];
    for (i, (&s, &e)) in starts.iter().zip(&ends).enumerate() {
        let (a, b) = (offsets[i], offsets[i + 1]);
        let (s, e) = (row(s)?, row(e)?);
        let mut d = [0u64; 2];
        for (k, &p) in data[a..b].iter().enumerate() {
            let p = row(p)?;
            for lane in 0..2 {
                let c = labels.map_or(0, |l| l[lane][a - first + k]);
                d[lane] = d[lane].wrapping_add(fmix(rows.lanes[lane][p] ^ c));
            }
        }
        let n = (b - a) as u64;
        for lane in 0..2 {
            let r = rows.lanes[lane];
            let inner = fmix(r[e] ^ fmix(d[lane] ^ n));
            out[lane].push(fmix(seeds[lane] ^ fmix(r[s] ^ inner)));
        }
    }
    Ok(out)
}

/// Hex digits per `match_id`: two 64-bit lanes.
const ID_DIGITS: usize = 32;

/// The `match_id` column of complex events with the lanes `h0`, `h1` (of one
/// length): `h0` then `h1`, each as 16 lower-case hex digits (docs/spark.md,
/// "match_id"). Written into one buffer, with no string per id.
pub fn match_id_text(h0: &[u64], h1: &[u64]) -> StringArray {
    let n = h0.len().min(h1.len());
    let mut text = vec![0u8; n * ID_DIGITS];
    for ((id, &a), &b) in text.chunks_exact_mut(ID_DIGITS).zip(h0).zip(h1) {
        let bytes = [a.to_be_bytes(), b.to_be_bytes()];
        for (pair, byte) in id.chunks_exact_mut(2).zip(bytes.as_flattened()) {
            pair.copy_from_slice(&HEX_PAIRS[usize::from(*byte)]);
        }
    }
    let offsets: ScalarBuffer<i32> = (0..=n).map(|i| (i * ID_DIGITS) as i32).collect();
    StringArray::try_new(OffsetBuffer::new(offsets), Buffer::from_vec(text), None)
        .expect("offsets rise by 32 over ASCII hex digits")
}

/// The two lower-case hex digits of every byte.
static HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut pairs = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        pairs[i] = [DIGITS[i >> 4], DIGITS[i & 0xf]];
        i += 1;
    }
    pairs
};

/// A column of stream positions (64- or 32-bit) as `u64`.
fn positions_of(column: &dyn Array) -> Result<Vec<u64>, MatchIdError> {
    match column.data_type() {
        DataType::UInt64 => Ok(column.as_primitive::<UInt64Type>().values().to_vec()),
        DataType::UInt32 => Ok(column.as_primitive::<UInt32Type>().values().iter().map(|p| u64::from(*p)).collect()),
        other => Err(MatchIdError(format!("stream positions must be unsigned integers, not {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, LargeListArray, UInt64Array};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    fn batch(starts: Vec<u64>, ends: Vec<u64>, positions: Vec<Vec<u64>>) -> RecordBatch {
        let lengths = positions.iter().map(Vec::len);
        let offsets = OffsetBuffer::<i64>::from_lengths(lengths);
        let values = UInt64Array::from(positions.concat());
        let item = Arc::new(Field::new("item", DataType::UInt64, false));
        let list = LargeListArray::new(item.clone(), offsets, Arc::new(values), None);
        let schema = Schema::new(vec![
            Field::new("start", DataType::UInt64, false),
            Field::new("end", DataType::UInt64, false),
            Field::new("positions", DataType::LargeList(item), false),
        ]);
        let columns: Vec<ArrayRef> =
            vec![Arc::new(UInt64Array::from(starts)), Arc::new(UInt64Array::from(ends)), Arc::new(list)];
        RecordBatch::try_new(Arc::new(schema), columns).unwrap()
    }

    #[test]
    fn fmix_is_murmur3s_finalizer() {
        // MurmurHash3's fmix64 of 1 (reference value of the C implementation).
        assert_eq!(fmix(1), 0xb456_bcfc_34c2_cb2c);
        assert_eq!(fmix(0), 0);
    }

    #[test]
    fn lanes_follow_the_definition() {
        // Rows at positions 10, 11, 12; one complex event [10, 12] with data {10, 12}.
        let r0 = [3u64, 5, 7];
        let r1 = [11u64, 13, 17];
        let rows = RowHashes { lanes: [&r0, &r1], base: 10 };
        let m = batch(vec![10], vec![12], vec![vec![10, 12]]);
        let [h0, h1] = match_id_lanes([100, 200], rows, &m, None).unwrap();
        let expect = |q: u64, r: &[u64; 3]| {
            let d = fmix(r[0]).wrapping_add(fmix(r[2]));
            fmix(q ^ fmix(r[0] ^ fmix(r[2] ^ fmix(d ^ 2))))
        };
        assert_eq!(h0, [expect(100, &r0)]);
        assert_eq!(h1, [expect(200, &r1)]);
        // With labels, each data row enters as fmix(r ^ c).
        let c0 = [1u64, 2];
        let c1 = [3u64, 4];
        let [l0, _] = match_id_lanes([100, 200], rows, &m, Some([&c0, &c1])).unwrap();
        let d = fmix(r0[0] ^ 1).wrapping_add(fmix(r0[2] ^ 2));
        assert_eq!(l0, [fmix(100 ^ fmix(r0[0] ^ fmix(r0[2] ^ fmix(d ^ 2))))]);
    }

    #[test]
    fn text_is_both_lanes_in_hex() {
        let ids = match_id_text(&[0x0123_4567_89ab_cdef, 0], &[u64::MAX, 0xa]);
        assert_eq!(ids.len(), 2);
        assert_eq!(ids.value(0), "0123456789abcdefffffffffffffffff");
        assert_eq!(ids.value(1), "0000000000000000000000000000000a");
        assert_eq!(match_id_text(&[], &[]).len(), 0);
    }

    #[test]
    fn a_row_not_retained_is_an_error() {
        let r = [1u64, 2];
        let rows = RowHashes { lanes: [&r, &r], base: 5 };
        assert!(match_id_lanes([0, 0], rows, &batch(vec![4], vec![6], vec![vec![6]]), None).is_err());
        assert!(match_id_lanes([0, 0], rows, &batch(vec![5], vec![7], vec![vec![7]]), None).is_err());
        assert!(match_id_lanes([0, 0], rows, &batch(vec![5], vec![6], vec![vec![5, 6]]), None).is_ok());
    }
}
