//! criterion: absence (docs/language.md#s3-3a, #s3-3b).
//!
//! * **Between two events**: `A1 ; ABSENT(A2) ; A3` against `A1 ; A3`, W = 100 events, on the
//!   same 1M-event uniform stream of `A1, A2, A3` and six noise types. The absence only puts
//!   a guard on the skip loop of the `;`, so both keep constant time per event.
//! * **Trailing, with deadlines**: `ORDER ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id]
//!   WITHIN 1 minute` on 1M events of 10,000 keys (one event per millisecond, 1,000 s; types
//!   ORDER 40%, PAY 20%, X 40%; keys uniform), against the same query without the trailing
//!   absence (`ORDER PARTITION BY [id] WITHIN 1 minute`, every order a match at once). The
//!   difference is the deadline queue: deferring each match, cancelling on a PAY of its key,
//!   firing it once an event passes its deadline.
//!
//! `cargo bench -p ceql-benches --bench absence`

use ceql_benches::{Driver, Workload};
use ceql_engine::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

const EVENTS: usize = 1_000_000;
const KEYS: i64 = 10_000;

fn between(c: &mut Criterion) {
    let types: Vec<String> =
        ["A1", "A2", "A3"].iter().map(|s| s.to_string()).chain((1..=6).map(|i| format!("B{i}"))).collect();
    let names: Vec<&str> = types.iter().map(String::as_str).collect();
    let stream = Workload::uniform(&names, EVENTS, 3);
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group("absence");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS as u64));
    for (name, query) in [
        ("seq2_w100", "SELECT * FROM S WHERE A1 ; A3 WITHIN 100 EVENTS"),
        ("absent_between_w100", "SELECT * FROM S WHERE A1 ; ABSENT(A2) ; A3 WITHIN 100 EVENTS"),
    ] {
        let driver = Driver::new(query, &stream.types);
        g.bench_function(format!("{name}/update"), |b| b.iter(|| driver.run(&stream, false, &mut out)));
        g.bench_function(format!("{name}/full"), |b| b.iter(|| driver.run(&stream, true, &mut out)));
    }
    g.finish();
}

/// (type, key, ts in ms): one event per millisecond, keys uniform over `KEYS`.
pub fn keyed_stream(seed: u64) -> Vec<(&'static str, i64, i64)> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..EVENTS as i64)
        .map(|t| {
            let ty = match rng.random_range(0..5) {
                0 | 1 => "ORDER",
                2 => "PAY",
                _ => "X",
            };
            (ty, rng.random_range(0..KEYS), t)
        })
        .collect()
}

/// Pushes every event (and closes the deadlines at the end); returns the matches.
fn run(query: &Arc<CompiledQuery>, events: &[(&str, i64, i64)], out: &mut MatchBuffer) -> usize {
    let options = RuntimeOptions { time_field: Some("ts".into()), time_unit_nanos: 1_000_000, ..Default::default() };
    let mut rt = Runtime::new(query.clone(), options);
    let names = rt.attribute_names().to_vec();
    let (id, ts) = (names.iter().position(|a| a == "id"), names.iter().position(|a| a == "ts"));
    let mut values = vec![ValueRef::Absent; names.len()];
    let mut n = 0;
    for &(ty, key, t) in events {
        if let Some(i) = id {
            values[i] = ValueRef::Int(key);
        }
        if let Some(i) = ts {
            values[i] = ValueRef::Int(t);
        }
        out.clear();
        rt.push(None, ty, &values, out).expect("valid event");
        n += out.len();
    }
    out.clear();
    rt.close_deadlines();
    rt.take_fired(out);
    n + out.len()
}

fn trailing(c: &mut Criterion) {
    let events = keyed_stream(5);
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group("deadlines");
    g.sample_size(10);
    g.throughput(Throughput::Elements(EVENTS as u64));
    for (name, text) in [
        ("order_10k_keys", "SELECT * FROM S WHERE ORDER PARTITION BY [id] WITHIN 1 minute"),
        (
            "order_no_pay_10s_10k_keys",
            "SELECT * FROM S WHERE ORDER ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id] WITHIN 1 minute",
        ),
    ] {
        let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles"));
        g.bench_function(name, |b| b.iter(|| run(&query, &events, &mut out)));
    }
    g.finish();
}

criterion_group!(benches, between, trailing);
criterion_main!(benches);
