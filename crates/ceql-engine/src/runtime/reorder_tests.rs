//! The reorder buffer (`max_delay`): release order, ties, late events, flush,
//! watermarks, snapshots and the state budget. Expected outputs come from the
//! same query over the sorted stream, evaluated without a buffer.

use crate::error::EventErrorKind;
use crate::output::MatchBuffer;
use crate::runtime::{Fate, LatePolicy, Runtime, RuntimeOptions};
use crate::value::ValueRef;
use crate::{CompileOptions, CompiledQuery};
use std::sync::Arc;

const SECOND: u64 = 1_000_000_000;

fn runtime(text: &str, max_delay: Option<u64>, late: LatePolicy) -> Runtime {
    let query = CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles");
    let options = RuntimeOptions {
        time_field: Some("ts".into()),
        time_unit_nanos: SECOND as i64,
        late_time_stamps: late,
        max_delay,
        ..RuntimeOptions::default()
    };
    Runtime::new(Arc::new(query), options)
}

/// Pushes `(type, ts)` events with tags 0, 1, ... (`ts` when the runtime reads it).
fn push_all(rt: &mut Runtime, events: &[(&str, i64)], out: &mut MatchBuffer) {
    let slot = rt.attribute_names().iter().position(|a| a == "ts");
    for (tag, &(ty, ts)) in events.iter().enumerate() {
        let mut values = vec![ValueRef::Absent; rt.attribute_names().len()];
        if let Some(s) = slot {
            values[s] = ValueRef::Int(ts);
        }
        rt.push_delayed(None, ty, &values, tag as u64, out).expect("valid event");
    }
}

fn matches(out: &MatchBuffer) -> Vec<(u64, u64, Vec<u64>)> {
    out.iter().map(|m| (m.start, m.end, m.positions.to_vec())).collect()
}

/// The matches of `events` sorted stably by time, without a buffer.
fn sorted_output(text: &str, events: &[(&str, i64)]) -> Vec<(u64, u64, Vec<u64>)> {
    let mut sorted = events.to_vec();
    sorted.sort_by_key(|&(_, ts)| ts);
    let mut rt = runtime(text, None, LatePolicy::Error);
    let mut out = MatchBuffer::new();
    push_all(&mut rt, &sorted, &mut out);
    matches(&out)
}

const QUERY: &str = "SELECT * FROM S WHERE A ; B ; C WITHIN 10 seconds";
const SHUFFLED: &[(&str, i64)] = &[("B", 2), ("A", 1), ("C", 4), ("B", 3), ("A", 3), ("C", 6), ("B", 5), ("C", 7)];

#[test]
fn a_stream_shuffled_within_the_delay_gives_the_sorted_streams_output() {
    let mut rt = runtime(QUERY, Some(2 * SECOND), LatePolicy::Error);
    let mut out = MatchBuffer::new();
    push_all(&mut rt, SHUFFLED, &mut out);
    rt.flush_delayed(&mut out).unwrap();
    let expected = sorted_output(QUERY, SHUFFLED);
    assert!(!expected.is_empty());
    assert_eq!(matches(&out), expected);
    let stats = rt.reorder_stats().unwrap();
    assert_eq!((stats.held, stats.released, stats.late), (0, 8, 0));
    assert_eq!(stats.reordered, 4); // A@1 after B@2, B@3 and A@3 after C@4, B@5 after C@6
}

#[test]
fn events_are_held_until_the_watermark_passes_them_and_ties_keep_arrival_order() {
    let mut rt = runtime(QUERY, Some(2 * SECOND), LatePolicy::Error);
    let mut out = MatchBuffer::new();
    push_all(&mut rt, &[("B", 5), ("A", 5), ("C", 6)], &mut out);
    assert!(rt.take_fates().is_empty(), "watermark 4 releases nothing");
    push_all(&mut rt, &[("X", 7)], &mut out); // watermark 5: both events at 5, in arrival order
    assert_eq!(rt.take_fates(), [Fate::Released(0), Fate::Released(1)]);
    assert_eq!(rt.held_tags(), [2, 0]); // tags restart at 0 per push_all call: C@6 (tag 2), X@7 (tag 0)
    rt.flush_delayed(&mut out).unwrap();
    assert_eq!(rt.take_fates(), [Fate::Released(2), Fate::Released(0)]);
}

#[test]
fn a_late_event_is_dropped_and_counted_or_refused_naming_the_time_field() {
    let events = [("A", 10), ("B", 7)]; // watermark 8 after A@10
    let mut dropping = runtime(QUERY, Some(2 * SECOND), LatePolicy::Drop);
    let mut out = MatchBuffer::new();
    push_all(&mut dropping, &events, &mut out);
    assert_eq!(dropping.reorder_stats().unwrap().late, 1);
    assert_eq!(dropping.take_fates(), [Fate::Dropped(1)]);
    let mut strict = runtime(QUERY, Some(2 * SECOND), LatePolicy::Error);
    push_all(&mut strict, &events[..1], &mut out);
    let slot = strict.attribute_names().iter().position(|a| a == "ts").unwrap();
    let mut values = vec![ValueRef::Absent; strict.attribute_names().len()];
    values[slot] = ValueRef::Int(7);
    let err = strict.push_delayed(None, "B", &values, 1, &mut out).unwrap_err();
    assert_eq!(err.field, "ts");
    assert!(err.message.contains("late event"), "{}", err.message);
    // At the watermark exactly is not late.
    values[slot] = ValueRef::Int(8);
    strict.push_delayed(None, "B", &values, 2, &mut out).unwrap();
}

#[test]
fn the_callers_watermark_releases_and_makes_later_events_late() {
    let mut rt = runtime(QUERY, Some(100 * SECOND), LatePolicy::Drop);
    let mut out = MatchBuffer::new();
    push_all(&mut rt, &[("A", 1), ("B", 2), ("C", 3)], &mut out);
    assert!(out.is_empty());
    rt.advance_delayed(3 * SECOND as i64, &mut out).unwrap();
    assert_eq!(matches(&out), [(0, 2, vec![0, 1, 2])]);
    push_all(&mut rt, &[("A", 2)], &mut out);
    assert_eq!(rt.reorder_stats().unwrap().late, 1);
}

#[test]
fn a_snapshot_keeps_the_held_events() {
    let mut whole = runtime(QUERY, Some(3 * SECOND), LatePolicy::Error);
    let mut expected = MatchBuffer::new();
    push_all(&mut whole, SHUFFLED, &mut expected);
    whole.flush_delayed(&mut expected).unwrap();

    let mut first = runtime(QUERY, Some(3 * SECOND), LatePolicy::Error);
    let mut out = MatchBuffer::new();
    push_all(&mut first, &SHUFFLED[..5], &mut out);
    assert!(first.reorder_stats().unwrap().held > 0);
    let query = first.query().clone();
    let mut second = Runtime::restore(query, &first.snapshot()).expect("restores");
    assert_eq!(second.held_tags(), first.held_tags());
    push_all(&mut second, &SHUFFLED[5..], &mut out);
    second.flush_delayed(&mut out).unwrap();
    assert_eq!(matches(&out), matches(&expected));
}

#[test]
fn positions_count_within_events_windows_in_the_sorted_order() {
    let text = "SELECT * FROM S WHERE A ; C WITHIN 2 EVENTS";
    let events = [("C", 3), ("A", 1), ("B", 2)];
    let mut rt = runtime(text, Some(5 * SECOND), LatePolicy::Error);
    let mut out = MatchBuffer::new();
    push_all(&mut rt, &events, &mut out);
    rt.flush_delayed(&mut out).unwrap();
    assert_eq!(matches(&out), [(0, 2, vec![0, 2])]);
    assert_eq!(matches(&out), sorted_output(text, &events));
}

#[test]
fn a_huge_delay_exceeds_the_state_budget_with_a_memory_error() {
    let query = CompiledQuery::compile(QUERY, None, CompileOptions::default()).unwrap();
    let options = RuntimeOptions {
        time_field: Some("ts".into()),
        max_delay: Some(u64::MAX),
        max_state_bytes: Some(1 << 20),
        ..RuntimeOptions::default()
    };
    let mut rt = Runtime::new(Arc::new(query), options);
    let mut out = MatchBuffer::new();
    let long = "x".repeat(1000);
    let err = (0..10_000)
        .find_map(|i| {
            let values = [ValueRef::Int(i), ValueRef::Str(&long)];
            rt.push_delayed(None, "A", &values[..rt.attribute_names().len()], i as u64, &mut out).err()
        })
        .expect("the budget is exceeded");
    assert_eq!(err.kind, EventErrorKind::StateMemory);
    assert!(err.message.contains("reorder buffer"), "{}", err.message);
}

#[test]
fn without_a_time_field_the_options_are_refused() {
    let query = CompiledQuery::compile(QUERY, None, CompileOptions::default()).unwrap();
    let rt = Runtime::new(Arc::new(query), RuntimeOptions { max_delay: Some(0), ..RuntimeOptions::default() });
    assert!(rt.check_reorder_options().unwrap_err().contains("time_field"));
}

/// A batch of `(type, ts)` rows.
fn batch(rows: &[(&str, i64)]) -> arrow_array::RecordBatch {
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    let types: ArrayRef = Arc::new(StringArray::from(rows.iter().map(|r| r.0).collect::<Vec<_>>()));
    let ts: ArrayRef = Arc::new(Int64Array::from(rows.iter().map(|r| r.1).collect::<Vec<_>>()));
    arrow_array::RecordBatch::try_from_iter([("type", types), ("ts", ts)]).unwrap()
}

#[test]
fn a_tie_breaker_orders_equal_time_stamps_before_arrival() {
    let text = "SELECT * FROM S WHERE A ; B";
    let rows = batch(&[("B", 5), ("A", 5)]);
    let mut tied = runtime(text, Some(SECOND), LatePolicy::Error);
    let mut out = MatchBuffer::new();
    tied.push_batch_delayed(&rows, 10, &[vec![2], vec![1]], &mut out).unwrap();
    tied.flush_delayed(&mut out).unwrap();
    assert_eq!(tied.take_fates(), [Fate::Released(11), Fate::Released(10)]);
    assert_eq!(matches(&out), [(0, 1, vec![0, 1])]);
    // Without ties: arrival order, B before A, no match.
    let mut plain = runtime(text, Some(SECOND), LatePolicy::Error);
    let mut out = MatchBuffer::new();
    plain.push_batch_delayed(&rows, 0, &[], &mut out).unwrap();
    plain.flush_delayed(&mut out).unwrap();
    assert!(out.is_empty());
    assert_eq!(plain.take_fates(), [Fate::Released(0), Fate::Released(1)]);
}

#[test]
fn held_events_keep_the_runtime_from_being_idle() {
    let mut rt = runtime(QUERY, Some(10 * SECOND), LatePolicy::Error);
    let mut out = MatchBuffer::new();
    assert!(rt.is_idle());
    push_all(&mut rt, &[("X", 1)], &mut out);
    assert!(!rt.is_idle());
    rt.flush_delayed(&mut out).unwrap();
    assert!(rt.is_idle());
}
