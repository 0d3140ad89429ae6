//! The deadline queue of a trailing absence (docs/language.md#s3-3b): firing on time,
//! cancelling per partition, the watermark, closing, and snapshots.

use crate::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
use std::sync::Arc;

const QUERY: &str = "SELECT * FROM S WHERE ORDER ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id] WITHIN 1 minute";

fn runtime() -> Runtime {
    let q = CompiledQuery::compile(QUERY, None, CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let options = RuntimeOptions { time_field: Some("t".into()), time_unit_nanos: 1_000_000_000, ..Default::default() };
    Runtime::new(Arc::new(q), options)
}

/// Pushes `(type, id, t in seconds)` and returns the ends of the complex events emitted.
fn push(rt: &mut Runtime, events: &[(&str, i64, i64)]) -> Vec<u64> {
    let names = rt.attribute_names().to_vec();
    let mut out = MatchBuffer::new();
    for &(ty, id, t) in events {
        let values: Vec<ValueRef> = names
            .iter()
            .map(|n| match n.as_str() {
                "id" => ValueRef::Int(id),
                "t" => ValueRef::Int(t),
                _ => ValueRef::Absent,
            })
            .collect();
        rt.push(Some("S"), ty, &values, &mut out).unwrap();
    }
    out.iter().map(|m| m.end).collect()
}

#[test]
fn a_match_fires_after_its_deadline_unless_its_partition_cancels_it() {
    let mut rt = runtime();
    // order 1 at 0 s, order 2 at 1 s, pay 2 at 10 s (before order 2's deadline, 11 s: cancels)
    assert!(push(&mut rt, &[("ORDER", 1, 0), ("ORDER", 2, 1), ("PAY", 2, 10)]).is_empty());
    // the cancelled one no longer waits
    assert_eq!(rt.waiting_deadlines(), 1);
    // 10 s is not after order 1's deadline; 11 s is; order 2 was cancelled
    assert!(push(&mut rt, &[("PING", 3, 10)]).is_empty());
    assert_eq!(push(&mut rt, &[("PING", 3, 11), ("PING", 3, 30)]), vec![0]);
    assert_eq!(rt.waiting_deadlines(), 0);
}

#[test]
fn the_watermark_and_closing_fire_the_rest_once() {
    let mut rt = runtime();
    push(&mut rt, &[("ORDER", 1, 0), ("ORDER", 2, 5)]);
    assert_eq!(rt.next_deadline(), Some(10_000_000_001));
    rt.advance_watermark(10_000_000_001);
    let mut out = MatchBuffer::new();
    rt.take_fired(&mut out);
    assert_eq!(out.iter().map(|m| m.end).collect::<Vec<_>>(), vec![0]);
    // restored from a snapshot, the other one is still waiting
    let mut restored = Runtime::restore(rt.query().clone(), &rt.snapshot()).unwrap();
    assert_eq!(restored.waiting_deadlines(), 1);
    restored.close_deadlines();
    let mut out = MatchBuffer::new();
    restored.take_fired(&mut out);
    assert_eq!(out.iter().map(|m| m.end).collect::<Vec<_>>(), vec![1]);
    restored.close_deadlines();
    let mut out = MatchBuffer::new();
    restored.take_fired(&mut out);
    assert!(out.is_empty());
}

#[test]
fn waiting_matches_keep_the_horizon_back() {
    let mut rt = runtime();
    push(&mut rt, &[("ORDER", 1, 0)]);
    // the window (1 minute) has passed, the match still waits: its event must stay
    push(&mut rt, &[("PAY", 2, 9), ("X", 2, 9)]);
    assert_eq!(rt.horizon(), 0);
}

#[test]
fn a_cancelled_match_neither_waits_nor_keeps_the_horizon_back() {
    let mut rt = runtime();
    push(&mut rt, &[("ORDER", 1, 0), ("PAY", 1, 1)]);
    assert_eq!((rt.waiting_deadlines(), rt.next_deadline()), (0, None));
    assert!(rt.is_idle());
    // the window (1 minute) has passed: nothing holds position 0 any more
    push(&mut rt, &[("PING", 2, 70), ("PING", 2, 71)]);
    assert_eq!(rt.horizon(), rt.window_horizon());
    assert!(rt.horizon() > 0);
    // a key cancelled behind a live one: the count follows, and a snapshot keeps it
    push(&mut rt, &[("ORDER", 3, 72), ("ORDER", 4, 73), ("PAY", 4, 74)]);
    assert_eq!(rt.waiting_deadlines(), 1);
    let restored = Runtime::restore(rt.query().clone(), &rt.snapshot()).unwrap();
    assert_eq!(restored.waiting_deadlines(), 1);
}

#[test]
fn waiting_measures_survive_a_snapshot_and_a_format_9_snapshot_still_restores() {
    let text = "SELECT *, count(o) AS n FROM S WHERE ORDER AS o ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id] \
                WITHIN 1 minute";
    let q = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).unwrap_or_else(|e| panic!("{e}")));
    let options = RuntimeOptions { time_field: Some("t".into()), time_unit_nanos: 1_000_000_000, ..Default::default() };
    let mut rt = Runtime::new(q.clone(), options.clone());
    push(&mut rt, &[("ORDER", 1, 0), ("ORDER", 2, 1)]);
    assert_eq!(rt.waiting_deadlines(), 2);
    let snap = rt.snapshot();
    let mut back = Runtime::restore(q.clone(), &snap).unwrap_or_else(|e| panic!("{e}"));
    let mut out = MatchBuffer::new();
    back.close_deadlines();
    back.take_fired(&mut out);
    let counts: Vec<_> = out.iter().map(|m| m.measures.to_vec()).collect();
    assert_eq!(counts, vec![vec![crate::value::Value::Int(1)]; 2]);
    // A measure count that does not match the waiting complex events is damage.
    let mut cut = snap.clone();
    let last = cut.len() - 1;
    cut.truncate(last);
    assert!(Runtime::restore(q, &cut).is_err());

    // Format 9 is format 10 without the waiting measures: a query without measures
    // restores from it (its measure list is the one byte of an empty postcard vector).
    let mut plain = runtime();
    push(&mut plain, &[("ORDER", 1, 0)]);
    let mut v9 = plain.snapshot();
    assert_eq!(v9.pop(), Some(0), "an empty measure list");
    v9[8..12].copy_from_slice(&9u32.to_le_bytes());
    let mut restored = Runtime::restore(plain.query().clone(), &v9).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(restored.waiting_deadlines(), 1);
    assert_eq!(push(&mut restored, &[("PING", 3, 11)]), vec![0]);
    v9[8..12].copy_from_slice(&8u32.to_le_bytes());
    assert!(Runtime::restore(plain.query().clone(), &v9).is_err(), "older formats are refused");
}
