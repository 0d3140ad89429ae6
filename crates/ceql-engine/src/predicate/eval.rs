//! Three-valued evaluation (docs/language.md#s3-4): `Ok(Some(b))` is TRUE/FALSE,
//! `Ok(None)` is UNKNOWN (a NULL or NaN operand), `Err` is a run-time type error
//! (possible only without declarations, where attribute types come from the data).

use super::{AttrSlot, ExprIr, PredIr, Row, SetIr};
use crate::value::{Value, ValueRef, ValueType};
use ceql_syntax::ast::{ArithOp, CmpOp};
use std::cmp::Ordering;

/// A type error found while evaluating a predicate on an event.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// The attribute with the unexpected type, if one is involved.
    pub slot: Option<AttrSlot>,
    /// What was expected and found.
    pub message: String,
}

/// Intermediate values: strings are borrowed, time stamps read as integers.
#[derive(Clone, Copy, Debug)]
enum V<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

impl V<'_> {
    fn type_name(&self) -> &'static str {
        match self {
            V::Null => "null",
            V::Bool(_) => "boolean",
            V::Int(_) => "int",
            V::Float(_) => "double",
            V::Str(_) => "string",
        }
    }
}

fn from_ref(v: ValueRef<'_>) -> V<'_> {
    match v {
        ValueRef::Absent | ValueRef::Null => V::Null,
        ValueRef::Bool(b) => V::Bool(b),
        ValueRef::Int(i) | ValueRef::Timestamp(i) => V::Int(i),
        ValueRef::Float(f) => V::Float(f),
        ValueRef::Str(s) => V::Str(s),
    }
}

fn from_value(v: &Value) -> V<'_> {
    from_ref(v.as_ref())
}

/// Evaluates `p` on `row`.
pub fn eval_pred<R: Row + ?Sized>(p: &PredIr, row: &R) -> Result<Option<bool>, Mismatch> {
    Ok(match p {
        // Every operand is evaluated, left to right, so that a type error is reported
        // whatever the other operands are (as the columnar path does).
        PredIr::And(items) => {
            let mut acc = Some(true);
            for item in items {
                acc = match (acc, eval_pred(item, row)?) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
            }
            acc
        }
        PredIr::Or(items) => {
            let mut acc = Some(false);
            for item in items {
                acc = match (acc, eval_pred(item, row)?) {
                    (Some(true), _) | (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                };
            }
            acc
        }
        PredIr::Not(a) => eval_pred(a, row)?.map(|b| !b),
        PredIr::Cmp(op, l, r) => {
            let (a, b) = (eval_expr(l, row)?, eval_expr(r, row)?);
            // Blame an attribute before a constant: `s > 1` names `s` whichever side it is on.
            let (first, second) = if matches!(*l, ExprIr::Const(_)) { (r, l) } else { (l, r) };
            compare(*op, a, b).map_err(|m| blame(m, first, second))?
        }
        PredIr::Like(e, re) => match eval_expr(e, row)? {
            V::Null => None,
            V::Str(s) => Some(re.is_match(s)),
            other => return Err(blame(format!("LIKE needs a string, found {}", other.type_name()), e, e)),
        },
        PredIr::InSet(e, set, negated) => {
            let v = eval_expr(e, row)?;
            in_set(v, set).map_err(|m| blame(m, e, e))?.map(|b| b != *negated)
        }
        PredIr::InRange(e, lo, hi) => {
            let (v, a, b) = (eval_expr(e, row)?, eval_expr(lo, row)?, eval_expr(hi, row)?);
            // A NULL operand (value or bound) makes IN RANGE UNKNOWN (docs/language.md#s3-4).
            if matches!(v, V::Null) || matches!(a, V::Null) || matches!(b, V::Null) {
                return Ok(None);
            }
            let ge = compare(CmpOp::Ge, v, a).map_err(|m| blame(m, e, lo))?;
            let le = compare(CmpOp::Le, v, b).map_err(|m| blame(m, e, hi))?;
            match (ge, le) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            }
        }
        // NULL (absent, or from arithmetic: overflow, division by zero) and nothing else;
        // a NaN is a value (docs/language.md#s3-4).
        PredIr::IsNull(e, negated) => Some(matches!(eval_expr(e, row)?, V::Null) != *negated),
        PredIr::Bool(e) => match eval_expr(e, row)? {
            V::Null => None,
            V::Bool(b) => Some(b),
            other => return Err(blame(format!("a predicate must be boolean, found {}", other.type_name()), e, e)),
        },
    })
}

/// Attributes a type error to the first attribute of `a`, else of `b`. Callers pass
/// the operand that holds the wrongly typed value first.
fn blame(message: String, a: &ExprIr, b: &ExprIr) -> Mismatch {
    fn first_attr(e: &ExprIr) -> Option<AttrSlot> {
        match e {
            ExprIr::Attr(s) => Some(*s),
            ExprIr::Const(_) => None,
            ExprIr::Neg(x) | ExprIr::Pos(x) => first_attr(x),
            ExprIr::Arith(_, x, y) => first_attr(x).or_else(|| first_attr(y)),
        }
    }
    Mismatch { slot: first_attr(a).or_else(|| first_attr(b)), message }
}

fn eval_expr<'r, R: Row + ?Sized>(e: &'r ExprIr, row: &'r R) -> Result<V<'r>, Mismatch> {
    Ok(match e {
        ExprIr::Const(v) => from_value(v),
        ExprIr::Attr(slot) => from_ref(row.get(*slot)),
        ExprIr::Neg(x) => match eval_expr(x, row)? {
            V::Null => V::Null,
            V::Int(i) => i.checked_neg().map_or(V::Null, V::Int),
            V::Float(f) => V::Float(-f),
            other => return Err(blame(format!("unary minus needs a number, found {}", other.type_name()), x, x)),
        },
        ExprIr::Pos(x) => match eval_expr(x, row)? {
            v @ (V::Null | V::Int(_) | V::Float(_)) => v,
            other => return Err(blame(format!("unary plus needs a number, found {}", other.type_name()), x, x)),
        },
        ExprIr::Arith(op, l, r) => {
            let (a, b) = (eval_expr(l, row)?, eval_expr(r, row)?);
            // Blame the operand whose value is not a number (the other may be NULL).
            let bad = if matches!(a, V::Null | V::Int(_) | V::Float(_)) { r } else { l };
            arith(*op, a, b).map_err(|m| blame(m, bad, bad))?
        }
    })
}

fn arith<'a>(op: ArithOp, a: V<'a>, b: V<'a>) -> Result<V<'a>, String> {
    Ok(match (a, b) {
        (V::Null, V::Null | V::Int(_) | V::Float(_)) | (V::Int(_) | V::Float(_), V::Null) => V::Null,
        (V::Int(x), V::Int(y)) => match op {
            ArithOp::Add => x.checked_add(y).map_or(V::Null, V::Int),
            ArithOp::Sub => x.checked_sub(y).map_or(V::Null, V::Int),
            ArithOp::Mul => x.checked_mul(y).map_or(V::Null, V::Int),
            ArithOp::Div => x.checked_div(y).map_or(V::Null, V::Int),
            ArithOp::Rem => {
                if y == 0 {
                    V::Null
                } else {
                    V::Int(x.wrapping_rem(y))
                }
            }
        },
        (V::Int(_) | V::Float(_), V::Int(_) | V::Float(_)) => {
            let (x, y) = (as_f64(a), as_f64(b));
            match op {
                ArithOp::Add => V::Float(x + y),
                ArithOp::Sub => V::Float(x - y),
                ArithOp::Mul => V::Float(x * y),
                ArithOp::Div if y == 0.0 => V::Null,
                ArithOp::Div => V::Float(x / y),
                ArithOp::Rem if y == 0.0 => V::Null,
                ArithOp::Rem => V::Float(x % y),
            }
        }
        (x, y) => {
            let bad = if matches!(x, V::Int(_) | V::Float(_) | V::Null) { y } else { x };
            return Err(format!("`{}` needs numbers, found {}", op.symbol(), bad.type_name()));
        }
    })
}

fn as_f64(v: V<'_>) -> f64 {
    match v {
        V::Int(i) => i as f64,
        V::Float(f) => f,
        _ => f64::NAN,
    }
}

/// Numeric ordering with the int/double rules; `None` for a NaN operand.
fn numeric_cmp(a: V<'_>, b: V<'_>) -> Option<Ordering> {
    match (a, b) {
        (V::Int(x), V::Int(y)) => Some(x.cmp(&y)),
        _ => as_f64(a).partial_cmp(&as_f64(b)),
    }
}

fn compare(op: CmpOp, a: V<'_>, b: V<'_>) -> Result<Option<bool>, String> {
    let ord = match (a, b) {
        (V::Null, _) | (_, V::Null) => return Ok(None),
        (V::Int(_) | V::Float(_), V::Int(_) | V::Float(_)) => match numeric_cmp(a, b) {
            Some(o) => o,
            None => return Ok(None),
        },
        (V::Str(x), V::Str(y)) if matches!(op, CmpOp::Eq | CmpOp::Ne) => x.as_bytes().cmp(y.as_bytes()),
        (V::Bool(x), V::Bool(y)) if matches!(op, CmpOp::Eq | CmpOp::Ne) => x.cmp(&y),
        (x, y) => {
            return Err(if x.type_name() == y.type_name() {
                format!("`{}` needs numbers, found {}", op.symbol(), x.type_name())
            } else {
                format!("cannot compare {} with {}", x.type_name(), y.type_name())
            })
        }
    };
    Ok(Some(decide(op, ord)))
}

/// The truth of `a op b` given how `a` compares to `b`.
#[inline]
pub(crate) fn decide(op: CmpOp, ord: Ordering) -> bool {
    match op {
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Le => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Ge => ord != Ordering::Less,
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Ne => ord != Ordering::Equal,
    }
}

fn in_set(v: V<'_>, set: &SetIr) -> Result<Option<bool>, String> {
    match (v, set) {
        (V::Null, _) => Ok(None),
        (V::Float(f), _) if f.is_nan() => Ok(None),
        (V::Str(s), SetIr::Strings(items)) => Ok(Some(items.iter().any(|i| i.as_bytes() == s.as_bytes()))),
        (V::Int(_) | V::Float(_), SetIr::Numbers(items)) => {
            Ok(Some(items.iter().any(|i| numeric_cmp(v, from_value(i)) == Some(Ordering::Equal))))
        }
        (V::Int(_) | V::Float(_), SetIr::Range(lo, hi)) => {
            let ge = lo.as_ref().is_none_or(|l| numeric_cmp(v, from_value(l)) != Some(Ordering::Less));
            let le = hi.as_ref().is_none_or(|h| numeric_cmp(v, from_value(h)) != Some(Ordering::Greater));
            Ok(Some(ge && le))
        }
        (other, SetIr::Strings(_)) => Err(format!("IN: {} value tested against a set of strings", other.type_name())),
        (other, _) => Err(format!("IN: {} value tested against a set of numbers", other.type_name())),
    }
}

/// The runtime type name of a value (for messages).
pub(crate) fn describe(v: ValueRef<'_>) -> String {
    v.value_type().map_or_else(|| "null".to_string(), |t: ValueType| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predicate::{compile_pred, AttrResolver};

    struct Slots(Vec<&'static str>);
    impl AttrResolver for Slots {
        fn resolve(&mut self, name: &str) -> Option<AttrSlot> {
            self.0.iter().position(|n| *n == name).map(|i| i as AttrSlot)
        }
    }

    fn eval(pred: &str, row: &[ValueRef<'_>]) -> Result<Option<bool>, Mismatch> {
        let text = format!("SELECT * FROM S WHERE A FILTER A[{pred}]");
        let q = ceql_syntax::parse_query_text(&text).unwrap().query;
        let p = match q.pattern.kind {
            ceql_syntax::ast::CelKind::Filter(_, ceql_syntax::ast::Filter::Var { pred, .. }) => pred,
            _ => unreachable!(),
        };
        let ir = compile_pred(&p, &mut Slots(vec!["v", "w", "s"]), &crate::predicate::Regexes::default()).unwrap();
        eval_pred(&ir, row)
    }

    #[test]
    fn kleene_logic_and_null() {
        let row = [ValueRef::Int(5), ValueRef::Null, ValueRef::Str("xbarx")];
        assert_eq!(eval("w > 1", &row), Ok(None));
        assert_eq!(eval("NOT w > 1", &row), Ok(None));
        assert_eq!(eval("w > 1 OR v = 5", &row), Ok(Some(true)));
        assert_eq!(eval("w > 1 AND v = 4", &row), Ok(Some(false)));
        assert_eq!(eval("s LIKE 'b.r'", &row), Ok(Some(true)));
        assert_eq!(eval("s LIKE '^b.r$'", &row), Ok(Some(false)));
    }

    #[test]
    fn integer_arithmetic_rules() {
        let row = [ValueRef::Int(3), ValueRef::Int(i64::MIN), ValueRef::Absent];
        assert_eq!(eval("v / 2 = 1", &row), Ok(Some(true)));
        assert_eq!(eval("-7 % v = -1", &row), Ok(Some(true)));
        assert_eq!(eval("v / 0 = 1", &row), Ok(None));
        assert_eq!(eval("w / -1 = 1", &row), Ok(None));
        assert_eq!(eval("w % -1 = 0", &row), Ok(Some(true)));
        assert_eq!(eval("w - 1 < 0", &row), Ok(None));
        assert_eq!(eval("v * 1.5 = 4.5", &row), Ok(Some(true)));
        assert_eq!(eval("v IN RANGE(3, 3)", &row), Ok(Some(true)));
        assert_eq!(eval("v NOT IN {..2}", &row), Ok(Some(true)));
        assert_eq!(eval("v IN {1, 3.0}", &row), Ok(Some(true)));
    }

    #[test]
    fn nan_is_unknown() {
        let row = [ValueRef::Float(f64::NAN), ValueRef::Int(1), ValueRef::Absent];
        assert_eq!(eval("v > 1", &row), Ok(None));
        assert_eq!(eval("NOT v > 1", &row), Ok(None));
        assert_eq!(eval("v IN {1}", &row), Ok(None));
        assert_eq!(eval("v IN RANGE(0, 2)", &row), Ok(None));
    }

    #[test]
    fn runtime_type_errors_name_the_attribute() {
        let row = [ValueRef::Str("26.5"), ValueRef::Int(1), ValueRef::Absent];
        let err = eval("v > 26.0", &row).unwrap_err();
        assert_eq!(err.slot, Some(0));
        assert!(err.message.contains("string"), "{}", err.message);
        assert!(eval("w LIKE 'x'", &row).is_err());
        assert_eq!(eval("1 < v", &row).unwrap_err().slot, Some(0));
        // The NULL operand is not blamed; the string is.
        let row = [ValueRef::Null, ValueRef::Int(1), ValueRef::Str("a")];
        assert_eq!(eval("v + s > 1", &row).unwrap_err().slot, Some(2));
        assert_eq!(eval("w + (v - s) > 1", &row).unwrap_err().slot, Some(2));
    }
}
