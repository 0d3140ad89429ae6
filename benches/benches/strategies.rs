//! criterion: every selection strategy on the no-output stream (A3 never
//! occurs), `SELECT <strategy> * FROM S WHERE A1 ; A2 ; A3 WITHIN 100 EVENTS`. The
//! CORE paper reports the same throughput for every strategy: only the automaton
//! changes.
//!
//! `cargo bench -p ceql-benches --bench strategies`

use ceql_benches::{sequence_query, Driver, Workload};
use ceql_engine::MatchBuffer;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn strategies(c: &mut Criterion) {
    let types: Vec<&str> = vec!["A1", "A2", "B1", "B2", "B3", "B4", "B5", "B6"];
    let quiet = Workload::uniform(&types, ceql_benches::workloads::EVENTS, 7);
    let mut out = MatchBuffer::new();
    let mut g = c.benchmark_group("strategy");
    g.sample_size(10);
    g.throughput(Throughput::Elements(quiet.events.len() as u64));
    for s in ["ALL", "NEXT", "LAST", "MAX", "STRICT"] {
        let text = sequence_query(3, 100).replacen("SELECT", &format!("SELECT {s}"), 1);
        let driver = Driver::new(&text, &quiet.types);
        g.bench_function(s, |b| b.iter(|| driver.run(&quiet, true, &mut out)));
    }
    g.finish();
}

criterion_group!(benches, strategies);
criterion_main!(benches);
