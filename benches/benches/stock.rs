//! criterion: Q1–Q7 of the CORE paper over the stock-trade stream. The data is
//! not in the repository: it is found at `$CEQL_STOCK_DATA` or in the shared data
//! directory next to the checkout; otherwise the benchmark says so and skips.
//!
//! `cargo bench -p ceql-benches --bench stock`

use ceql_benches::workloads::stock_queries;
use ceql_benches::{load_stock, run_batches, stock_path};
use ceql_engine::MatchBuffer;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn stock(c: &mut Criterion) {
    let Some(path) = stock_path() else {
        eprintln!("stock benchmark skipped: stock_data.csv not found (set CEQL_STOCK_DATA)");
        return;
    };
    let batches = load_stock(&path).expect("stock data loads");
    let events: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group("stock");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    for (name, query) in stock_queries() {
        g.bench_function(format!("{name}/update"), |b| b.iter(|| run_batches(&query, &batches, false, &mut out)));
        g.bench_function(format!("{name}/full"), |b| b.iter(|| run_batches(&query, &batches, true, &mut out)));
    }
    g.finish();
}

criterion_group!(benches, stock);
criterion_main!(benches);
