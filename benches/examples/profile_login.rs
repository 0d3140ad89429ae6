//! Runs issue 16's query 2 or one of its rewrites (`ceql_benches::login::LOGIN_QUERIES`) on the
//! generated LOGIN stream, for callgrind: instruction counts compare the routed query with its
//! `PARTITION BY [user]` rewrite on a loaded machine, where criterion's timings scatter.
//!
//! `EVENTS=100000 valgrind --tool=callgrind target/release/examples/profile_login q2`

use ceql_benches::login::{login_stream, run_login, LOGIN_QUERIES};
use ceql_engine::MatchBuffer;
use std::time::Instant;

fn main() {
    let name = std::env::args().nth(1).expect("query name: q2, q2_partition, q2_eq or q2_partition_eq");
    let n: usize = std::env::var("EVENTS").map_or(200_000, |v| v.parse().expect("EVENTS"));
    let (_, query) = LOGIN_QUERIES.iter().find(|(q, _)| *q == name).expect("known query");
    let batch = login_stream(n);
    let mut out = MatchBuffer::counting();
    let t = Instant::now();
    let matches = run_login(query, &batch, &mut out);
    println!("{name}: {n} events, {matches} matches, {:.0} events/s", n as f64 / t.elapsed().as_secs_f64());
}
