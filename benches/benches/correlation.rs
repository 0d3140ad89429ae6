//! criterion: issue 16's queries 1, 3 and 4 (predicates between events,
//! docs/design/correlation.md) over a prefix of the stock-trade stream, at windows of
//! W = 100, 1,000 and 10,000 events. The residual test enumerates the valuations of the
//! query without its filters between events, so the cost grows with them (cubically in W
//! for query 1, exponentially in the BUYs of a window for queries 3 and 4); the prefix is
//! cut so that each measurement finishes: `CEQL_CORRELATION_EVENTS` (default 2,000) for
//! query 1, 100 events for queries 3 and 4 (beyond about 128 events of this stream a single
//! event enumerates 2^30 and more valuations; docs/performance.md).
//!
//!
//! Query 2 (an equality join without `PARTITION BY`, routed by key: docs/language.md#s3-4b)
//! runs on a generated LOGIN stream (`ceql_benches::login::login_stream`): `CEQL_LOGIN_EVENTS` events
//! (default 200,000), against its hand-written `PARTITION BY [user]` rewrite with and
//! without the residual `country != a.country`, and the routed query without it.
//!
//! `cargo bench -p ceql-benches --bench correlation`

use ceql_benches::login::{login_stream, run_login, LOGIN_QUERIES};
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

fn equality_join(c: &mut Criterion) {
    let n: usize = std::env::var("CEQL_LOGIN_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000);
    let batch = login_stream(n);
    let mut out = MatchBuffer::counting();
    // The routed queries and their rewrites report the same complex events.
    let counts: Vec<u64> = LOGIN_QUERIES.iter().map(|(_, q)| run_login(q, &batch, &mut out)).collect();
    assert_eq!(counts[0], counts[1], "query 2 and its PARTITION BY rewrite agree");
    assert_eq!(counts[2], counts[3], "the equality alone and PARTITION BY agree");
    let mut g = c.benchmark_group("correlation");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    for (name, query) in LOGIN_QUERIES {
        g.bench_function(format!("{name}/full"), |b| b.iter(|| run_login(query, &batch, &mut out)));
    }
    g.finish();
}

/// Aggregates (docs/language.md#s3-4a, #s3-5a) at W = 100, 1,000 and 10,000 events:
///
/// * `agg_filter`: `e[price > avg(b.price)]` under ALL, a filter with an aggregate, which
///   cannot prune (an aggregate is known only on the whole valuation): every valuation of
///   the unfiltered query is enumerated, exponentially many in the BUYs of a window, so it
///   runs on the 100-event prefix as queries 3 and 4;
/// * `measures_last` and its baseline `run_last`: "the average of the run" as measures
///   under LAST (one valuation per end), on `CEQL_CORRELATION_EVENTS` events; the
///   difference is the cost of the residual path (captures inside, the stored prices) and
///   of computing the measures.
fn aggregates(c: &mut Criterion) {
    let Some(path) = stock_path() else {
        eprintln!("aggregates benchmark skipped: stock_data.csv not found (set CEQL_STOCK_DATA)");
        return;
    };
    let n: usize = std::env::var("CEQL_CORRELATION_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000);
    let batches = load_stock(&path).expect("stock data loads");
    let mut out = MatchBuffer::counting();
    let mut g = c.benchmark_group("correlation");
    g.sample_size(10);
    let run = "SELL AS s ; (BUY AS b)+ ; SELL AS e";
    for w in [100, 1_000, 10_000] {
        let part = format!("PARTITION BY [name] WITHIN {w} EVENTS");
        let queries = [
            ("agg_filter", format!("SELECT * FROM S WHERE {run} FILTER e[price > avg(b.price)] {part}"), 100),
            (
                "measures_last",
                format!("SELECT LAST s, e, count(b) AS n, avg(b.price) AS avg_price FROM S WHERE {run} {part}"),
                n,
            ),
            ("run_last", format!("SELECT LAST s, e FROM S WHERE {run} {part}"), n),
        ];
        for (name, query, events) in queries {
            let prefix = vec![batches[0].slice(0, events.min(batches[0].num_rows()))];
            g.throughput(Throughput::Elements(prefix[0].num_rows() as u64));
            g.bench_function(format!("{name}_w{w}/full"), |b| b.iter(|| run_batches(&query, &prefix, true, &mut out)));
        }
    }
    g.finish();
}

criterion_group!(benches, correlation, equality_join, aggregates);
criterion_main!(benches);
