//! criterion: the reorder buffer (`max_delay`, docs/language.md#s3-7a) at delays of 0,
//! 1 s and 10 s, against the same sorted stream pushed without a buffer.
//!
//! The stream: 100,000 events of types A, B, C and X (uniform), one per millisecond,
//! each arriving up to the delay late (sorted by time stamp + a uniform jitter in
//! `[0, delay]`, so that the buffer holds about `delay × 1000` events); the query is
//! `SELECT * FROM S WHERE A ; B WITHIN 10 milliseconds` over `ts` (milliseconds): about ten events
//! per window, so that the output (some 60,000 matches) does not dominate.
//!
//! `cargo bench -p ceql-benches --bench reorder`

use ceql_engine::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

const EVENTS: usize = 100_000;
const TYPES: [&str; 4] = ["A", "B", "C", "X"];

/// (type, ts in ms) in arrival order: times 0, 1, 2, ... shuffled within `delay_ms`.
fn arrivals(delay_ms: u64, seed: u64) -> Vec<(&'static str, i64)> {
    // Two generators: the types do not depend on the delay.
    let (mut types, mut jitters) = (SmallRng::seed_from_u64(seed), SmallRng::seed_from_u64(seed + 1));
    let mut keyed: Vec<(f64, usize, &'static str)> = (0..EVENTS)
        .map(|i| {
            let jitter = if delay_ms == 0 { 0.0 } else { jitters.random_range(0.0..delay_ms as f64) };
            (i as f64 + jitter, i, TYPES[types.random_range(0..TYPES.len())])
        })
        .collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    keyed.into_iter().map(|(_, i, ty)| (ty, i as i64)).collect()
}

fn runtime(query: &Arc<CompiledQuery>, max_delay: Option<u64>) -> Runtime {
    let options = RuntimeOptions {
        time_field: Some("ts".into()),
        time_unit_nanos: 1_000_000,
        max_delay,
        enumerate: true,
        ..RuntimeOptions::default()
    };
    Runtime::new(query.clone(), options)
}

/// Pushes every event (through the buffer when `max_delay` is set); returns the matches.
fn run(query: &Arc<CompiledQuery>, events: &[(&str, i64)], max_delay: Option<u64>, out: &mut MatchBuffer) -> usize {
    let mut rt = runtime(query, max_delay);
    let slot = rt.attribute_names().iter().position(|a| a == "ts").expect("ts is read");
    let mut values = vec![ValueRef::Absent; rt.attribute_names().len()];
    let mut n = 0;
    for (tag, &(ty, ts)) in events.iter().enumerate() {
        values[slot] = ValueRef::Int(ts);
        out.clear();
        if max_delay.is_some() {
            rt.push_delayed(None, ty, &values, tag as u64, out).expect("valid event");
            rt.take_fates();
        } else {
            rt.push(None, ty, &values, out).expect("valid event");
        }
        n += out.len();
    }
    out.clear();
    rt.flush_delayed(out).expect("valid events");
    n + out.len()
}

fn reorder(c: &mut Criterion) {
    let text = "SELECT * FROM S WHERE A ; B WITHIN 10 milliseconds";
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles"));
    let sorted = arrivals(0, 11);
    let mut out = MatchBuffer::new();
    let expected = run(&query, &sorted, None, &mut out);
    let mut g = c.benchmark_group("reorder");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS as u64));
    g.bench_function("no buffer (sorted)", |b| b.iter(|| run(&query, &sorted, None, &mut out)));
    for (name, delay_ms) in [("max_delay 0", 0u64), ("max_delay 1 s", 1_000), ("max_delay 10 s", 10_000)] {
        let events = if delay_ms == 0 { sorted.clone() } else { arrivals(delay_ms, 11) };
        let delay_ns = Some(delay_ms * 1_000_000);
        // The same events, so the same number of complex events as the sorted stream.
        assert_eq!(run(&query, &events, delay_ns, &mut out), expected, "{name}");
        g.bench_function(name, |b| b.iter(|| run(&query, &events, delay_ns, &mut out)));
    }
    g.finish();
}

criterion_group!(benches, reorder);
criterion_main!(benches);
