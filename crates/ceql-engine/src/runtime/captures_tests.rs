//! Captures (docs/language.md#s3-2a): with captures on, each output is a
//! valuation, its positions labelled with the variables that captured them.
//! Expected values come from the semantics of docs/language.md#s3-2a, worked by hand.

use crate::output::MatchBuffer;
use crate::runtime::{Runtime, RuntimeOptions};
use crate::{CompileOptions, CompiledQuery};
use std::collections::BTreeSet;
use std::sync::Arc;

/// A valuation as a sorted set of (position, variable names).
type Valuation = (u64, u64, Vec<(u64, Vec<String>)>);

fn run(text: &str, stream: &str, captures: bool) -> BTreeSet<Valuation> {
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles"));
    let names = query.capture_names();
    let mut rt = Runtime::new(query, RuntimeOptions { captures, ..RuntimeOptions::default() });
    let mut out = MatchBuffer::new();
    let mut outputs = 0;
    for ty in stream.split_whitespace() {
        rt.push(None, ty, &[], &mut out).expect("valid event");
    }
    let mut set = BTreeSet::new();
    for m in out.iter() {
        outputs += 1;
        assert_eq!(m.labels.len(), if captures { m.positions.len() } else { 0 });
        let pos = m
            .positions
            .iter()
            .enumerate()
            .map(|(k, &p)| (p, m.labels.get(k).map_or_else(Vec::new, |&l| names[l as usize].clone())))
            .collect();
        set.insert((m.start, m.end, pos));
    }
    assert_eq!(outputs, set.len(), "no output is repeated");
    set
}

fn v(start: u64, end: u64, pos: &[(u64, &[&str])]) -> Valuation {
    (start, end, pos.iter().map(|(p, names)| (*p, names.iter().map(|n| n.to_string()).collect())).collect())
}

#[test]
fn v43_is_one_complex_event_without_captures_and_two_valuations_with_them() {
    let text = "SELECT * FROM S WHERE (A AS x) OR (A AS y)";
    assert_eq!(run(text, "A", false), BTreeSet::from([v(0, 0, &[(0, &[])])]));
    assert_eq!(run(text, "A", true), BTreeSet::from([v(0, 0, &[(0, &["A", "x"])]), v(0, 0, &[(0, &["A", "y"])])]));
}

#[test]
fn an_event_captured_by_several_variables_appears_under_each() {
    let text = "SELECT * FROM S WHERE ((A AS x) AS y) ; B";
    assert_eq!(run(text, "A C B", true), BTreeSet::from([v(0, 2, &[(0, &["A", "x", "y"]), (2, &["B"])])]));
}

#[test]
fn projection_restricts_valuations_and_merges_equal_ones() {
    // Two valuations (x or y captures the A); SELECT b keeps b only: one output.
    let text = "SELECT b FROM S WHERE ((A AS x) OR (A AS y)) ; B AS b";
    assert_eq!(run(text, "A B", true), BTreeSet::from([v(0, 1, &[(1, &["b"])])]));
    let text = "SELECT x, b FROM S WHERE ((A AS x) OR (A AS y)) ; B AS b";
    assert_eq!(run(text, "A B", true), BTreeSet::from([v(0, 1, &[(0, &["x"]), (1, &["b"])]), v(0, 1, &[(1, &["b"])])]));
}

#[test]
fn iterations_capture_each_event_under_its_variables() {
    let text = "SELECT * FROM S WHERE A AS a ; (B AS b)+ ; C WITHIN 4 EVENTS";
    let got = run(text, "A B B C", true);
    let expected = BTreeSet::from([
        v(0, 3, &[(0, &["A", "a"]), (1, &["B", "b"]), (3, &["C"])]),
        v(0, 3, &[(0, &["A", "a"]), (2, &["B", "b"]), (3, &["C"])]),
        v(0, 3, &[(0, &["A", "a"]), (1, &["B", "b"]), (2, &["B", "b"]), (3, &["C"])]),
    ]);
    assert_eq!(got, expected);
}

#[test]
fn strategies_select_among_valuations() {
    // NEXT keeps every valuation with the preferred (K, D): both of V43's.
    let text = "SELECT NEXT * FROM S WHERE (A AS x) OR (A AS y)";
    assert_eq!(run(text, "A", true).len(), 2);
    // NEXT over A+ ; B: the preferred run takes the earliest A's.
    let text = "SELECT NEXT * FROM S WHERE (A AS a)+ ; B";
    assert_eq!(run(text, "A A B", true), BTreeSet::from([v(0, 2, &[(0, &["A", "a"]), (1, &["A", "a"]), (2, &["B"])])]));
}

#[test]
fn a_snapshot_carries_the_captures() {
    let text = "SELECT * FROM S WHERE ((A AS x) OR (A AS y)) ; B";
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles"));
    let mut rt = Runtime::new(query.clone(), RuntimeOptions { captures: true, ..RuntimeOptions::default() });
    let mut out = MatchBuffer::new();
    rt.push(None, "A", &[], &mut out).unwrap();
    let mut restored = Runtime::restore(query, &rt.snapshot()).expect("restores");
    assert!(restored.options().captures);
    restored.push(None, "B", &[], &mut out).unwrap();
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|m| m.labels.len() == 2));
}

#[test]
fn max_under_a_partial_projection_removes_repeats_with_captures_off_and_on() {
    // MAX with SELECT x: repeated outputs are removed at each position (docs/language.md#s3-5),
    // complex events with captures off, restricted valuations with them.
    let text = "SELECT MAX x FROM S WHERE (A AS x) ; (B OR C)+";
    let off = run(text, "A B C B", false);
    let on = run(text, "A B C B", true);
    let projected: BTreeSet<(u64, u64, Vec<u64>)> =
        on.iter().map(|(s, e, pos)| (*s, *e, pos.iter().map(|(p, _)| *p).collect())).collect();
    let off: BTreeSet<(u64, u64, Vec<u64>)> =
        off.into_iter().map(|(s, e, pos)| (s, e, pos.into_iter().map(|(p, _)| p).collect())).collect();
    assert_eq!(projected, off);
    assert!(on.iter().all(|(_, _, pos)| pos.iter().all(|(_, names)| names == &["x"])));
}
