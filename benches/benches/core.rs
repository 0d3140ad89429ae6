//! criterion benchmarks of the CORE paper's sequence experiments (§6) at 1M events.
//! Update throughput = enumeration off; full throughput = every complex event
//! enumerated into a reusable output buffer.

use ceql_benches::{sequence_query, Driver, Workload};
use ceql_engine::MatchBuffer;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const N: usize = 1_000_000;

fn seq3(c: &mut Criterion) {
    let types = Workload::sequence_types(3);
    let refs: Vec<&str> = types.iter().map(String::as_str).collect();
    let full = Workload::uniform(&refs, N, 1);
    // No-output variant: A3 never occurs.
    let no_a3: Vec<&str> = refs.iter().copied().filter(|t| *t != "A3").collect();
    let quiet = Workload { types: types.clone(), events: Workload::uniform(&no_a3, N, 2).events.iter().map(|&i| {
        let name = no_a3[i as usize];
        types.iter().position(|t| t == name).unwrap() as u32
    }).collect() };
    let driver = Driver::new(&sequence_query(3, 100), &types);
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group("seq3_w100");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("no_output", |b| b.iter(|| driver.run(&quiet, true, &mut out)));
    g.bench_function("update_only", |b| b.iter(|| driver.run(&full, false, &mut out)));
    g.bench_function("full_enumeration", |b| b.iter(|| driver.run(&full, true, &mut out)));
    g.finish();
}

/// Every strategy on the no-output stream (A3 never occurs): the CORE paper reports
/// the same throughput for all of them, since only the automaton changes.
fn strategies(c: &mut Criterion) {
    let types = Workload::sequence_types(3);
    let no_a3: Vec<&str> = types.iter().map(String::as_str).filter(|t| *t != "A3").collect();
    let w = Workload::uniform(&no_a3, N, 2);
    let quiet = Workload { types: no_a3.iter().map(|t| t.to_string()).collect(), events: w.events };
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group("strategy_seq3_w100_no_output");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    for s in ["ALL", "NEXT", "LAST", "MAX", "STRICT"] {
        let text = sequence_query(3, 100).replacen("SELECT", &format!("SELECT {s}"), 1);
        let driver = Driver::new(&text, &quiet.types);
        g.bench_function(s, |b| b.iter(|| driver.run(&quiet, true, &mut out)));
    }
    g.finish();
}

criterion_group!(benches, seq3, strategies);
criterion_main!(benches);
