//! criterion: the synthetic experiments of the CORE paper (§6) at 1M events.
//! For each workload, `update` runs with enumeration off and `full` enumerates
//! every complex event into a reusable output buffer. The `captures` group runs a
//! few of them with captures on.
//!
//! `cargo bench -p ceql-benches --bench sequences [-- FILTER]`

use ceql_benches::workloads::{iteration_and_disjunction, no_output, sequences, Synthetic};
use ceql_benches::Driver;
use ceql_engine::MatchBuffer;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn bench(c: &mut Criterion, group: &str, workloads: Vec<Synthetic>, captures: bool) {
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for w in workloads {
        let driver = Driver::new(&w.query, &w.stream.types).with_captures(captures);
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
    bench(c, "sequence", sequences(), false);
    bench(c, "window", no_output(), false);
    bench(c, "operators", iteration_and_disjunction(), false);
    // Captures on (docs/language.md#s3-2a): the same workloads, each match a valuation.
    let some = |ws: Vec<Synthetic>, names: &[&str]| -> Vec<Synthetic> {
        ws.into_iter().filter(|w| names.contains(&w.name.as_str())).collect()
    };
    let mut captured = some(sequences(), &["seq3_w100"]);
    captured.extend(some(no_output(), &["no_output_w100"]));
    captured.extend(some(iteration_and_disjunction(), &["k3", "d3"]));
    bench(c, "captures", captured, true);
}

criterion_group!(benches, synthetic);
criterion_main!(benches);
