//! Issue 16's query 2 (an equality join without `PARTITION BY`, routed by key:
//! docs/language.md#s3-4b) and its hand-written `PARTITION BY [user]` rewrites, on a generated
//! LOGIN stream: shared by the criterion bench `correlation` and the example `profile_login`
//! (callgrind), so that both measure the same queries on the same events.

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use ceql_engine::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

/// Query 2 routed by `user`, its rewrites with `PARTITION BY [user]`, and both without the
/// inequality (the same outputs pairwise: docs/performance.md).
pub const LOGIN_QUERIES: [(&str, &str); 4] = [
    ("q2", "SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND country != a.country] WITHIN 1 hour"),
    (
        "q2_partition",
        "SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[country != a.country] PARTITION BY [user] WITHIN 1 hour",
    ),
    ("q2_eq", "SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 1 hour"),
    ("q2_partition_eq", "SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b PARTITION BY [user] WITHIN 1 hour"),
];

/// The LOGIN stream of query 2, seeded: `n` events of 10,000 users drawn uniformly, 100 ms
/// apart on average (uniform gaps of 0 to 199 ms, time stamps `ts` in milliseconds), each
/// from its user's home country (`user % 5` of five countries) except 2% from another one.
/// A one-hour window then holds about 36,000 events, 3.6 per user.
pub fn login_stream(n: usize) -> RecordBatch {
    const COUNTRIES: [&str; 5] = ["FR", "DE", "US", "JP", "BR"];
    let mut rng = SmallRng::seed_from_u64(16);
    let (mut users, mut countries, mut ts) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut t = 0i64;
    for _ in 0..n {
        let user = rng.random_range(0..10_000i64);
        let home = (user % 5) as usize;
        let c = if rng.random_range(0..100) < 2 { (home + rng.random_range(1..5usize)) % 5 } else { home };
        t += rng.random_range(0..200i64);
        users.push(user);
        countries.push(COUNTRIES[c]);
        ts.push(t);
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("type", Arc::new(StringArray::from(vec!["LOGIN"; n]))),
        ("user", Arc::new(Int64Array::from(users))),
        ("country", Arc::new(StringArray::from(countries))),
        ("ts", Arc::new(Int64Array::from(ts))),
    ];
    RecordBatch::try_from_iter(columns).expect("a valid batch")
}

/// Runs `text` over `batch` (time stamps in `ts`, milliseconds); returns the matches.
pub fn run_login(text: &str, batch: &RecordBatch, out: &mut MatchBuffer) -> u64 {
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles"));
    let options = RuntimeOptions { time_field: Some("ts".into()), time_unit_nanos: 1_000_000, ..Default::default() };
    let mut rt = Runtime::new(query, options);
    let mut matches = 0;
    let mut offset = 0;
    while offset < batch.num_rows() {
        let n = 4096.min(batch.num_rows() - offset);
        rt.push_batch(&batch.slice(offset, n), out).expect("valid batch");
        matches += out.total();
        out.clear();
        offset += n;
    }
    matches
}
