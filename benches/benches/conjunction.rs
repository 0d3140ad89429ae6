//! criterion: the conjunction `AND` (docs/language.md#s3-3c) of 3 and of 5 single events against
//! the equivalent `OR` of all their orders (6 and 120 sequences), W = 100 events.
//!
//! The stream: 1M events drawn uniformly from the `n` conjoined types `A1..An` and six noise
//! types `B1..B6` (as the CORE paper's sequence workloads). `update` runs with enumeration off
//! (the constant time per event of Algorithm 1); `full` enumerates every complex event of a
//! prefix (the output grows with `(W/(n+6))^(n-1)` per event: 10,000 events for `n = 3`,
//! 1,000 for `n = 5`). Both queries give the same complex events (checked once here).
//!
//! `cargo bench -p ceql-benches --bench conjunction`

use ceql_benches::{Driver, Workload};
use ceql_engine::MatchBuffer;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const EVENTS: usize = 1_000_000;

/// `A1 AND ... AND An WITHIN 100 EVENTS`, and the `OR` of the `n!` orders of `A1 ; ... ; An`.
pub fn queries(n: usize) -> (String, String) {
    let types: Vec<String> = (1..=n).map(|i| format!("A{i}")).collect();
    let conj = format!("SELECT * FROM S WHERE {} WITHIN 100 EVENTS", types.join(" AND "));
    let mut orders = Vec::new();
    permutations(&mut types.clone(), 0, &mut orders);
    let disj = format!("SELECT * FROM S WHERE {} WITHIN 100 EVENTS", orders.join(" OR "));
    (conj, disj)
}

/// Every order of `items[k..]` (after `items[..k]`), each as `(x ; y ; ...)`, appended to `out`.
fn permutations(items: &mut Vec<String>, k: usize, out: &mut Vec<String>) {
    if k == items.len() {
        out.push(format!("({})", items.join(" ; ")));
        return;
    }
    for i in k..items.len() {
        items.swap(k, i);
        permutations(items, k + 1, out);
        items.swap(k, i);
    }
}

fn conjunction(c: &mut Criterion) {
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group("conjunction");
    g.sample_size(10);
    for (n, full_events) in [(3usize, 10_000usize), (5, 1_000)] {
        let types = Workload::sequence_types(n);
        let names: Vec<&str> = types.iter().map(String::as_str).collect();
        let stream = Workload::uniform(&names, EVENTS, 17);
        let (conj, disj) = queries(n);
        let (and, or) = (Driver::new(&conj, &stream.types), Driver::new(&disj, &stream.types));
        let mut other = MatchBuffer::new();
        assert_eq!(
            and.run_counting_positions(&stream, full_events, &mut out),
            or.run_counting_positions(&stream, full_events, &mut other),
            "AND and the OR of its orders give the same complex events"
        );
        for (name, driver) in [(format!("and{n}_w100"), &and), (format!("or{n}_w100"), &or)] {
            g.throughput(Throughput::Elements(EVENTS as u64));
            g.bench_function(format!("{name}/update"), |b| b.iter(|| driver.run(&stream, false, &mut out)));
            g.throughput(Throughput::Elements(full_events as u64));
            g.bench_function(format!("{name}/full"), |b| {
                b.iter(|| driver.run_prefix(&stream, full_events, true, &mut out))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, conjunction);
criterion_main!(benches);
