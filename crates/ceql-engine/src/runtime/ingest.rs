//! Per-event ingestion: which `S>T` an event is, its window coordinate, its
//! partition key and its predicate bits (its class). Nothing here changes the
//! evaluation state, so an event rejected with an error leaves the runtime as if it
//! had never been pushed.

use super::{LatePolicy, Precomputed, Runtime};
use crate::analyze::WindowPlan;
use crate::bitset;
use crate::det::OTHER_TYPE;
use crate::predicate::{eval_pred, AttrSlot, Row};
use crate::query::KeySource;
use crate::schema::TypeId;
use crate::value::{AttrType, ValueRef};

/// What an event is to the query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The event belongs to a stream outside `FROM`: it keeps its position but is
    /// not part of the query's input sequence.
    Skip,
    /// An event type of the query (`OTHER_TYPE` for types the query does not name:
    /// they occupy their position and can break contiguity).
    Type(TypeId),
}

/// Why an event is not processed further.
pub(super) enum Outcome {
    /// Process it with this coordinate.
    Accept(i64),
    /// Dropped as late (docs/language.md#s3-7); counted.
    Late,
}

impl Runtime {
    /// Resolves the stream and type names of an event. The error is a
    /// (field, message) pair; the caller adds the position.
    pub fn resolve_target(&self, stream: Option<&str>, event_type: &str) -> Result<Target, (&'static str, String)> {
        let schema = &self.config.query.plan.schema;
        // Without FROM (open schema): stream 0 is the implicit stream; the others
        // are the qualifiers of the query.
        let implicit = !schema.declared && schema.streams[0].name.is_empty();
        let sid = match stream {
            _ if implicit => stream.and_then(|s| schema.stream_id(s)).filter(|&id| id != 0).unwrap_or(0),
            Some(s) => match schema.stream_id(s) {
                Some(id) => id,
                None => return Ok(Target::Skip),
            },
            None if schema.streams.len() == 1 => 0,
            None => {
                // Several FROM streams: with declarations the type may name its stream.
                let candidates: Vec<u32> =
                    schema.types_named(event_type).iter().map(|&t| schema.types[t as usize].stream).collect();
                match candidates.as_slice() {
                    [one] if schema.declared => *one,
                    _ => {
                        let names: Vec<&str> = schema.streams.iter().map(|s| s.name.as_str()).collect();
                        return Err((
                            "stream",
                            format!(
                                "the query reads several streams ({}); the event must name its stream",
                                names.join(", ")
                            ),
                        ));
                    }
                }
            }
        };
        Ok(Target::Type(schema.type_id(sid, event_type).unwrap_or(OTHER_TYPE)))
    }

    /// The window coordinate `w(j)` of an event (docs/language.md#s3-7, #s6-1), or whether it is late.
    #[inline]
    pub(super) fn coordinate<R: Row + ?Sized>(
        &mut self,
        ty: TypeId,
        row: &R,
        position: u64,
    ) -> Result<Outcome, (String, String)> {
        if !self.config.facts.time_based {
            return Ok(Outcome::Accept(position as i64));
        }
        // The usual case inline: an integer or time stamp in the time field, in
        // order. Everything else (a float, NULL, overflow, a late event) takes the
        // general path, which decides and words the errors.
        if let Some((slot, factor)) = self.config.uniform_time {
            let w = match row.get(slot) {
                ValueRef::Int(v) => v.checked_mul(factor),
                ValueRef::Timestamp(ns) => Some(ns),
                _ => None,
            };
            if let Some(w) = w.filter(|w| *w >= self.state.max_w) {
                return Ok(Outcome::Accept(w));
            }
        }
        self.time_coordinate_of(ty, row)
    }

    #[cold]
    fn time_coordinate_of<R: Row + ?Sized>(&mut self, ty: TypeId, row: &R) -> Result<Outcome, (String, String)> {
        match &self.config.query.plan.window {
            WindowPlan::Unbounded | WindowPlan::Events(_) => unreachable!("checked by coordinate()"),
            WindowPlan::Attribute { attr, .. } => {
                let slot = self.config.query.window_slot.expect("attribute windows have a slot");
                // With declarations, a type the stream does not declare has no attributes.
                let value = if ty == OTHER_TYPE && self.config.query.plan.schema.declared {
                    ValueRef::Null
                } else {
                    row.get(slot)
                };
                let w = match value {
                    ValueRef::Absent | ValueRef::Null => return Ok(Outcome::Late),
                    ValueRef::Int(v) | ValueRef::Timestamp(v) => v,
                    other => {
                        return Err((
                            attr.clone(),
                            format!(
                                "window attribute must be an integer, found {}",
                                crate::predicate::describe_value(other)
                            ),
                        ))
                    }
                };
                Ok(if w < self.state.max_w { Outcome::Late } else { Outcome::Accept(w) })
            }
            WindowPlan::Duration(_) => {
                let source = if ty == OTHER_TYPE { None } else { self.config.query.primary_time[ty as usize] };
                let (slot, factor) = match (source, self.config.time_slot) {
                    (Some(s), _) => (Some(s), 1),
                    (None, Some(s)) => (Some(s), self.config.options.time_unit_nanos),
                    (None, None) => (None, 1),
                };
                // The field's name only for errors: cloning it for every event cost a
                // malloc and a free per event (about 270 instructions, measured with
                // callgrind on 200k events of a 100,000-key stream).
                let name = || slot.map_or_else(String::new, |s| self.config.layout[s as usize].clone());
                let w = match slot {
                    // Ingestion time only when nothing in the stream carries event
                    // time (docs/language.md#s1-4). If other types do, an event with no time source
                    // is missing its time stamp: mixing the two clocks would put it
                    // decades ahead and make every later event late.
                    None if self.config.query.primary_time.iter().any(Option::is_some) => {
                        if self.config.options.late_time_stamps == LatePolicy::Drop {
                            return Ok(Outcome::Late);
                        }
                        return Err((
                            self.config.options.type_field.clone(),
                            "missing time stamp: the schema declares no primary_time for this event type and no \
                             time_field was given, but other types carry event time"
                                .into(),
                        ));
                    }
                    None => self.wall_clock(),
                    Some(s) => match row.get(s) {
                        ValueRef::Int(v) => match v.checked_mul(factor) {
                            Some(ns) => ns,
                            None => return Err((name(), out_of_range(v as f64))),
                        },
                        ValueRef::Float(f) if f.is_finite() => match super::clock::float_nanos(f, factor) {
                            Some(ns) => ns,
                            None => return Err((name(), out_of_range(f))),
                        },
                        ValueRef::Timestamp(ns) => ns,
                        // A NULL coordinate is a late event (docs/language.md#s3-7) when late events are
                        // dropped; by default the input must carry every time stamp.
                        ValueRef::Absent | ValueRef::Null
                            if self.config.options.late_time_stamps == LatePolicy::Drop =>
                        {
                            return Ok(Outcome::Late)
                        }
                        ValueRef::Absent | ValueRef::Null => {
                            return Err((name(), "missing time stamp: a time window needs one on every event".into()))
                        }
                        other => {
                            return Err((
                                name(),
                                format!("time stamp must be {}", super::clock::not_a_time_stamp(other)),
                            ))
                        }
                    },
                };
                if w < self.state.max_w {
                    return match self.config.options.late_time_stamps {
                        LatePolicy::Drop => Ok(Outcome::Late),
                        LatePolicy::Error => Err((
                            name(),
                            format!(
                                "time went backwards (to {w} after {}, in nanoseconds); events must be ordered by time",
                                self.state.max_w
                            ),
                        )),
                    };
                }
                Ok(Outcome::Accept(w))
            }
        }
    }

    fn wall_clock(&self) -> i64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64);
        now.max(self.state.max_w)
    }

    /// Encodes the partition key of an event at window coordinate `w` into
    /// `self.scratch.key_buf`; false when the event has no key (docs/language.md#s3-8).
    #[inline]
    pub(super) fn encode_key<R: Row + ?Sized>(&mut self, ty: TypeId, row: &R, w: i64) -> bool {
        self.scratch.key_buf.clear();
        if !self.config.facts.partitioned {
            return true;
        }
        for source in self.config.query.key_sources(ty) {
            let (value, declared) = match source {
                KeySource::Missing => return false,
                KeySource::Routed(slot) => {
                    let at = (w, self.threshold(w));
                    let state = &mut self.state;
                    if !route_key(
                        &mut self.scratch,
                        &state.partitions,
                        &mut state.route_nan_w,
                        at,
                        *slot,
                        row.get(*slot),
                    ) {
                        return false;
                    }
                    continue;
                }
                KeySource::Declared(slot, t) => (row.get(*slot), Some(*t)),
                // Without declarations a NULL counts as absent, so that the next name
                // of the group is used: a table, where every row has every column,
                // then keys an event like the dict that lacks the attribute.
                // One name (the common case): no search over the group.
                KeySource::FirstPresent(slots) if slots.len() == 1 => match row.get(slots[0]) {
                    ValueRef::Absent | ValueRef::Null => return false,
                    v => (v, None),
                },
                KeySource::FirstPresent(slots) => {
                    match slots.iter().map(|&s| row.get(s)).find(|v| !matches!(v, ValueRef::Absent | ValueRef::Null)) {
                        Some(v) => (v, None),
                        None => return false,
                    }
                }
            };
            if !encode_value(&mut self.scratch.key_buf, value, declared) {
                return false;
            }
        }
        true
    }

    /// The class of an event of type `ty` when it does not depend on the event
    /// (no predicates, nothing to validate); cached until the next cache clear.
    #[inline]
    pub(super) fn fixed_class(&mut self, ty: TypeId) -> Option<crate::det::ClassId> {
        // OTHER_TYPE (u32::MAX) maps to the last slot; `min` keeps this branch-free,
        // since whether an event's type is in the query is as random as the stream.
        let i = (ty as usize).min(self.scratch.fixed_classes.len() - 1);
        let (epoch, class) = self.scratch.fixed_classes[i];
        if epoch == u64::MAX {
            return None; // the type has predicates
        }
        if epoch == self.state.cache.stats().clears + 1 {
            return Some(class);
        }
        let words = self.state.cache.classes.words_of(ty);
        let zero = [0u64; 1];
        debug_assert_eq!(words, 1);
        let class = self.state.cache.class_of(ty, &zero[..words]);
        self.scratch.fixed_classes[i] = (self.state.cache.stats().clears + 1, class);
        Some(class)
    }

    /// Evaluates the predicates of type `ty` into the scratch bits, after checking
    /// the declared types of the attributes read; returns the number of words.
    /// Errors are (attribute, message).
    pub(super) fn predicate_bits<R: Row + ?Sized>(
        &mut self,
        ty: TypeId,
        row: &R,
        pre: Option<&Precomputed<'_>>,
    ) -> Result<usize, (String, String)> {
        let words = self.state.cache.classes.words_of(ty);
        if self.scratch.bits.len() < words {
            self.scratch.bits.resize(words, 0);
        }
        for w in &mut self.scratch.bits[..words] {
            *w = 0;
        }
        if ty == OTHER_TYPE {
            return Ok(words);
        }
        for &(slot, declared) in &self.config.query.declared_reads[ty as usize] {
            if pre.is_some_and(|p| p.declared_ok[slot as usize]) {
                continue;
            }
            let v = row.get(slot);
            if !fits_declared(v, declared) {
                return Err((
                    self.config.layout[slot as usize].clone(),
                    format!("declared as {declared}, found {}", crate::predicate::describe_value(v)),
                ));
            }
        }
        for (b, p) in self.config.query.preds[ty as usize].iter().enumerate() {
            if let Some(tri) = pre.and_then(|pre| pre.per_type[ty as usize][b].as_ref().map(|t| (t, pre.row))) {
                if tri.0.is_true(tri.1) {
                    bitset::set(&mut self.scratch.bits, b);
                }
                continue;
            }
            match eval_pred(p, row) {
                Ok(Some(true)) => bitset::set(&mut self.scratch.bits, b),
                Ok(_) => {}
                Err(m) => {
                    let field = m
                        .slot
                        .map_or_else(|| "filter".to_string(), |s: AttrSlot| self.config.layout[s as usize].clone());
                    return Err((field, m.message));
                }
            }
        }
        Ok(words)
    }
}

/// Appends the routing key of a routed query (docs/language.md#s3-4b) read from `slot`;
/// false when the event has none, or when it cannot be routed (the error is left in
/// `scratch.route_error` for the push to report). `at` is the event's window coordinate
/// and threshold. A NaN has no key but is a number: it is checked against the held kinds
/// like a key, and remembered in `nan_w` for the kind checks of the events after it.
#[inline(never)]
fn route_key(
    scratch: &mut super::Scratch,
    partitions: &super::Partitions,
    nan_w: &mut Option<i64>,
    (w, tau): (i64, i64),
    slot: AttrSlot,
    value: ValueRef<'_>,
) -> bool {
    use super::route_key::{check_kind, encode, Held, NAN_KIND};
    let buf = &mut scratch.key_buf;
    let start = buf.len();
    let held = Held { partitions, tau, nan_w: *nan_w };
    let checked = encode(buf, value).and_then(|keyed| {
        if keyed {
            check_kind(buf[start], &mut scratch.route_kind, held)?;
        } else if matches!(value, ValueRef::Float(f) if f.is_nan()) {
            check_kind(NAN_KIND, &mut scratch.route_kind, held)?;
            *nan_w = Some(w);
        }
        Ok(keyed)
    });
    match checked {
        Ok(keyed) => keyed,
        Err(message) => {
            scratch.route_error = Some((slot, message));
            false
        }
    }
}

/// Whether a supplied value fits a declared type (an int fits a double).
fn fits_declared(v: ValueRef<'_>, t: AttrType) -> bool {
    matches!(
        (t, v),
        (_, ValueRef::Absent | ValueRef::Null)
            | (AttrType::Int, ValueRef::Int(_))
            | (AttrType::Double, ValueRef::Int(_) | ValueRef::Float(_))
            | (AttrType::String, ValueRef::Str(_))
            | (AttrType::Boolean, ValueRef::Bool(_))
            | (AttrType::PrimaryTime, ValueRef::Int(_) | ValueRef::Timestamp(_))
    )
}

/// Appends one key component; false for NULL. Components of different types never
/// compare equal (`int 1` ≠ `double 1.0`, docs/language.md#s3-8); doubles are compared by bit pattern
/// after mapping `-0.0` to `0.0`.
fn encode_value(buf: &mut Vec<u8>, v: ValueRef<'_>, declared: Option<AttrType>) -> bool {
    let v = match (declared, v) {
        (Some(AttrType::Double), ValueRef::Int(i)) => ValueRef::Float(i as f64),
        _ => v,
    };
    match v {
        ValueRef::Absent | ValueRef::Null => return false,
        ValueRef::Int(i) => {
            buf.push(1);
            buf.extend_from_slice(&i.to_le_bytes());
        }
        ValueRef::Float(f) => {
            let f = if f == 0.0 { 0.0 } else { f };
            buf.push(2);
            buf.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        ValueRef::Str(s) => {
            buf.push(3);
            buf.extend_from_slice(&(s.len() as u32).to_le_bytes());
            buf.extend_from_slice(s.as_bytes());
        }
        ValueRef::Bool(b) => {
            buf.push(4);
            buf.push(b as u8);
        }
        ValueRef::Timestamp(t) => {
            buf.push(5);
            buf.extend_from_slice(&t.to_le_bytes());
        }
    }
    true
}

/// The error for a time stamp that does not fit in 64-bit nanoseconds (about the
/// years 1677 to 2262): saturating it would silently put it at the end of time.
fn out_of_range(value: f64) -> String {
    format!("time stamp {value} is out of range: in nanoseconds it does not fit in 64 bits (years 1677 to 2262)")
}
