//! Event-time control for stream processors that drive the engine with a
//! watermark (the Spark glue): advancing time without an event, the next time at
//! which state expires, and whether any state is left.

use super::Runtime;
use crate::det::DetId;

impl Runtime {
    /// Declares that no accepted event will have a window coordinate below `w`
    /// (time-based windows: nanoseconds, or the attribute's unit for `WITHIN n
    /// [attr]`). Expired partial matches and partitions are released. A later event
    /// below `w` is then late (rejected, or dropped with [`super::LatePolicy::Drop`]).
    /// No effect for `EVENTS` windows or without `WITHIN`.
    ///
    /// With a trailing absence (docs/language.md#s3-3b), the complex events whose deadline is
    /// before `w` are fired: [`Runtime::take_fired`] hands them over.
    pub fn advance_watermark(&mut self, w: i64) {
        if !self.config.query.plan.window.is_time_based() || w <= self.state.max_w {
            return;
        }
        if self.config.deadline.is_some() {
            self.fire_before(w);
        }
        self.state.max_w = w;
        self.reclaim();
        // Partitions expire lazily when touched; drop the ones whose partial
        // matches have all left the window.
        let tau = self.threshold(w);
        let ids: Vec<_> = self.state.partitions.ids().collect();
        for id in ids {
            let p = self.state.partitions.get_mut(id);
            p.table.retain(|e| e.ul[0].max >= tau);
            if p.table.is_empty() && p.virtual_det == DetId::INITIAL {
                self.state.partitions.remove(id, &mut self.scratch.pool);
            }
        }
    }

    /// The earliest window coordinate at which some partition's partial matches
    /// will all have left the window (so it becomes idle if no event of it
    /// arrives), or `None` when nothing expires by time (no live partial match, or
    /// no time-based window).
    pub fn next_deadline(&self) -> Option<i64> {
        let eps = self.config.query.plan.window.epsilon()?;
        if !self.config.query.plan.window.is_time_based() {
            return None;
        }
        let tau = self.threshold(self.state.max_w);
        let expiry = self
            .state
            .partitions
            .iter()
            .filter_map(|p| p.table.iter().map(|e| e.ul[0].max).filter(|&m| m >= tau).max())
            .map(|newest| newest.saturating_add(eps).saturating_add(1))
            .min();
        // A waiting complex event fires at the first time after its deadline.
        let fire = self.state.deadlines.next().map(|d| d.saturating_add(1));
        match (expiry, fire) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Converts a time value as given by the user (a number in the time unit of
    /// the time field, a time stamp, or an attribute value for `WITHIN n [attr]`)
    /// to a window coordinate.
    pub fn time_coordinate(&self, v: crate::value::ValueRef<'_>) -> Result<i64, String> {
        use crate::analyze::WindowPlan;
        use crate::value::ValueRef;
        let factor = match self.config.query.plan.window {
            WindowPlan::Duration(_) => self.config.options.time_unit_nanos,
            WindowPlan::Attribute { .. } => 1,
            _ => return Err("the query has no time-based window".into()),
        };
        match v {
            ValueRef::Int(i) => Ok(i.saturating_mul(factor)),
            ValueRef::Float(f) if f.is_finite() => {
                Ok(float_nanos(f, factor).unwrap_or(if f < 0.0 { i64::MIN } else { i64::MAX }))
            }
            ValueRef::Timestamp(ns) => Ok(ns),
            other => Err(format!("expected {}", not_a_time_stamp(other))),
        }
    }

    /// Units of the time field per window coordinate unit (1 for attribute windows).
    pub fn time_scale(&self) -> i64 {
        match self.config.query.plan.window {
            crate::analyze::WindowPlan::Duration(_) => self.config.options.time_unit_nanos,
            _ => 1,
        }
    }

    /// True when no partial match is alive in the window, no partition holds
    /// strategy state and the reorder buffer holds no event: the evaluation state
    /// can be discarded (an empty runtime at the same position behaves the same).
    pub fn is_idle(&self) -> bool {
        if self.reorder_stats().is_some_and(|s| s.held > 0) {
            return false;
        }
        let tau = if self.state.max_w == i64::MIN { i64::MIN } else { self.threshold(self.state.max_w) };
        self.state.deadlines.is_empty()
            && self
                .state
                .partitions
                .iter()
                .all(|p| p.virtual_det == DetId::INITIAL && p.table.iter().all(|e| e.ul[0].max < tau))
    }
}

/// What is wrong with a value given as a time stamp: "a finite number or a time
/// stamp, found ..." with NaN and infinities named (a double is a number).
pub(crate) fn not_a_time_stamp(v: crate::ValueRef<'_>) -> String {
    let found = match v {
        crate::ValueRef::Float(f) if f.is_nan() => "NaN".to_string(),
        crate::ValueRef::Float(f) if f.is_infinite() => format!("{}infinity", if f < 0.0 { "-" } else { "" }),
        other => crate::predicate::describe_value(other).to_string(),
    };
    format!("a finite number or a time stamp, found {found}")
}

/// A fractional time stamp in units of `factor` ns as whole nanoseconds: the
/// nearest one, halves away from zero (docs/language.md#s1-4). A double has no
/// exact decimal value: 2.01 s is 2009999999.9999998 ns, which truncation made one
/// nanosecond short of 3.01 s minus one second. `None` outside 64 bits.
pub fn float_nanos(f: f64, factor: i64) -> Option<i64> {
    let ns = (f * factor as f64).round();
    // i64::MAX as f64 rounds up to 2^63, itself out of range.
    (-(i64::MAX as f64)..i64::MAX as f64).contains(&ns).then_some(ns as i64)
}
