//! Aggregates over the events of a variable (docs/design/correlation.md, section 2): `count`
//! is `|μ(y)|`; `sum`, `min`, `max` and `avg` take numbers, skip NULLs and are NULL
//! over nothing; `sum` of integers is an integer (NULL beyond 64 bits), otherwise a
//! double added in position order; `avg` is the double sum over the count; `min` and
//! `max` are NaN if a value is NaN; `first`/`last` read the smallest/largest position.

use super::ValueStore;
use crate::value::{Value, ValueRef};
use ceql_syntax::ast::AggFunc;
use std::cmp::Ordering;

/// The value of `func` over the events at `positions` (ascending), reading stored
/// attribute `attr`. `Err` names what is not a number and the position of its event,
/// which need not be the event the error is raised at (the one ending the match).
pub(super) fn compute(
    func: AggFunc,
    positions: &[u64],
    attr: Option<usize>,
    store: &ValueStore,
) -> Result<Value, String> {
    if func == AggFunc::Count {
        return Ok(Value::Int(positions.len() as i64));
    }
    let a = attr.expect("only count has no attribute");
    match func {
        AggFunc::First | AggFunc::Last => {
            let p = if func == AggFunc::First { positions.first() } else { positions.last() };
            return Ok(p.map_or(Value::Null, |&p| store.get(p, a).to_owned_value()));
        }
        _ => {}
    }
    // One pass, no allocation: the integer and the double sums in position order, the
    // count, NaN seen, and the best value so far.
    let want = if func == AggFunc::Min { Ordering::Less } else { Ordering::Greater };
    let (mut count, mut all_int, mut nan) = (0usize, true, false);
    let (mut int_total, mut float_total) = (0i128, 0.0f64);
    let mut best: Option<Num> = None;
    for &p in positions {
        let v = match store.get(p, a) {
            ValueRef::Absent | ValueRef::Null => continue,
            ValueRef::Int(i) | ValueRef::Timestamp(i) => Num::Int(i),
            ValueRef::Float(f) => Num::Float(f),
            other => {
                let found = crate::predicate::describe_value(other);
                return Err(format!("{} needs numbers, found {found} at position {p}", func.name()));
            }
        };
        count += 1;
        match v {
            Num::Int(i) => int_total += i as i128,
            Num::Float(f) => {
                all_int = false;
                nan |= f.is_nan();
            }
        }
        float_total += v.as_f64();
        if !nan && best.is_none_or(|b| v.cmp(b) == want) {
            best = Some(v);
        }
    }
    if count == 0 {
        return Ok(Value::Null);
    }
    Ok(match func {
        AggFunc::Sum if all_int => i64::try_from(int_total).map_or(Value::Null, Value::Int),
        AggFunc::Sum => Value::Float(float_total),
        AggFunc::Avg => Value::Float(float_total / count as f64),
        _ if nan => Value::Float(f64::NAN),
        _ => best.expect("a value was counted").into_value(),
    })
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// Exact numeric order (no NaN here).
    fn cmp(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (Num::Int(a), Num::Float(b)) => exact(a, b),
            (Num::Float(a), Num::Int(b)) => exact(b, a).reverse(),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Num::Int(i) => Value::Int(i),
            Num::Float(f) => Value::Float(f),
        }
    }
}

/// How integer `a` compares with double `b`, exactly (as Python compares them).
fn exact(a: i64, b: f64) -> Ordering {
    if b >= 9.3e18 {
        return Ordering::Less;
    }
    if b <= -9.3e18 {
        return Ordering::Greater;
    }
    let t = b.trunc();
    match a.cmp(&(t as i64)) {
        Ordering::Equal => 0.0f64.partial_cmp(&(b - t)).unwrap_or(Ordering::Equal),
        o => o,
    }
}
