//! Clause checks: `WITHIN` (E0206) and `PARTITION BY` (E0207).

use super::WindowPlan;
use crate::schema::Schema;
use crate::value::AttrType;
use ceql_syntax::ast::{self, Window};
use ceql_syntax::Diagnostic;

/// Resolves the window. Every form is inclusive (docs/language.md#s3-7, V45–V47); for
/// `WITHIN n [a]` the reference's §6.1 says `ε = n − 1`, which contradicts §3.7 and
/// V47, so `ε = n` here, and `n = 0` is accepted as docs/language.md#s3-7 and D15 say.
pub(super) fn window(query: &ast::Query, schema: &Schema) -> Result<WindowPlan, Diagnostic> {
    let Some(w) = &query.within else { return Ok(WindowPlan::Unbounded) };
    match w {
        Window::Events { n, .. } => Ok(WindowPlan::Events(*n)),
        Window::Attribute { n, attr, span } => {
            if let Some(d) = super::names::reserved_attribute("E0206", attr) {
                return Err(d);
            }
            if schema.declared {
                for (ti, t) in schema.types.iter().enumerate() {
                    match t.attr_type(&attr.name) {
                        Some(AttrType::Int | AttrType::PrimaryTime) => {}
                        other => {
                            let why = match other {
                                None => "is not declared".to_string(),
                                Some(ty) => format!("is declared as {ty}"),
                            };
                            return Err(Diagnostic::error(
                                "E0206",
                                format!(
                                    "window attribute `{}` {why} in event type `{}`",
                                    attr.name,
                                    schema.type_display(ti as u32)
                                ),
                                *span,
                            )
                            .with_label(
                                "WITHIN n [a] needs `a` declared as int or primary_time in every event type of FROM",
                            ));
                        }
                    }
                }
            }
            Ok(WindowPlan::Attribute { n: *n, attr: attr.name.clone() })
        }
        Window::Duration { parts, span } => {
            let mut total: i128 = 0;
            for p in parts {
                total += scaled(&p.amount, p.unit.nanos());
                if total > i64::MAX as i128 {
                    return Err(Diagnostic::error(
                        "E0206",
                        "window duration exceeds the i64 nanosecond range (about 292 years)",
                        *span,
                    ));
                }
            }
            if total == 0 {
                return Err(Diagnostic::error("E0206", "window duration is zero", *span));
            }
            Ok(WindowPlan::Duration(total as i64))
        }
    }
}

/// The nanoseconds of a duration (summed components, each exact from its decimal text and
/// truncated), or `None` beyond the i64 range.
pub(super) fn duration_nanos(parts: &[ast::DurationPart]) -> Option<i64> {
    let mut total: i128 = 0;
    for p in parts {
        total += scaled(&p.amount, p.unit.nanos());
        if total > i64::MAX as i128 {
            return None;
        }
    }
    Some(total as i64)
}

/// `amount × factor` computed exactly from the decimal text, truncated toward zero.
fn scaled(amount: &str, factor: i128) -> i128 {
    let (int_part, frac_part) = amount.split_once('.').unwrap_or((amount, ""));
    let (frac_digits, exp) = match frac_part.split_once(['e', 'E']) {
        Some((d, e)) => (d, e.parse::<i32>().unwrap_or(0)),
        None => (frac_part, 0),
    };
    let (int_digits, exp) = match int_part.split_once(['e', 'E']) {
        Some((d, e)) => (d, exp + e.parse::<i32>().unwrap_or(0)),
        None => (int_part, exp),
    };
    let digits = format!("{int_digits}{frac_digits}");
    let mantissa: i128 = digits.parse().unwrap_or(i128::MAX / 4);
    let scale = exp - frac_digits.len() as i32;
    if scale >= 0 {
        mantissa.saturating_mul(factor).saturating_mul(10i128.saturating_pow(scale as u32))
    } else {
        mantissa.saturating_mul(factor) / 10i128.saturating_pow((-scale) as u32)
    }
}

/// Resolves `PARTITION BY`; with declarations every attribute must be declared by
/// some event type of the `FROM` streams (E0207).
pub(super) fn partition(query: &ast::Query, schema: &Schema) -> Result<Vec<Vec<String>>, Diagnostic> {
    let mut groups = Vec::new();
    for g in &query.partition_by {
        let mut names = Vec::new();
        for a in &g.attrs {
            if let Some(d) = super::names::reserved_attribute("E0207", a) {
                return Err(d);
            }
            if schema.declared && !schema.types.iter().any(|t| t.attr_type(&a.name).is_some()) {
                return Err(Diagnostic::error(
                    "E0207",
                    format!("partition attribute `{}` is not declared by any event type", a.name),
                    a.span,
                ));
            }
            names.push(a.name.clone());
        }
        groups.push(names);
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::scaled;

    #[test]
    fn decimal_durations_are_exact() {
        assert_eq!(scaled("1.5", 3_600_000_000_000), 5_400_000_000_000);
        assert_eq!(scaled("30", 1_000_000_000), 30_000_000_000);
        assert_eq!(scaled("0.0000000001", 1_000_000_000), 0);
        assert_eq!(scaled("2.5e1", 1_000_000), 25_000_000);
    }
}
