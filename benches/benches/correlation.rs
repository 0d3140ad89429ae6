//! criterion: issue 16's queries 1, 3 and 4 (predicates between events,
//! docs/design/correlation.md) over a prefix of the stock-trade stream, at windows of
//! W = 100, 1,000 and 10,000 events. The residual test enumerates the valuations of the
//! query without its filters between events, so the cost grows with them (cubically in W
//! for query 1, exponentially in the BUYs of a window for queries 3 and 4); the prefix is
//! cut so that each measurement finishes: `CEQL_CORRELATION_EVENTS` (default 2,000) for
//! query 1, 100 events for queries 3 and 4 (beyond about 128 events of this stream a single
//! event enumerates 2^30 and more valuations; docs/performance.md).
//!
//! `cargo bench -p ceql-benches --bench correlation`

use ceql_benches::workloads::correlation_queries;
use ceql_benches::{load_stock, run_batches, stock_path};
use ceql_engine::MatchBuffer;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn correlation(c: &mut Criterion) {
    let Some(path) = stock_path() else {
        eprintln!("correlation benchmark skipped: stock_data.csv not found (set CEQL_STOCK_DATA)");
        return;
    };
    let n: usize = std::env::var("CEQL_CORRELATION_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
    let batches = load_stock(&path).expect("stock data loads");
    let mut out = MatchBuffer::counting();
    let mut g = c.benchmark_group("correlation");
    g.sample_size(10);
    for (name, query) in correlation_queries() {
        let events = if name.starts_with("q1") { n } else { 100 };
        let prefix = vec![batches[0].slice(0, events.min(batches[0].num_rows()))];
        g.throughput(Throughput::Elements(prefix[0].num_rows() as u64));
        g.bench_function(format!("{name}/full"), |b| b.iter(|| run_batches(&query, &prefix, true, &mut out)));
    }
    g.finish();
}

criterion_group!(benches, correlation);
criterion_main!(benches);
