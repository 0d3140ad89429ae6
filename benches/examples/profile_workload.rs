//! Runs one synthetic workload of `workloads.rs` for profiling:
//! `cargo run --release -p ceql-benches --example profile_workload -- NAME [update|full]`.

use ceql_benches::workloads::{iteration_and_disjunction, no_output, sequences};
use ceql_benches::Driver;
use ceql_engine::MatchBuffer;
use std::time::Instant;

fn main() {
    let name = std::env::args().nth(1).expect("workload name");
    let mode = std::env::args().nth(2).unwrap_or_else(|| "update".into());
    let n: usize = std::env::var("EVENTS").map_or(1_000_000, |v| v.parse().expect("EVENTS"));
    let w = sequences()
        .into_iter()
        .chain(no_output())
        .chain(iteration_and_disjunction())
        .find(|w| w.name == name)
        .expect("known workload");
    let driver = Driver::new(&w.query, &w.stream.types);
    let mut out = MatchBuffer::new();
    let t = Instant::now();
    let found = driver.run_prefix(&w.stream, n, mode == "full", &mut out);
    let dt = t.elapsed().as_secs_f64();
    println!("{name} {mode}: {:.1}M events/s, {found} matches", n.min(w.stream.events.len()) as f64 / dt / 1e6);
}
