//! Column-wise predicate evaluation over Arrow batches.
//!
//! A predicate built from `attribute <op> literal`, `IN`, `IN RANGE`, `LIKE` and
//! `AND`/`OR`/`NOT` is evaluated for a whole batch with typed loops, in
//! three-valued form: two bitmaps, "TRUE" and "FALSE" (a row in neither is
//! UNKNOWN). Dictionary-encoded columns are evaluated once per dictionary value.
//! Anything else (arithmetic, attribute-to-attribute comparisons, operand types
//! that would be a run-time type error) returns `None` and is evaluated row by row,
//! so errors are still reported on exactly the events that would raise them.

use super::eval::decide;
use super::{ExprIr, PredIr, SetIr};
use crate::input::{Column, StrColumn};
use crate::value::Value;
use ceql_syntax::ast::CmpOp;

/// Three-valued results for a batch: bit `i` of `t` (`f`) set iff row `i` is TRUE (FALSE).
pub struct Tri {
    /// TRUE rows.
    pub t: Vec<u64>,
    /// FALSE rows.
    pub f: Vec<u64>,
}

impl Tri {
    fn new(rows: usize) -> Tri {
        let w = rows.div_ceil(64);
        Tri { t: vec![0; w], f: vec![0; w] }
    }

    #[inline]
    fn set(&mut self, i: usize, v: Option<bool>) {
        match v {
            Some(true) => self.t[i / 64] |= 1 << (i % 64),
            Some(false) => self.f[i / 64] |= 1 << (i % 64),
            None => {}
        }
    }

    /// Whether row `i` is TRUE.
    #[inline]
    pub fn is_true(&self, i: usize) -> bool {
        self.t[i / 64] >> (i % 64) & 1 == 1
    }
}

/// Evaluates `p` over every row of `columns` (indexed by attribute slot), or
/// `None` when it must be evaluated row by row.
pub(crate) fn eval_batch(p: &PredIr, columns: &[Column<'_>], rows: usize) -> Option<Tri> {
    Some(match p {
        PredIr::And(items) => {
            let (first, rest) = items.split_first()?;
            let mut x = eval_batch(first, columns, rows)?;
            for item in rest {
                let y = eval_batch(item, columns, rows)?;
                for i in 0..x.t.len() {
                    x.t[i] &= y.t[i];
                    x.f[i] |= y.f[i];
                }
            }
            x
        }
        PredIr::Or(items) => {
            let (first, rest) = items.split_first()?;
            let mut x = eval_batch(first, columns, rows)?;
            for item in rest {
                let y = eval_batch(item, columns, rows)?;
                for i in 0..x.t.len() {
                    x.t[i] |= y.t[i];
                    x.f[i] &= y.f[i];
                }
            }
            x
        }
        PredIr::Not(a) => {
            let x = eval_batch(a, columns, rows)?;
            Tri { t: x.f, f: x.t }
        }
        PredIr::Cmp(op, ExprIr::Attr(s), ExprIr::Const(c)) => {
            let col = &columns[*s as usize];
            match numeric_cmp(col, *op, c, rows) {
                Some(tri) => tri,
                None => leaf(col, rows, &|v| cmp_leaf(*op, v, c))?,
            }
        }
        PredIr::Cmp(op, ExprIr::Const(c), ExprIr::Attr(s)) => {
            let col = &columns[*s as usize];
            match numeric_cmp(col, flip(*op), c, rows) {
                Some(tri) => tri,
                None => leaf(col, rows, &|v| cmp_leaf(flip(*op), v, c))?,
            }
        }
        PredIr::InSet(ExprIr::Attr(s), set, negated) => {
            let neg = *negated;
            leaf(&columns[*s as usize], rows, &|v| in_set_leaf(v, set).map(|r| r.map(|b| b != neg)))?
        }
        PredIr::InRange(ExprIr::Attr(s), ExprIr::Const(lo), ExprIr::Const(hi)) => {
            leaf(&columns[*s as usize], rows, &|v| {
                if matches!(v, Leaf::Null) || matches!(lo, Value::Null) || matches!(hi, Value::Null) {
                    return Some(None);
                }
                let ge = cmp_leaf(CmpOp::Ge, v, lo)?;
                let le = cmp_leaf(CmpOp::Le, v, hi)?;
                Some(match (ge, le) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                })
            })?
        }
        PredIr::Like(ExprIr::Attr(s), re) => leaf(&columns[*s as usize], rows, &|v| match v {
            Leaf::Null => Some(None),
            Leaf::Str(x) => Some(Some(re.is_match(x))),
            _ => None,
        })?,
        _ => return None,
    })
}

/// A non-null column value as seen by a leaf test.
#[derive(Clone, Copy)]
enum Leaf<'a> {
    Null,
    Int(i64),
    Float(f64),
    Str(&'a str),
    Bool(bool),
}

/// Applies `test` to every row. `test` returns `None` for a type mismatch: the
/// whole predicate then falls back to row-wise evaluation.
fn leaf(col: &Column<'_>, rows: usize, test: &dyn Fn(Leaf<'_>) -> Option<Option<bool>>) -> Option<Tri> {
    let mut out = Tri::new(rows);
    macro_rules! prim {
        ($a:expr, $wrap:expr) => {{
            use arrow_array::Array;
            for i in 0..rows {
                let v = if $a.is_valid(i) { $wrap($a.value(i)) } else { Leaf::Null };
                out.set(i, test(v)?);
            }
        }};
    }
    match col {
        Column::Absent | Column::Null => {
            test(Leaf::Null)?;
        }
        Column::I64(a) => prim!(a, Leaf::Int),
        Column::I32(a) => prim!(a, |v| Leaf::Int(v as i64)),
        Column::I16(a) => prim!(a, |v| Leaf::Int(v as i64)),
        Column::I8(a) => prim!(a, |v| Leaf::Int(v as i64)),
        Column::U32(a) => prim!(a, |v| Leaf::Int(v as i64)),
        Column::U16(a) => prim!(a, |v| Leaf::Int(v as i64)),
        Column::U8(a) => prim!(a, |v| Leaf::Int(v as i64)),
        Column::F64(a) => prim!(a, Leaf::Float),
        Column::F32(a) => prim!(a, |v| Leaf::Float(v as f64)),
        Column::Bool(a) => prim!(a, Leaf::Bool),
        Column::Str(s @ StrColumn::Dict(_, _, values)) => {
            // Once per dictionary value, then per row through the keys.
            let per_value: Vec<Option<bool>> =
                values.iter().map(|v| test(v.map_or(Leaf::Null, Leaf::Str))).collect::<Option<_>>()?;
            for i in 0..rows {
                out.set(i, s.key(i).and_then(|k| per_value.get(k).copied().flatten()));
            }
        }
        Column::Str(s) => {
            for i in 0..rows {
                let v = s.get(i).map_or(Leaf::Null, Leaf::Str);
                out.set(i, test(v)?);
            }
        }
        // u64 beyond i64 and time stamps: row-wise.
        Column::U64(_) | Column::Time(..) | Column::Days(..) => return None,
    }
    Some(out)
}

/// `column op c` for a 64-bit float or integer column and a numeric constant,
/// the most common filter (`price > 26.0`): one typed loop per 64 rows, with the
/// comparison rules of [`cmp_leaf`] (an integer against a float compares as
/// floats; NaN is UNKNOWN). `None` for any other case, which [`leaf`] handles.
fn numeric_cmp(col: &Column<'_>, op: CmpOp, c: &Value, rows: usize) -> Option<Tri> {
    use arrow_array::Array;
    let (tri, nulls) = match (col, c) {
        (Column::F64(a), Value::Float(y)) => (cmp_words(&a.values()[..rows], op, |x: f64| x.partial_cmp(y)), a.nulls()),
        (Column::F64(a), Value::Int(y)) => {
            let y = *y as f64;
            (cmp_words(&a.values()[..rows], op, |x: f64| x.partial_cmp(&y)), a.nulls())
        }
        (Column::I64(a), Value::Int(y)) => (cmp_words(&a.values()[..rows], op, |x: i64| Some(x.cmp(y))), a.nulls()),
        (Column::I64(a), Value::Float(y)) => {
            (cmp_words(&a.values()[..rows], op, |x: i64| (x as f64).partial_cmp(y)), a.nulls())
        }
        _ => return None,
    };
    let mut tri = tri;
    if let Some(nulls) = nulls {
        // A NULL row is UNKNOWN: in neither bitmap.
        for i in (0..rows).filter(|i| nulls.is_null(*i)) {
            tri.t[i / 64] &= !(1 << (i % 64));
            tri.f[i / 64] &= !(1 << (i % 64));
        }
    }
    Some(tri)
}

/// The TRUE and FALSE bitmaps of `ord(v) op` over `values` (`ord` is `None` for
/// an unordered value: NaN).
#[inline]
fn cmp_words<T: Copy>(values: &[T], op: CmpOp, ord: impl Fn(T) -> Option<std::cmp::Ordering>) -> Tri {
    let mut out = Tri::new(values.len());
    for (w, chunk) in values.chunks(64).enumerate() {
        let (mut t, mut f) = (0u64, 0u64);
        for (j, v) in chunk.iter().enumerate() {
            if let Some(o) = ord(*v) {
                if decide(op, o) {
                    t |= 1 << j;
                } else {
                    f |= 1 << j;
                }
            }
        }
        out.t[w] = t;
        out.f[w] = f;
    }
    out
}

fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}

/// `v op c` with the rules of docs/language.md#s3-4; `None` on a type mismatch.
#[inline]
fn cmp_leaf(op: CmpOp, v: Leaf<'_>, c: &Value) -> Option<Option<bool>> {
    Some(match (v, c) {
        (Leaf::Null, _) | (_, Value::Null) => None,
        (Leaf::Int(x), Value::Int(y)) => Some(decide(op, x.cmp(y))),
        (Leaf::Int(x), Value::Float(y)) => (x as f64).partial_cmp(y).map(|o| decide(op, o)),
        (Leaf::Float(x), Value::Int(y)) => x.partial_cmp(&(*y as f64)).map(|o| decide(op, o)),
        (Leaf::Float(x), Value::Float(y)) => x.partial_cmp(y).map(|o| decide(op, o)),
        (Leaf::Str(x), Value::Str(y)) if matches!(op, CmpOp::Eq | CmpOp::Ne) => {
            Some(decide(op, x.as_bytes().cmp(y.as_bytes())))
        }
        (Leaf::Bool(x), Value::Bool(y)) if matches!(op, CmpOp::Eq | CmpOp::Ne) => Some(decide(op, x.cmp(y))),
        _ => return None,
    })
}

fn in_set_leaf(v: Leaf<'_>, set: &SetIr) -> Option<Option<bool>> {
    Some(match (v, set) {
        (Leaf::Null, _) => None,
        (Leaf::Float(f), _) if f.is_nan() => None,
        (Leaf::Str(s), SetIr::Strings(items)) => Some(items.iter().any(|i| i.as_bytes() == s.as_bytes())),
        (Leaf::Int(_) | Leaf::Float(_), SetIr::Numbers(items)) => {
            let mut hit = false;
            for i in items {
                if cmp_leaf(CmpOp::Eq, v, i)? == Some(true) {
                    hit = true;
                    break;
                }
            }
            Some(hit)
        }
        (Leaf::Int(_) | Leaf::Float(_), SetIr::Range(lo, hi)) => {
            let ge = match lo {
                Some(l) => cmp_leaf(CmpOp::Ge, v, l)?.unwrap_or(false),
                None => true,
            };
            let le = match hi {
                Some(h) => cmp_leaf(CmpOp::Le, v, h)?.unwrap_or(false),
                None => true,
            };
            Some(ge && le)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int64Array};
    use proptest::prelude::*;

    const OPS: [CmpOp; 6] = [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne];

    fn by_leaf(col: &Column<'_>, op: CmpOp, c: &Value, rows: usize) -> Tri {
        leaf(col, rows, &|v| cmp_leaf(op, v, c)).expect("numeric leaves never fall back")
    }

    fn float() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            Just(Some(f64::NAN)),
            Just(Some(-0.0)),
            (-5i32..5).prop_map(|v| Some(f64::from(v) / 2.0)),
        ]
    }

    fn constant() -> impl Strategy<Value = Value> {
        prop_oneof![(-3i64..3).prop_map(Value::Int), (-6i32..6).prop_map(|v| Value::Float(f64::from(v) / 4.0))]
    }

    proptest! {
        // The typed loop agrees with the per-row leaf test, row by row, for both
        // bitmaps (TRUE, FALSE, and UNKNOWN as neither), across word boundaries.
        #[test]
        fn numeric_fast_path_equals_the_leaf_test(
            floats in proptest::collection::vec(float(), 0..150),
            ints in proptest::collection::vec(proptest::option::of(-3i64..3), 0..150),
            c in constant(),
        ) {
            let f = Float64Array::from(floats.clone());
            let i = Int64Array::from(ints.clone());
            for op in OPS {
                for (col, rows) in [(Column::F64(&f), floats.len()), (Column::I64(&i), ints.len())] {
                    let fast = numeric_cmp(&col, op, &c, rows).expect("a numeric column and constant");
                    let slow = by_leaf(&col, op, &c, rows);
                    prop_assert_eq!(&fast.t, &slow.t);
                    prop_assert_eq!(&fast.f, &slow.f);
                }
            }
        }
    }
}
