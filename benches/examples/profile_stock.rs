//! Runs one stock query over the stock stream for profiling:
//! `cargo run --release -p ceql-benches --example profile_stock -- QUERY_FILE [repeat]`.

use ceql_benches::{load_stock, run_batches, stock_path};
use ceql_engine::MatchBuffer;
use std::time::Instant;

fn main() {
    let query = std::fs::read_to_string(std::env::args().nth(1).expect("query file")).expect("readable query");
    let repeat: usize = std::env::args().nth(2).map_or(1, |r| r.parse().expect("repeat"));
    let batches = load_stock(&stock_path().expect("stock data (set CEQL_STOCK_DATA)")).expect("stock data loads");
    let mut out = MatchBuffer::new();
    for enumerate in [false, true] {
        let t = Instant::now();
        let mut total = (0, 0);
        for _ in 0..repeat {
            let (e, m, _) = run_batches(&query, &batches, enumerate, &mut out);
            total = (total.0 + e, total.1 + m);
        }
        let dt = t.elapsed().as_secs_f64();
        println!(
            "enumerate={enumerate}: {:.2}M events/s, {} matches",
            total.0 as f64 / dt / 1e6,
            total.1 / repeat as u64
        );
    }
}
