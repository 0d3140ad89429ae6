//! criterion: the synthetic experiments of the CORE paper (§6) at 1M events.
//! For each workload, `update` runs with enumeration off and `full` enumerates
//! every complex event into a reusable output buffer.
//!
//! `cargo bench -p ceql-benches --bench sequences [-- FILTER]`

use ceql_benches::workloads::{iteration_and_disjunction, no_output, sequences, Synthetic};
use ceql_benches::Driver;
use ceql_engine::MatchBuffer;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn bench(c: &mut Criterion, group: &str, workloads: Vec<Synthetic>) {
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for w in workloads {
        let driver = Driver::new(&w.query, &w.stream.types);
        g.throughput(Throughput::Elements(w.stream.events.len() as u64));
        g.bench_function(format!("{}/update", w.name), |b| b.iter(|| driver.run(&w.stream, false, &mut out)));
        g.throughput(Throughput::Elements(w.full_events as u64));
        g.bench_function(format!("{}/full", w.name), |b| {
            b.iter(|| driver.run_prefix(&w.stream, w.full_events, true, &mut out))
        });
    }
    g.finish();
}

fn synthetic(c: &mut Criterion) {
    bench(c, "sequence", sequences());
    bench(c, "window", no_output());
    bench(c, "operators", iteration_and_disjunction());
}

criterion_group!(benches, synthetic);
criterion_main!(benches);
