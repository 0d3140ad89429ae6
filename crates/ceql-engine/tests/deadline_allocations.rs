//! The deadline queue of a trailing absence (docs/language.md#s3-3b) allocates nothing per
//! waiting complex event once it has grown to the window's size: deferring, cancelling and
//! firing reuse the room of its flat queues (issue 17: "one allocation per waiting entry,
//! to remove"). Counted with a global allocator over a steady stream of many keys.

use ceql_engine::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const DEADLINE: &str = "SELECT * FROM S WHERE ORDER ; ABSENT(PAY) FOR 10 seconds PARTITION BY [id] WITHIN 1 minute";

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Orders of 100 keys round robin, one per second; every third key pays within the deadline
/// (cancelling its order), the others' orders fire 10 s later. Returns the allocations
/// counted over `events` pushes after `warmup` pushes, and the matches emitted then.
fn run(query: &str, captures: bool, warmup: u64, events: u64) -> (u64, u64) {
    let q = CompiledQuery::compile(query, None, CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let options =
        RuntimeOptions { time_field: Some("t".into()), time_unit_nanos: 1_000_000_000, captures, ..Default::default() };
    let mut rt = Runtime::new(Arc::new(q), options);
    let names = rt.attribute_names().to_vec();
    let mut out = MatchBuffer::new();
    let (mut before, mut matches) = (0, 0);
    let mut values: Vec<ValueRef> = Vec::with_capacity(names.len());
    for i in 0..warmup + events {
        if i == warmup {
            before = ALLOCATIONS.load(Ordering::Relaxed);
            matches = 0;
        }
        let (ty, id, t) = if i % 2 == 0 { ("ORDER", (i / 2) % 100, i / 2) } else { ("PAY", (i / 2) % 300, i / 2) };
        values.clear();
        values.extend(names.iter().map(|n| match n.as_str() {
            "id" => ValueRef::Int(id as i64),
            "t" => ValueRef::Int(t as i64),
            _ => ValueRef::Absent,
        }));
        out.clear();
        rt.push(Some("S"), ty, &values, &mut out).unwrap();
        matches += out.len() as u64;
    }
    (ALLOCATIONS.load(Ordering::Relaxed) - before, matches)
}

#[test]
fn waiting_matches_allocate_nothing_in_the_steady_state() {
    for captures in [false, true] {
        let (allocations, matches) = run(DEADLINE, captures, 20_000, 20_000);
        assert!(matches > 5_000, "the workload fires deadlines ({matches})");
        // Before: 56,689 for these 20,000 pushes (a key, a vector of complex events and one of
        // positions per waiting group, and a fresh deferral buffer per position).
        assert_eq!(allocations, 0, "captures {captures}: {allocations} allocations for 20,000 pushes");
    }
}
