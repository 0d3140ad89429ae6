//! Seeded, reproducible workload generators for the benchmarks, after the CORE
//! paper's experiments (§6): streams of event types drawn uniformly, and a driver
//! that feeds them to the engine with enumeration on or off.

pub mod login;
pub mod workloads;

use arrow_array::RecordBatch;
use ceql_engine::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, Target, ValueRef};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::path::Path;
use std::sync::Arc;

/// A stream of event types (indexes into `types`).
#[derive(Clone, Debug)]
pub struct Workload {
    /// Event type names.
    pub types: Vec<String>,
    /// The stream: one type index per event.
    pub events: Vec<u32>,
}

impl Workload {
    /// `n` events drawn uniformly from `types`, with a fixed seed.
    pub fn uniform(types: &[&str], n: usize, seed: u64) -> Workload {
        let mut rng = SmallRng::seed_from_u64(seed);
        let events = (0..n).map(|_| rng.random_range(0..types.len() as u32)).collect();
        Workload { types: types.iter().map(|t| t.to_string()).collect(), events }
    }

    /// Types `A1..An` followed by the noise types `B1..B6` (CORE §6).
    pub fn sequence_types(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("A{i}")).chain((1..=6).map(|i| format!("B{i}"))).collect()
    }
}

/// `SELECT * FROM S WHERE A1 ; A2 ; ... ; An WITHIN w EVENTS`.
pub fn sequence_query(n: usize, window: u64) -> String {
    let body: Vec<String> = (1..=n).map(|i| format!("A{i}")).collect();
    format!("SELECT * FROM S WHERE {} WITHIN {window} EVENTS", body.join(" ; "))
}

/// A compiled query with its event targets resolved once.
pub struct Driver {
    query: Arc<CompiledQuery>,
    targets: Vec<Target>,
    captures: bool,
}

impl Driver {
    /// Compiles `text` for the types of `workload`.
    pub fn new(text: &str, types: &[String]) -> Driver {
        let query =
            Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("benchmark query compiles"));
        let probe = Runtime::new(query.clone(), RuntimeOptions::default());
        let targets = types.iter().map(|t| probe.resolve_target(None, t).expect("type resolves")).collect();
        Driver { query, targets, captures: false }
    }

    /// The same driver with captures on or off (docs/language.md#s3-2a).
    pub fn with_captures(self, captures: bool) -> Driver {
        Driver { captures, ..self }
    }

    /// A fresh evaluation of the query, with enumeration on or off.
    fn runtime(&self, enumerate: bool) -> Runtime {
        Runtime::new(
            self.query.clone(),
            RuntimeOptions { enumerate, captures: self.captures, ..RuntimeOptions::default() },
        )
    }

    /// Pushes the events `events` (type indexes) into `rt`; `after` runs after each.
    #[inline]
    fn push_all(
        &self,
        rt: &mut Runtime,
        events: &[u32],
        out: &mut MatchBuffer,
        mut after: impl FnMut(&mut MatchBuffer),
    ) {
        let row: &[ValueRef<'_>] = &[];
        for &e in events {
            rt.push_target(self.targets[e as usize], row, out).expect("valid event");
            after(out);
        }
    }

    /// Runs the whole workload; returns the number of complex events (0 when
    /// `enumerate` is false).
    pub fn run(&self, workload: &Workload, enumerate: bool, out: &mut MatchBuffer) -> u64 {
        self.run_prefix(workload, workload.events.len(), enumerate, out)
    }

    /// Runs the first `n` events with enumeration on, clearing `out` after each
    /// event; returns (complex events, data positions).
    pub fn run_counting_positions(&self, workload: &Workload, n: usize, out: &mut MatchBuffer) -> (u64, u64) {
        self.run_clearing(workload, n, true, out)
    }

    /// Update mode once the window has filled: pushes the first `warm_up` events
    /// untimed, then returns the seconds taken by the rest. A stream that runs
    /// longer than its window recycles the memory of expired nodes, so this is the
    /// rate a long-running stream settles at; a run shorter than the window pays
    /// for fresh memory on every node instead.
    pub fn time_after_warm_up(&self, workload: &Workload, warm_up: usize, out: &mut MatchBuffer) -> f64 {
        let mut rt = self.runtime(false);
        let (head, tail) = workload.events.split_at(warm_up.min(workload.events.len()));
        self.push_all(&mut rt, head, out, |_| {});
        let t = std::time::Instant::now();
        self.push_all(&mut rt, tail, out, |_| {});
        t.elapsed().as_secs_f64()
    }

    /// Runs the first `n` events with every complex event kept in `out` (not
    /// cleared): the native counterpart of `Query.run_arrow`, which materialises
    /// all matches in one buffer. Returns the number of complex events.
    pub fn run_keeping(&self, workload: &Workload, n: usize, out: &mut MatchBuffer) -> u64 {
        self.push_all(&mut self.runtime(true), prefix(workload, n), out, |_| {});
        out.total()
    }

    /// Runs the first `n` events of the workload; returns the number of complex
    /// events (0 when `enumerate` is false).
    pub fn run_prefix(&self, workload: &Workload, n: usize, enumerate: bool, out: &mut MatchBuffer) -> u64 {
        self.run_clearing(workload, n, enumerate, out).0
    }

    /// Runs the first `n` events, reusing `out`: it is cleared after each event
    /// that filled it. Returns (complex events, data positions).
    fn run_clearing(&self, workload: &Workload, n: usize, enumerate: bool, out: &mut MatchBuffer) -> (u64, u64) {
        let (mut matches, mut positions) = (0, 0);
        self.push_all(&mut self.runtime(enumerate), prefix(workload, n), out, |out| {
            if out.total() != 0 {
                matches += out.total();
                positions += out.total_positions();
                out.clear();
            }
        });
        (matches, positions)
    }
}

/// The first `n` events of `workload` (all of them when it is shorter).
fn prefix(workload: &Workload, n: usize) -> &[u32] {
    &workload.events[..n.min(workload.events.len())]
}

/// Reads the stock-trade stream of the CORE experiments (`stock_data.csv`) into
/// Arrow batches, with the `event_type` column renamed to `type`.
pub fn load_stock(path: &Path) -> std::io::Result<Vec<RecordBatch>> {
    use arrow_schema::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("type", DataType::Utf8, false),
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("volume", DataType::Int64, false),
        Field::new("price", DataType::Float64, false),
        Field::new("stock_time", DataType::Int64, false),
    ]));
    let file = std::fs::File::open(path)?;
    let reader = arrow_csv::ReaderBuilder::new(schema)
        .with_header(true)
        .with_batch_size(65_536)
        .build(file)
        .map_err(std::io::Error::other)?;
    reader.collect::<Result<Vec<_>, _>>().map_err(std::io::Error::other)
}

/// Where the stock data lives: `$CEQL_STOCK_DATA`, or the shared data directory
/// next to the repository.
pub fn stock_path() -> Option<std::path::PathBuf> {
    let candidates = [
        std::env::var("CEQL_STOCK_DATA").ok().map(std::path::PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/stock/stock_data.csv")),
    ];
    candidates.into_iter().flatten().find(|p| p.exists())
}

/// Runs a query over Arrow batches, fed in slices of 4,096 rows with the output
/// buffer cleared after each; returns (events, complex events, data positions).
pub fn run_batches(text: &str, batches: &[RecordBatch], enumerate: bool, out: &mut MatchBuffer) -> (u64, u64, u64) {
    let query =
        Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("benchmark query compiles"));
    let mut rt = Runtime::new(query, RuntimeOptions { enumerate, ..RuntimeOptions::default() });
    let (mut matches, mut positions) = (0, 0);
    for b in batches {
        let mut offset = 0;
        while offset < b.num_rows() {
            let n = 4096.min(b.num_rows() - offset);
            rt.push_batch(&b.slice(offset, n), out).expect("valid batch");
            matches += out.total();
            positions += out.total_positions();
            out.clear();
            offset += n;
        }
    }
    (rt.statistics().runtime.events, matches, positions)
}
