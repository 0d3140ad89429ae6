//! Prints the performance table of `docs/performance.md`: for every workload,
//! update and full throughput (best of 5 runs), matches, det-states, tECS bytes
//! per event held in the window, and peak RSS: after the update runs (the
//! evaluation state), and after the full runs too (which adds the largest output
//! of one event, or of one 4,096-row slice, held in the reusable buffer). Each
//! workload runs in a child process so that its peak RSS is its own.
//!
//! After the table (when the filter lets `no_output_w1000000` through), a second
//! one gives the no-output update rate once the window has filled, W = 100 against
//! W = 1,000,000.
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
/// event into a reusable output buffer, cleared after each event (synthetic
/// workloads) or each 4,096-row slice (stock), as the criterion harness does.
fn one(name: &str) {
    let mut out = MatchBuffer::new();
    if let Some(w) = synthetic(name) {
        let driver = Driver::new(&w.query, &w.stream.types);
        let n = w.stream.events.len();
        let (t_update, _) = best_of(5, || driver.run(&w.stream, false, &mut out));
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
        let node_bytes = ceql_engine::TECS_NODE_BYTES as f64;
        let bytes_per_event = rt.arena_allocated() as f64 * node_bytes / 200_000.0;
        let rss_update = peak_rss_mib();
        let mut positions = 0;
        let (t_full, matches) = best_of(5, || {
            let (m, p) = driver.run_counting_positions(&w.stream, w.full_events, &mut out);
            positions = p;
            m
        });
        println!(
            "| {name} | {:.1} | {:.1}{} | {:.0} | {matches} | {} | {:.0} | {rss_update:.0} | {:.0} |",
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
        println!("| {name} | skipped: stock_data.csv not found | | | | | | | |");
        return;
    };
    let batches = load_stock(&path).unwrap();
    let (_, query) = stock_queries().into_iter().find(|(q, _)| *q == name).expect("known workload");
    let events: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let (t_update, _) = best_of(5, || ceql_benches::run_batches(&query, &batches, false, &mut out).1);
    let rss_update = peak_rss_mib();
    let mut positions = 0;
    let (t_full, matches) = best_of(5, || {
        let (_, m, p) = ceql_benches::run_batches(&query, &batches, true, &mut out);
        positions = p;
        m
    });
    println!(
        "| stock {name} | {:.1} | {:.1} | {:.0} | {matches} | | | {rss_update:.0} | {:.0} |",
        events as f64 / t_update / 1e6,
        events as f64 / t_full / 1e6,
        positions as f64 / t_full / 1e6,
        peak_rss_mib()
    );
}

/// Update throughput once the window has filled, for the smallest and the largest
/// no-output window: a stream of twice the benchmark length, timing its second
/// half. With W = 1,000,000 the 1M-event benchmark never fills the window, so every
/// node it creates is fresh memory from the kernel; a longer stream reuses the
/// chunks that expire, and settles at this rate.
fn window_filled() {
    use ceql_benches::{sequence_query, Workload};
    let types = ["A1", "A2", "B1", "B2", "B3", "B4", "B5", "B6"];
    let n = ceql_benches::workloads::EVENTS;
    let stream = Workload::uniform(&types, 2 * n, 7);
    let mut out = MatchBuffer::new();
    println!("| window | update after the first {n} events (M events/s) |");
    println!("|---|---|");
    for w in [100u64, 1_000_000] {
        let driver = Driver::new(&sequence_query(3, w), &stream.types);
        let best = (0..5).map(|_| driver.time_after_warm_up(&stream, n, &mut out)).fold(f64::INFINITY, f64::min);
        println!("| W = {w} | {:.1} |", n as f64 / best / 1e6);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--one" {
        one(&args[2]);
        return;
    }
    if args.len() == 2 && args[1] == "--window-filled" {
        window_filled();
        return;
    }
    let filter = args.get(1).cloned().unwrap_or_default();
    let mut names = synthetic_names();
    names.extend(stock_queries().into_iter().map(|(n, _)| n.to_string()));
    println!(
        "| workload | update (M events/s) | full (M events/s) | full (M positions/s) | matches | det-states | tECS bytes/event | peak RSS, update (MiB) | peak RSS, full (MiB) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for name in names.iter().filter(|n| n.contains(&filter)) {
        let status = Command::new(&args[0]).args(["--one", name]).status().expect("child runs");
        assert!(status.success(), "{name} failed");
    }
    if "no_output_w1000000".contains(&filter) {
        println!();
        let status = Command::new(&args[0]).arg("--window-filled").status().expect("child runs");
        assert!(status.success(), "window-filled run failed");
    }
}
