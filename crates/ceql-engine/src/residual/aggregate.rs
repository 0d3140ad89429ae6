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
/// attribute `attr`. `Err` names what is not a number.
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
    let mut values = Vec::with_capacity(positions.len());
    for &p in positions {
        match store.get(p, a) {
            ValueRef::Absent | ValueRef::Null => {}
            ValueRef::Int(i) | ValueRef::Timestamp(i) => values.push(Num::Int(i)),
            ValueRef::Float(f) => values.push(Num::Float(f)),
            other => {
                let found = crate::predicate::describe_value(other);
                return Err(format!("{} needs numbers, found {found}", func.name()));
            }
        }
    }
    if values.is_empty() {
        return Ok(Value::Null);
    }
    Ok(match func {
        AggFunc::Sum if values.iter().all(|v| matches!(v, Num::Int(_))) => {
            let total: i128 = values.iter().map(|v| if let Num::Int(i) = v { *i as i128 } else { 0 }).sum();
            i64::try_from(total).map_or(Value::Null, Value::Int)
        }
        AggFunc::Sum => Value::Float(values.iter().fold(0.0, |acc, v| acc + v.as_f64())),
        AggFunc::Avg => Value::Float(values.iter().fold(0.0, |acc, v| acc + v.as_f64()) / values.len() as f64),
        _ => {
            if values.iter().any(|v| matches!(v, Num::Float(f) if f.is_nan())) {
                return Ok(Value::Float(f64::NAN));
            }
            let want = if func == AggFunc::Min { Ordering::Less } else { Ordering::Greater };
            let mut best = values[0];
            for &v in &values[1..] {
                if v.cmp(best) == want {
                    best = v;
                }
            }
            best.into_value()
        }
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
