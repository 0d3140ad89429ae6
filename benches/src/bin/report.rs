//! Prints the performance table of `docs/performance.md`: for every workload,
//! update and full throughput (best of 3 runs), matches, det-states, tECS bytes
//! per event held in the window, and peak RSS. Each workload runs in a child
//! process so that its peak RSS is its own.
//!
//! `cargo run --release -p ceql-benches --bin report [-- FILTER]`

use ceql_benches::workloads::{stock_queries, synthetic, synthetic_names};
use ceql_benches::{load_stock, stock_path, Driver};
use ceql_engine::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn best_of<F: FnMut() -> u64>(runs: usize, mut f: F) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut out = 0;
    for _ in 0..runs {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out)
}

/// Runs one workload and prints its table row. Full mode enumerates every complex
/// event into a counting buffer, so that peak RSS reflects the evaluation state
/// and not one event's output.
fn one(name: &str) {
    let mut out = MatchBuffer::counting();
    if let Some(w) = synthetic(name) {
        let driver = Driver::new(&w.query, &w.stream.types);
        let n = w.stream.events.len();
        let (t_update, _) = best_of(5, || driver.run(&w.stream, false, &mut out));
        let mut positions = 0;
        let (t_full, matches) = best_of(5, || {
            let (m, p) = driver.run_counting_positions(&w.stream, w.full_events, &mut out);
            positions = p;
            m
        });
        // Memory held per event: tECS nodes allocated per event, as bytes.
        let q = Arc::new(CompiledQuery::compile(&w.query, None, CompileOptions::default()).unwrap());
        let mut rt = Runtime::new(q, RuntimeOptions { enumerate: false, ..RuntimeOptions::default() });
        for (i, &e) in w.stream.events.iter().enumerate().take(200_000) {
            let _ = i;
            let target = rt.resolve_target(None, &w.stream.types[e as usize]).unwrap();
            rt.push_target(target, &[] as &[ceql_engine::ValueRef<'_>], &mut out).unwrap();
            out.clear();
        }
        let st = rt.statistics();
        let bytes_per_event = rt.arena_allocated() as f64 * 32.0 / 200_000.0;
        println!(
            "| {name} | {:.1} | {:.1}{} | {:.0} | {matches} | {} | {:.0} | {:.0} |",
            n as f64 / t_update / 1e6,
            w.full_events as f64 / t_full / 1e6,
            if w.full_events < n { format!(" ({}k events)", w.full_events / 1000) } else { String::new() },
            positions as f64 / t_full / 1e6,
            st.det_states,
            bytes_per_event,
            peak_rss_mib()
        );
        return;
    }
    let Some(path) = stock_path() else {
        println!("| {name} | skipped: stock_data.csv not found | | | | | | |");
        return;
    };
    let batches = load_stock(&path).unwrap();
    let (_, query) = stock_queries().into_iter().find(|(q, _)| *q == name).expect("known workload");
    let events: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let (t_update, _) = best_of(5, || ceql_benches::run_batches(&query, &batches, false, &mut out).1);
    let mut positions = 0;
    let (t_full, matches) = best_of(5, || {
        let (_, m, p) = ceql_benches::run_batches(&query, &batches, true, &mut out);
        positions = p;
        m
    });
    println!(
        "| stock {name} | {:.1} | {:.1} | {:.0} | {matches} | | | {:.0} |",
        events as f64 / t_update / 1e6,
        events as f64 / t_full / 1e6,
        positions as f64 / t_full / 1e6,
        peak_rss_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--one" {
        one(&args[2]);
        return;
    }
    let filter = args.get(1).cloned().unwrap_or_default();
    let mut names = synthetic_names();
    names.extend(stock_queries().into_iter().map(|(n, _)| n.to_string()));
    println!(
        "| workload | update (M events/s) | full (M events/s) | full (M positions/s) | matches | det-states | tECS bytes/event | peak RSS (MiB) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for name in names.iter().filter(|n| n.contains(&filter)) {
        let status = Command::new(&args[0]).args(["--one", name]).status().expect("child runs");
        assert!(status.success(), "{name} failed");
    }
}
