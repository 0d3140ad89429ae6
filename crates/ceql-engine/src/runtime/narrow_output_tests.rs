//! Outputs with 32-bit positions (`MatchBuffer<u32>`): the same complex events as
//! with `u64`, and an error, not a truncated position, past 2^32 - 1.

use crate::output::MatchBuffer;
use crate::runtime::{Runtime, RuntimeOptions};
use crate::{CompileOptions, CompiledQuery};
use std::sync::Arc;

fn runtime(text: &str) -> Runtime {
    let query = CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles");
    Runtime::new(Arc::new(query), RuntimeOptions::default())
}

fn push_all<P: crate::Position>(rt: &mut Runtime, types: &str, out: &mut MatchBuffer<P>) {
    for ty in types.split_whitespace() {
        rt.push(None, ty, &[], out).expect("valid event");
    }
}

#[test]
fn u32_positions_give_the_complex_events_of_u64_positions() {
    let text = "SELECT * FROM S WHERE A ; B+ ; C WITHIN 6 EVENTS";
    let stream = "A B X B C A C B B C C";
    let (mut wide, mut narrow) = (MatchBuffer::new(), MatchBuffer::<u32>::empty());
    push_all(&mut runtime(text), stream, &mut wide);
    push_all(&mut runtime(text), stream, &mut narrow);
    assert!(!wide.is_empty());
    let widened: Vec<(u64, u64, Vec<u64>)> = narrow
        .iter()
        .map(|m| (m.start as u64, m.end as u64, m.positions.iter().map(|&p| p as u64).collect()))
        .collect();
    let expected: Vec<(u64, u64, Vec<u64>)> = wide.iter().map(|m| (m.start, m.end, m.positions.to_vec())).collect();
    assert_eq!(widened, expected);
    let batch = narrow.into_record_batch(0);
    let types: Vec<String> = batch.schema().fields().iter().map(|f| f.data_type().to_string()).collect();
    assert_eq!(types[..3], ["UInt64", "UInt32", "UInt32"]);
    assert!(types[3].starts_with("LargeList") && types[3].contains("UInt32"), "{}", types[3]);
}

#[test]
fn an_event_beyond_u32_positions_is_an_error_and_not_a_truncated_position() {
    let text = "SELECT * FROM S WHERE A ; B";
    let mut rt = runtime(text);
    rt.state.position = u32::MAX as u64; // the last position a u32 output can name
    let mut narrow = MatchBuffer::<u32>::empty();
    push_all(&mut rt, "A", &mut narrow);
    let err = rt.push(None, "B", &[], &mut narrow).expect_err("position 2^32 does not fit");
    assert_eq!((err.position, err.field.as_str()), (1 << 32, "output"));
    assert!(err.message.contains("uint64"), "{}", err.message);
    assert!(narrow.is_empty() && rt.next_position() == 1 << 32, "the event was not taken");
    // The same evaluation with u64 positions goes on.
    let mut wide = MatchBuffer::new();
    rt.push(None, "B", &[], &mut wide).expect("u64 positions have room");
    assert_eq!(wide.get(0).positions, &[u32::MAX as u64, 1 << 32]);
}
