//! The bounded reorder buffer (docs/language.md#s3-7a): events that arrive out of
//! time order are held until the watermark passes them, then released to the
//! evaluation in (time stamp, arrival) order, so that positions are those of the
//! sorted stream.
//!
//! The buffer sits in front of the runtime rather than on the input side because
//! it needs what only the runtime knows: the event's type (for its `primary_time`),
//! the late-event policy, the window (to advance the runtime's watermark) and the
//! state budget. It owns its events (their attribute values by slot), so that the
//! caller's data can go away once pushed.
//!
//! * **Watermark** `W`: the largest of `max time stamp seen − max_delay` and the
//!   values given to [`Runtime::advance_delayed`]; it never decreases.
//! * An arriving event with time stamp `t < W` is **late**: dropped and counted
//!   ([`LatePolicy::Drop`]) or refused with an [`EventError`] naming the time field.
//! * Every held event with `t ≤ W` is released, smallest `(t, arrival)` first.
//! * [`Runtime::flush_delayed`] releases everything and sets `W` to the largest
//!   time stamp seen.
//!
//! Each event carries a caller-chosen `tag` (the Python layer's key to the event's
//! own data); the buffer logs what became of each tag ([`Fate`]), in order.

use super::{LatePolicy, Runtime};
use crate::analyze::WindowPlan;
use crate::det::OTHER_TYPE;
use crate::error::{EventError, EventErrorKind};
use crate::output::{MatchBuffer, Position};
use crate::predicate::AttrSlot;
use crate::value::{Value, ValueRef};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What became of a pushed event, in the order it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Released to the evaluation: it got the next position.
    Released(u64),
    /// Not evaluated: late (dropped), refused on arrival, or refused by the
    /// evaluation when it was released. It has no position.
    Dropped(u64),
}

/// Counters of the reorder buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReorderStats {
    /// Events held now.
    pub held: u64,
    /// Events released to the evaluation so far.
    pub released: u64,
    /// Events that arrived with a time stamp below the largest seen before them
    /// (and were not late): the ones the buffer put back in order.
    pub reordered: u64,
    /// Late events dropped (time stamp below the watermark on arrival).
    pub late: u64,
    /// Largest number of events held at once.
    pub max_held: u64,
}

/// One held event.
#[derive(Clone, Debug)]
struct Held {
    time: i64,
    /// The caller's tie-breaker among equal time stamps (empty: arrival order only).
    tie: Box<[u8]>,
    seq: u64,
    tag: u64,
    stream: Option<Box<str>>,
    event_type: Box<str>,
    /// `None`: the attribute is absent (as opposed to NULL).
    values: Vec<Option<Value>>,
}

impl Held {
    /// Approximate heap bytes, for the state budget.
    fn bytes(&self) -> usize {
        let strings = |v: &Option<Value>| if let Some(Value::Str(s)) = v { s.len() } else { 0 };
        std::mem::size_of::<Held>()
            + self.event_type.len()
            + self.tie.len()
            + self.stream.as_ref().map_or(0, |s| s.len())
            + self.values.len() * std::mem::size_of::<Option<Value>>()
            + self.values.iter().map(strings).sum::<usize>()
    }
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.time, &self.tie, self.seq) == (other.time, &other.tie, other.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time, &self.tie, self.seq).cmp(&(other.time, &other.tie, other.seq))
    }
}

/// The reorder buffer of a [`Runtime`] made with `RuntimeOptions::max_delay`.
#[derive(Debug)]
pub(crate) struct ReorderBuffer {
    /// The bound, in nanoseconds.
    max_delay: i64,
    heap: BinaryHeap<Reverse<Held>>,
    /// Arrival counter (ties of time stamps are released in arrival order).
    next_seq: u64,
    /// Largest time stamp seen (`i64::MIN`: none yet).
    max_seen: i64,
    /// The watermark `W` (`i64::MIN`: none yet).
    watermark: i64,
    bytes: usize,
    stats: ReorderStats,
    /// Fates since the caller last took them.
    log: Vec<Fate>,
}

impl ReorderBuffer {
    pub(crate) fn new(max_delay: u64) -> ReorderBuffer {
        ReorderBuffer {
            max_delay: max_delay.min(i64::MAX as u64) as i64,
            heap: BinaryHeap::new(),
            next_seq: 0,
            max_seen: i64::MIN,
            watermark: i64::MIN,
            bytes: 0,
            stats: ReorderStats::default(),
            log: Vec::new(),
        }
    }

    /// Bytes held, for the state budget.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes + self.heap.capacity() * std::mem::size_of::<Reverse<Held>>()
    }

    fn insert(&mut self, held: Held) {
        self.bytes += held.bytes();
        self.heap.push(Reverse(held));
        self.stats.held = self.heap.len() as u64;
        self.stats.max_held = self.stats.max_held.max(self.stats.held);
    }

    /// The next event to release at the current watermark, if any.
    fn pop_ready(&mut self, all: bool) -> Option<Held> {
        if !all && self.heap.peek()?.0.time > self.watermark {
            return None;
        }
        let Reverse(held) = self.heap.pop()?;
        self.bytes -= held.bytes();
        self.stats.held = self.heap.len() as u64;
        Some(held)
    }
}

/// What a snapshot saves of a reorder buffer.
#[derive(Serialize, Deserialize)]
pub(crate) struct BufferState {
    max_delay: i64,
    next_seq: u64,
    max_seen: i64,
    watermark: i64,
    stats: ReorderStats,
    /// (time, tie, seq, tag, stream, type, values), in release order.
    events: Vec<SavedEvent>,
}

/// A held event in a snapshot: (time, tie, seq, tag, stream, type, values).
type SavedEvent = (i64, Vec<u8>, u64, u64, Option<String>, String, Vec<SavedValue>);

/// A [`Value`] in a snapshot.
#[derive(Serialize, Deserialize)]
pub(crate) enum SavedValue {
    Absent,
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Timestamp(i64),
}

impl ReorderBuffer {
    /// The state a snapshot saves (the log is the caller's, not state).
    pub(crate) fn export(&self) -> BufferState {
        let mut events: Vec<&Held> = self.heap.iter().map(|r| &r.0).collect();
        events.sort();
        let save = |v: &Option<Value>| match v {
            None => SavedValue::Absent,
            Some(Value::Null) => SavedValue::Null,
            Some(Value::Bool(b)) => SavedValue::Bool(*b),
            Some(Value::Int(i)) => SavedValue::Int(*i),
            Some(Value::Float(f)) => SavedValue::Float(*f),
            Some(Value::Str(s)) => SavedValue::Str(s.to_string()),
            Some(Value::Timestamp(t)) => SavedValue::Timestamp(*t),
        };
        BufferState {
            max_delay: self.max_delay,
            next_seq: self.next_seq,
            max_seen: self.max_seen,
            watermark: self.watermark,
            stats: self.stats,
            events: events
                .into_iter()
                .map(|h| {
                    (
                        h.time,
                        h.tie.to_vec(),
                        h.seq,
                        h.tag,
                        h.stream.as_ref().map(|s| s.to_string()),
                        h.event_type.to_string(),
                        h.values.iter().map(save).collect(),
                    )
                })
                .collect(),
        }
    }

    /// Rebuilds a buffer from [`ReorderBuffer::export`].
    pub(crate) fn import(state: BufferState) -> ReorderBuffer {
        let load = |v: SavedValue| {
            Some(match v {
                SavedValue::Absent => return None,
                SavedValue::Null => Value::Null,
                SavedValue::Bool(b) => Value::Bool(b),
                SavedValue::Int(i) => Value::Int(i),
                SavedValue::Float(f) => Value::Float(f),
                SavedValue::Str(s) => Value::Str(s.into()),
                SavedValue::Timestamp(t) => Value::Timestamp(t),
            })
        };
        let mut buffer = ReorderBuffer::new(state.max_delay as u64);
        buffer.next_seq = state.next_seq;
        buffer.max_seen = state.max_seen;
        buffer.watermark = state.watermark;
        buffer.stats = state.stats;
        for (time, tie, seq, tag, stream, event_type, values) in state.events {
            buffer.insert(Held {
                time,
                tie: tie.into(),
                seq,
                tag,
                stream: stream.map(Into::into),
                event_type: event_type.into(),
                values: values.into_iter().map(load).collect(),
            });
        }
        buffer.stats.held = buffer.heap.len() as u64;
        buffer
    }
}

impl Runtime {
    /// Whether this evaluation reorders its input (`RuntimeOptions::max_delay`).
    pub fn reorders(&self) -> bool {
        self.state.reorder.is_some()
    }

    /// Checks that a reordering evaluation can read a time stamp: a time field, or
    /// a `primary_time` declared for some event type. The error is the message.
    pub fn check_reorder_options(&self) -> Result<(), String> {
        if self.state.reorder.is_none()
            || self.config.reorder_slot.is_some()
            || self.config.query.primary_time.iter().any(Option::is_some)
        {
            return Ok(());
        }
        Err("max_delay orders events by their time stamps: it needs time_field= (or a schema that declares a \
             primary_time)"
            .into())
    }

    /// Counters of the reorder buffer (`None` without `max_delay`).
    pub fn reorder_stats(&self) -> Option<ReorderStats> {
        self.state.reorder.as_ref().map(|b| b.stats)
    }

    /// The reorder buffer's watermark in nanoseconds (`None` without `max_delay`
    /// or before the first event).
    pub fn reorder_watermark(&self) -> Option<i64> {
        self.state.reorder.as_ref().map(|b| b.watermark).filter(|&w| w != i64::MIN)
    }

    /// Takes what became of the pushed events since the last call, in order
    /// (positions follow the order of the [`Fate::Released`] entries).
    pub fn take_fates(&mut self) -> Vec<Fate> {
        self.state.reorder.as_mut().map_or_else(Vec::new, |b| std::mem::take(&mut b.log))
    }

    /// The tags of the events held now, in release order.
    pub fn held_tags(&self) -> Vec<u64> {
        self.state.reorder.as_ref().map_or_else(Vec::new, |b| {
            let mut held: Vec<&Held> = b.heap.iter().map(|r| &r.0).collect();
            held.sort();
            held.into_iter().map(|h| h.tag).collect()
        })
    }

    /// Pushes one event through the reorder buffer (`values` as for
    /// [`Runtime::push`]; `tag` is the caller's name for it, reported by
    /// [`Runtime::take_fates`]). The event is held until the watermark passes it;
    /// the events it releases are evaluated now, and their complex events are
    /// appended to `out`. Without `max_delay` this is [`Runtime::push`].
    ///
    /// Errors: a late event under [`LatePolicy::Error`], an event without a
    /// readable time stamp, an exceeded state budget (the event is then not
    /// held), or an event refused by the evaluation when it is released (it is
    /// dropped; the events after it stay held until the next push or flush).
    pub fn push_delayed<P: Position>(
        &mut self,
        stream: Option<&str>,
        event_type: &str,
        values: &[ValueRef<'_>],
        tag: u64,
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        self.push_delayed_tied(stream, event_type, values, tag, &[], out)
    }

    /// [`Runtime::push_delayed`] with a tie-breaker: events with equal time stamps are
    /// released in the byte order of `tie`, then in arrival order (the Spark glue
    /// passes the event's order fields and key, so that the order does not depend on
    /// how the input was split into micro-batches).
    pub fn push_delayed_tied<P: Position>(
        &mut self,
        stream: Option<&str>,
        event_type: &str,
        values: &[ValueRef<'_>],
        tag: u64,
        tie: &[u8],
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        if self.state.reorder.is_none() {
            return self.push(stream, event_type, values, out);
        }
        let arrived = self.arrive(stream, event_type, values, tag, tie);
        if arrived.is_err() {
            self.buffer().log.push(Fate::Dropped(tag));
        }
        arrived?;
        self.release(false, out)
    }

    /// Raises the reorder buffer's watermark to `w` (nanoseconds) and releases the
    /// events at or before it; with a duration window, also advances the
    /// evaluation's watermark ([`Runtime::advance_watermark`]). Without
    /// `max_delay` this is [`Runtime::advance_watermark`].
    pub fn advance_delayed<P: Position>(&mut self, w: i64, out: &mut MatchBuffer<P>) -> Result<(), EventError> {
        if self.state.reorder.is_none() {
            self.advance_watermark(w);
            return Ok(());
        }
        let buffer = self.buffer();
        buffer.watermark = buffer.watermark.max(w);
        self.release(false, out)
    }

    /// Releases every held event (the end of the input, or a caller that wants
    /// everything now); the watermark becomes the largest time stamp seen, so a
    /// later event before it is late.
    pub fn flush_delayed<P: Position>(&mut self, out: &mut MatchBuffer<P>) -> Result<(), EventError> {
        if self.state.reorder.is_none() {
            return Ok(());
        }
        let buffer = self.buffer();
        buffer.watermark = buffer.watermark.max(buffer.max_seen);
        self.release(true, out)
    }

    fn buffer(&mut self) -> &mut ReorderBuffer {
        self.state.reorder.as_mut().expect("a reordering runtime")
    }

    /// Takes an arriving event into the buffer (or drops it as late) and moves the
    /// watermark.
    fn arrive(
        &mut self,
        stream: Option<&str>,
        event_type: &str,
        values: &[ValueRef<'_>],
        tag: u64,
        tie: &[u8],
    ) -> Result<(), EventError> {
        self.check_state_budget()?;
        let position = self.state.position;
        let error = |field: String, msg: String| EventError::new(position, field, Some(event_type), msg);
        let target = self.resolve_target(stream, event_type).map_err(|(f, m)| error(f.to_string(), m))?;
        let (slot, factor) = match target {
            super::Target::Type(ty) if ty != OTHER_TYPE && self.config.query.primary_time[ty as usize].is_some() => {
                (self.config.query.primary_time[ty as usize], 1)
            }
            _ => (self.config.reorder_slot, self.config.options.time_unit_nanos),
        };
        let drop = self.config.options.late_time_stamps == LatePolicy::Drop;
        let Some(slot) = slot else {
            return Err(error(
                self.config.options.type_field.clone(),
                "max_delay needs a time stamp: give time_field=".into(),
            ));
        };
        let name = self.config.layout[slot as usize].clone();
        let time = match time_of(values, slot, factor) {
            Ok(Some(t)) => t,
            Ok(None) if drop => {
                self.drop_late(tag);
                return Ok(());
            }
            Ok(None) => {
                return Err(error(name, "missing time stamp: max_delay orders events by time stamp".into()));
            }
            Err(m) => return Err(error(name, m)),
        };
        let buffer = self.state.reorder.as_mut().expect("a reordering runtime");
        if time < buffer.watermark {
            if drop {
                self.drop_late(tag);
                return Ok(());
            }
            let (w, d) = (buffer.watermark, buffer.max_delay);
            return Err(error(
                name,
                format!(
                    "late event: time stamp {time} is before the watermark {w} (in nanoseconds; max_delay = {d} ns): \
                     it arrived after events more than max_delay later than it"
                ),
            ));
        }
        if time < buffer.max_seen {
            buffer.stats.reordered += 1;
        }
        buffer.max_seen = buffer.max_seen.max(time);
        buffer.watermark = buffer.watermark.max(buffer.max_seen.saturating_sub(buffer.max_delay));
        let seq = buffer.next_seq;
        buffer.next_seq += 1;
        buffer.insert(Held {
            time,
            tie: tie.into(),
            seq,
            tag,
            stream: stream.map(Into::into),
            event_type: event_type.into(),
            values: values.iter().map(|v| (!matches!(v, ValueRef::Absent)).then(|| v.to_owned_value())).collect(),
        });
        Ok(())
    }

    fn drop_late(&mut self, tag: u64) {
        let buffer = self.buffer();
        buffer.stats.late += 1;
        buffer.log.push(Fate::Dropped(tag));
    }

    /// Evaluates the held events at or before the watermark (all of them with
    /// `all`), in order, then advances the evaluation's watermark.
    fn release<P: Position>(&mut self, all: bool, out: &mut MatchBuffer<P>) -> Result<(), EventError> {
        while let Some(held) = self.buffer().pop_ready(all) {
            let refs: Vec<ValueRef<'_>> =
                held.values.iter().map(|v| v.as_ref().map_or(ValueRef::Absent, Value::as_ref)).collect();
            let pushed = self.push(held.stream.as_deref(), &held.event_type, &refs, out);
            let buffer = self.buffer();
            match pushed {
                Ok(()) => {
                    buffer.stats.released += 1;
                    buffer.log.push(Fate::Released(held.tag));
                }
                // Over the state budget the event was not evaluated: it stays held,
                // first in line, and the stream refuses input while the state does
                // not fit (a retry meets the same budget). A malformed event is
                // dropped (docs/language.md#s3-7a).
                Err(e) if e.kind == EventErrorKind::StateMemory => {
                    buffer.insert(held);
                    return Err(e);
                }
                Err(e) => {
                    buffer.log.push(Fate::Dropped(held.tag));
                    return Err(e);
                }
            }
        }
        let w = self.buffer().watermark;
        if w != i64::MIN && matches!(self.config.query.plan.window, WindowPlan::Duration(_)) {
            self.advance_watermark(w);
            // The deadlines this watermark passed are due now: the push (or
            // watermark, or flush) that moved it hands their matches over, after
            // those of the events it released (their deadlines come after them).
            self.take_fired(out);
        }
        Ok(())
    }
}

/// The time stamp of an event in nanoseconds: `None` when it has none.
fn time_of(values: &[ValueRef<'_>], slot: AttrSlot, factor: i64) -> Result<Option<i64>, String> {
    let out_of_range = |v: f64| {
        format!("time stamp {v} is out of range: in nanoseconds it does not fit in 64 bits (years 1677 to 2262)")
    };
    match values.get(slot as usize).copied().unwrap_or(ValueRef::Absent) {
        ValueRef::Absent | ValueRef::Null => Ok(None),
        ValueRef::Int(v) => v.checked_mul(factor).map(Some).ok_or_else(|| out_of_range(v as f64)),
        ValueRef::Float(f) if f.is_finite() => {
            super::clock::float_nanos(f, factor).map(Some).ok_or_else(|| out_of_range(f))
        }
        ValueRef::Timestamp(ns) => Ok(Some(ns)),
        other => Err(format!("time stamp must be {}", super::clock::not_a_time_stamp(other))),
    }
}

/// The slot of the time field for the reorder buffer: the window's time slot, or
/// the time field appended to `layout`.
pub(crate) fn reorder_slot(
    layout: &mut Vec<String>,
    window_slot: Option<AttrSlot>,
    options: &super::RuntimeOptions,
) -> Option<AttrSlot> {
    options.max_delay?;
    if window_slot.is_some() {
        return window_slot;
    }
    let f = options.time_field.as_ref()?;
    Some(match layout.iter().position(|a| a == f) {
        Some(i) => i as AttrSlot,
        None => {
            layout.push(f.clone());
            (layout.len() - 1) as AttrSlot
        }
    })
}

impl BufferState {
    /// The bound of the saved buffer, in nanoseconds.
    pub(crate) fn max_delay(&self) -> u64 {
        self.max_delay as u64
    }
}

/// Why the state budget is exceeded when the reorder buffer dominates it.
pub(crate) fn over_budget_message(rt: &Runtime, held: usize) -> String {
    let n = rt.reorder_stats().map_or(0, |s| s.held);
    format!(
        "the reorder buffer holds {n} events ({held} bytes) that arrived within max_delay of the newest: lower \
         max_delay, or raise max_state_bytes"
    )
}
