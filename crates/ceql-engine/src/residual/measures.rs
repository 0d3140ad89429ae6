//! Measures of the `SELECT` list (docs/language.md#s3-5a): the aggregates of each output,
//! computed from its valuation in time linear in the valuation's size, and the key that
//! tells outputs with different measure values apart.

use super::compile::ResidualPlan;
use super::{aggregate, ResidualError, Valuation, ValueStore};
use crate::value::Value;

impl ResidualPlan {
    /// Writes the measures of valuation `v` into `out` (cleared first), in the order of
    /// the `SELECT` list; `positions` is scratch space. `Err` names the aggregate that met
    /// a value it cannot take.
    pub(crate) fn measure_values(
        &self,
        v: &Valuation<'_>,
        store: &ValueStore,
        out: &mut Vec<Value>,
        positions: &mut Vec<u64>,
    ) -> Result<(), ResidualError> {
        out.clear();
        for m in &self.measures {
            positions.clear();
            positions.extend((0..v.positions.len()).filter(|&i| (v.captures)(i, m.var)).map(|i| v.positions[i]));
            let value = aggregate::compute(m.func, positions, m.attr, store).map_err(|message| ResidualError {
                field: m.text.clone(),
                message: format!("{message} ({}, a measure of the match ending at this event)", m.text),
            })?;
            out.push(value);
        }
        Ok(())
    }
}

/// Appends to `key` a canonical form of `v` for telling outputs apart: numbers compare
/// as numbers (`1` and `1.0` are one value, a time stamp is its nanoseconds), a NaN
/// equals a NaN.
pub(crate) fn measure_key(v: &Value, key: &mut Vec<u8>) {
    match v {
        Value::Null => key.push(0),
        Value::Bool(b) => key.extend([1, *b as u8]),
        Value::Int(i) | Value::Timestamp(i) => {
            key.push(2);
            key.extend(i.to_le_bytes());
        }
        Value::Float(f) => {
            if f.is_nan() {
                key.push(3);
            } else if f.fract() == 0.0 && (-9.2e18..9.2e18).contains(f) {
                key.push(2);
                key.extend((*f as i64).to_le_bytes());
            } else {
                key.push(4);
                key.extend(f.to_bits().to_le_bytes());
            }
        }
        Value::Str(s) => {
            key.push(5);
            key.extend((s.len() as u64).to_le_bytes());
            key.extend(s.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::measure_key;
    use crate::value::Value;

    fn key(v: Value) -> Vec<u8> {
        let mut k = Vec::new();
        measure_key(&v, &mut k);
        k
    }

    #[test]
    fn numbers_compare_as_numbers_and_nan_equals_nan() {
        assert_eq!(key(Value::Int(1)), key(Value::Float(1.0)));
        assert_eq!(key(Value::Int(0)), key(Value::Float(-0.0)));
        assert_ne!(key(Value::Int(1)), key(Value::Float(1.5)));
        assert_eq!(key(Value::Float(f64::NAN)), key(Value::Float(-f64::NAN)));
        assert_ne!(key(Value::Null), key(Value::Int(0)));
        assert_ne!(key(Value::Str("a".into())), key(Value::Str("b".into())));
    }
}
