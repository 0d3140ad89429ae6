//! The routing key of an event (docs/language.md#s3-4b): the value of its type's key
//! attribute, normalised so that two keys are equal exactly when `=` between the
//! values is TRUE. Routing replaces the test of equalities between variables, so a
//! key that merged values `=` tells apart would report wrong matches, and one that
//! split values `=` finds equal would lose matches: what cannot be keyed exactly is
//! refused with an error naming the attribute, never routed approximately.

use super::partition::Partitions;
use crate::value::ValueRef;

/// Key tags (the first byte of a routed partition's key).
const INT: u8 = 1;
const FLOAT: u8 = 2;
const STR: u8 = 3;
const BOOL: u8 = 4;

/// Below this magnitude a double holds every integer exactly, so `=` between an
/// integer and a double is the equality of their values (2^53).
const EXACT: f64 = 9_007_199_254_740_992.0;

/// The kind of a tag: `=` between values of different kinds is a type error.
#[inline]
fn kind(tag: u8) -> u8 {
    match tag {
        INT | FLOAT => INT,
        other => other,
    }
}

/// Appends the routing key of `v` to `buf`. `Ok(false)`: the value has no key (NULL,
/// NaN: `=` with it is never TRUE). `Err`: a finite double of magnitude 2^53 or more,
/// which `=` finds equal to several different integers.
pub(super) fn encode(buf: &mut Vec<u8>, v: ValueRef<'_>) -> Result<bool, String> {
    match v {
        ValueRef::Absent | ValueRef::Null => return Ok(false),
        ValueRef::Int(i) | ValueRef::Timestamp(i) => {
            buf.push(INT);
            buf.extend_from_slice(&i.to_le_bytes());
        }
        ValueRef::Float(f) if f.is_nan() => return Ok(false),
        ValueRef::Float(f) if f.abs() < EXACT && f.fract() == 0.0 => {
            // Integral and exact: the key of the integer (`-0.0` is 0).
            buf.push(INT);
            buf.extend_from_slice(&(f as i64).to_le_bytes());
        }
        ValueRef::Float(f) if f.is_finite() && f.abs() >= EXACT => {
            return Err(format!(
                "cannot route by the double {f}: from 2^53 on, `=` rounds an integer to a double, so this \
                 value equals several different integers and is no key (docs/language.md#s3-4b)"
            ))
        }
        ValueRef::Float(f) => {
            buf.push(FLOAT);
            buf.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        ValueRef::Str(s) => {
            buf.push(STR);
            buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
            buf.extend_from_slice(s.as_bytes());
        }
        ValueRef::Bool(b) => {
            buf.push(BOOL);
            buf.push(b as u8);
        }
    }
    Ok(true)
}

/// Checks that a routing key with tag `tag` is of the kind of every routed partition
/// the evaluation holds (`=` between two kinds is a type error, which routing would
/// otherwise turn into "not equal"). `known` remembers the kind all held partitions
/// share (0: not known): it is derived from the partitions, so a restored evaluation
/// starts without it and finds it again on its first routed event.
#[inline]
pub(super) fn check_kind(tag: u8, known: &mut u8, partitions: &Partitions) -> Result<(), String> {
    let k = kind(tag);
    if *known == k {
        return Ok(());
    }
    // Every partition was created past this check, so the held ones share one kind.
    if let Some(other) = partitions.iter().map(|p| kind(p.key[0])).find(|&o| o != k) {
        return Err(format!(
            "cannot compare {} with {}: the routed equality meets values of two kinds while events of the \
             other kind are still inside the window (docs/language.md#s3-4b)",
            kind_name(k),
            kind_name(other)
        ));
    }
    *known = k;
    Ok(())
}

fn kind_name(k: u8) -> &'static str {
    match k {
        INT => "a number",
        STR => "a string",
        _ => "a boolean",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(v: ValueRef<'_>) -> Result<Option<Vec<u8>>, String> {
        let mut buf = Vec::new();
        Ok(encode(&mut buf, v)?.then_some(buf))
    }

    /// `=` of docs/language.md#s3-4 between two numbers, as the predicate evaluator
    /// computes it (an integer is converted when the other side is a double).
    fn num_eq(a: ValueRef<'_>, b: ValueRef<'_>) -> Option<bool> {
        match (a, b) {
            (ValueRef::Int(x), ValueRef::Int(y)) => Some(x == y),
            _ => {
                let f = |v| match v {
                    ValueRef::Int(i) => i as f64,
                    ValueRef::Float(f) => f,
                    _ => unreachable!(),
                };
                let (x, y) = (f(a), f(b));
                (!x.is_nan() && !y.is_nan()).then_some(x == y)
            }
        }
    }

    #[test]
    fn keys_are_equal_exactly_when_the_values_are() {
        let two53 = 1i64 << 53;
        let values = [
            ValueRef::Int(0),
            ValueRef::Int(1),
            ValueRef::Int(-1),
            ValueRef::Int(two53 - 1),
            ValueRef::Int(two53),
            ValueRef::Int(two53 + 1),
            ValueRef::Int(i64::MAX),
            ValueRef::Int(i64::MIN),
            ValueRef::Float(0.0),
            ValueRef::Float(-0.0),
            ValueRef::Float(1.0),
            ValueRef::Float(1.5),
            ValueRef::Float(-1.0),
            ValueRef::Float((two53 - 1) as f64),
            ValueRef::Float(f64::INFINITY),
            ValueRef::Float(f64::NEG_INFINITY),
            ValueRef::Float(f64::NAN),
            ValueRef::Float(1e-300),
        ];
        for &a in &values {
            for &b in &values {
                let (ka, kb) = (key(a).unwrap(), key(b).unwrap());
                let same = matches!((&ka, &kb), (Some(x), Some(y)) if x == y);
                assert_eq!(same, num_eq(a, b) == Some(true), "{a:?} = {b:?}");
            }
        }
    }

    #[test]
    fn no_key_for_null_and_nan_and_an_error_for_large_doubles() {
        assert_eq!(key(ValueRef::Null), Ok(None));
        assert_eq!(key(ValueRef::Absent), Ok(None));
        assert_eq!(key(ValueRef::Float(f64::NAN)), Ok(None));
        assert!(key(ValueRef::Float(9_007_199_254_740_992.0)).is_err());
        assert!(key(ValueRef::Float(-1e300)).is_err());
        // A time stamp is the integer of its nanoseconds, as predicates read it.
        assert_eq!(key(ValueRef::Timestamp(5)), key(ValueRef::Int(5)));
        assert_ne!(key(ValueRef::Str("1")), key(ValueRef::Int(1)));
        assert_ne!(key(ValueRef::Bool(true)), key(ValueRef::Int(1)));
    }
}
