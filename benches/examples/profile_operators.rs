//! Runs one query of the language wave's operators for callgrind, so that a change to the
//! push can be checked against them as `profile_workload` checks the unary workloads:
//! `EVENTS=200000 valgrind --tool=callgrind --toggle-collect='*profile_operators::run*'
//! target/release/examples/profile_operators NAME` (docs/performance.md). Deterministic: every
//! event carries its time stamp, nothing reads the wall clock.
//!
//! The stream is the keyed one of the `absence` criterion bench: one event per millisecond,
//! `ORDER` 40%, `PAY` 20%, `X` 40%, keys `id` uniform over 10,000, and a value `v` in 0..1000.
//! NAME is one of:
//!
//! * `time_window`: `ORDER ; PAY PARTITION BY [id] WITHIN 1 minute` (a duration window);
//! * `deadline`: `ORDER ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id] WITHIN 1 minute`;
//! * `absent_between`: `ORDER ; ABSENT(PAY) ; X WITHIN 100 EVENTS`;
//! * `absent_reads_match`: `ORDER AS o ; ABSENT(PAY FILTER PAY[v < o.v]) ; X AS x WITHIN 20 EVENTS`
//!   (every accepted event is stored);
//! * `residual`: `ORDER AS o ; PAY AS p FILTER p[v < o.v] WITHIN 20 EVENTS`;
//! * `routed`: `ORDER AS o ; PAY AS p FILTER p[id = o.id] WITHIN 1000 EVENTS` (routed by `id`).

use ceql_engine::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

const QUERIES: &[(&str, &str)] = &[
    ("time_window", "SELECT * FROM S WHERE ORDER ; PAY PARTITION BY [id] WITHIN 1 minute"),
    ("deadline", "SELECT * FROM S WHERE ORDER ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id] WITHIN 1 minute"),
    ("absent_between", "SELECT * FROM S WHERE ORDER ; ABSENT(PAY) ; X WITHIN 100 EVENTS"),
    (
        "absent_reads_match",
        "SELECT * FROM S WHERE ORDER AS o ; ABSENT(PAY FILTER PAY[v < o.v]) ; X AS x WITHIN 20 EVENTS",
    ),
    ("residual", "SELECT * FROM S WHERE ORDER AS o ; PAY AS p FILTER p[v < o.v] WITHIN 20 EVENTS"),
    ("routed", "SELECT * FROM S WHERE ORDER AS o ; PAY AS p FILTER p[id = o.id] WITHIN 1000 EVENTS"),
];

fn main() {
    let name = std::env::args().nth(1).expect("query name");
    let n: usize = std::env::var("EVENTS").map_or(200_000, |v| v.parse().expect("EVENTS"));
    let (_, text) = QUERIES.iter().find(|(q, _)| *q == name).expect("known query");
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles"));
    let events = stream(n, 5);
    let mut out = MatchBuffer::new();
    let found = run(&query, &events, &mut out);
    println!("{name}: {n} events, {found} matches");
}

/// (type, key, value, time stamp in ms): one event per millisecond.
fn stream(n: usize, seed: u64) -> Vec<(&'static str, i64, i64, i64)> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n as i64)
        .map(|t| {
            let ty = match rng.random_range(0..5) {
                0 | 1 => "ORDER",
                2 => "PAY",
                _ => "X",
            };
            (ty, rng.random_range(0..10_000), rng.random_range(0..1_000), t)
        })
        .collect()
}

/// Pushes every event, clearing the output after each, and closes the deadlines at the
/// end; returns the number of matches. Never inlined: callgrind collects from here.
#[inline(never)]
fn run(query: &Arc<CompiledQuery>, events: &[(&str, i64, i64, i64)], out: &mut MatchBuffer) -> usize {
    let options = RuntimeOptions { time_field: Some("ts".into()), time_unit_nanos: 1_000_000, ..Default::default() };
    let mut rt = Runtime::new(query.clone(), options);
    let names = rt.attribute_names().to_vec();
    let slot = |a: &str| names.iter().position(|n| n == a);
    let (id, v, ts) = (slot("id"), slot("v"), slot("ts"));
    let mut values = vec![ValueRef::Absent; names.len()];
    let mut found = 0;
    for &(ty, key, value, t) in events {
        for (s, x) in [(id, key), (v, value), (ts, t)] {
            if let Some(i) = s {
                values[i] = ValueRef::Int(x);
            }
        }
        rt.push(None, ty, &values, out).expect("valid event");
        found += out.len();
        out.clear();
    }
    rt.close_deadlines();
    rt.take_fired(out);
    found + out.len()
}
