//! Runs one workload for profiling: `cargo run --release -p ceql-benches --example
//! profile_seq3 -- [no_output|update|full] [window]` (under perf or callgrind).

use ceql_benches::{sequence_query, Driver, Workload};
use ceql_engine::MatchBuffer;
use std::time::Instant;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "no_output".into());
    let window: u64 = std::env::args().nth(2).map_or(100, |w| w.parse().expect("window"));
    let n: usize = std::env::var("EVENTS").map_or(1_000_000, |v| v.parse().expect("EVENTS"));
    let types = Workload::sequence_types(3);
    let pool: Vec<&str> = types.iter().map(String::as_str).filter(|t| mode != "no_output" || *t != "A3").collect();
    let w = Workload::uniform(&pool, n, 2);
    let w = Workload { types: pool.iter().map(|t| t.to_string()).collect(), events: w.events };
    let driver = Driver::new(&sequence_query(3, window), &w.types);
    let mut out = MatchBuffer::new();
    let t = Instant::now();
    let found = driver.run(&w, mode != "update", &mut out);
    let dt = t.elapsed().as_secs_f64();
    println!("{mode} W={window}: {n} events in {dt:.3}s = {:.1}M events/s, {found} outputs", n as f64 / dt / 1e6);
}
