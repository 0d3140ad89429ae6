//! Runs one synthetic workload of `workloads.rs` for profiling:
//! `cargo run --release -p ceql-benches --example profile_workload -- NAME [update|full|keep]`
//! (keep: full, with every complex event kept in one buffer, as `Query.run_arrow` does),
//! with `EVENTS=n` for a prefix, `STRATEGY=NEXT|LAST|MAX|STRICT` for another
//! selection strategy and `CAPTURES=1` for captures on.

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
    // STRATEGY=MAX (for example) runs the workload's query under that strategy.
    let query = match std::env::var("STRATEGY") {
        Ok(s) => w.query.replacen("SELECT", &format!("SELECT {s}"), 1),
        Err(_) => w.query.clone(),
    };
    let driver = Driver::new(&query, &w.stream.types).with_captures(std::env::var("CAPTURES").is_ok_and(|v| v == "1"));
    let mut out = MatchBuffer::new();
    let (user0, sys0) = cpu_times();
    let t = Instant::now();
    // keep: every complex event stays in one buffer, as `Query.run_arrow` does.
    let found = if mode == "keep" {
        driver.run_keeping(&w.stream, n, &mut out)
    } else {
        driver.run_prefix(&w.stream, n, mode == "full", &mut out)
    };
    let dt = t.elapsed().as_secs_f64();
    let (user1, sys1) = cpu_times();
    println!(
        "{name} {mode}: {:.2}M events/s, {found} matches (user {:.1} ms, sys {:.1} ms)",
        n.min(w.stream.events.len()) as f64 / dt / 1e6,
        (user1 - user0) * 1e3,
        (sys1 - sys0) * 1e3
    );
}

/// (user, system) CPU seconds of this process so far: the system part is mostly
/// the kernel supplying fresh pages.
fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}
