//! Model-based property: the evaluator (lazy determinization + tECS + Algorithms 1
//! and 2) reports exactly the complex events of the accepting runs of the CEA,
//! computed here by brute force over all runs, for random formulas and streams,
//! with and without windows. Debug builds also check the tECS invariants
//! (time-ordered, 3-bounded, safe arguments, union-list lengths) on every step.

use crate::cea::Cea;
use crate::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

type Ce = (u64, u64, Vec<u64>);

/// All (start, end, marked positions) of accepting runs, by brute force.
fn runs(cea: &Cea, classes: &[(u32, u64)], window: Option<u64>) -> BTreeSet<Ce> {
    let mut out = BTreeSet::new();
    for start in 0..classes.len() {
        // (state, marked positions) after reading classes[start..=j]
        let mut frontier: Vec<(u32, Vec<u64>)> = vec![(0, Vec::new())];
        for (j, &(ty, bits)) in classes.iter().enumerate().skip(start) {
            let mut next = Vec::new();
            for (q, marks) in &frontier {
                for tr in &cea.out[*q as usize] {
                    if cea.guards[tr.guard as usize].matches(ty, &[bits]) {
                        let mut m = marks.clone();
                        if tr.marked {
                            m.push(j as u64);
                        }
                        if cea.finals[tr.target as usize] && window.is_none_or(|w| (j - start) as u64 <= w) {
                            out.insert((start as u64, j as u64, m.clone()));
                        }
                        next.push((tr.target, m));
                    }
                }
            }
            next.sort();
            next.dedup();
            frontier = next;
            if frontier.is_empty() {
                break;
            }
        }
    }
    out
}

const FORMULAS: &[&str] = &[
    "A ; B",
    "A : B",
    "A ; B+ ; C",
    "A ; B:+ ; C",
    "(A ; B)+",
    "A+",
    "A:+ ; C",
    "(A OR B) ; C",
    "A ; B OR C",
    "A ; NOT(B) ; C",
    "A : NOT(B):+ : C",
    "NOT(B) ; C",
    "(A AS x ; B AS y)+ ; C",
    "(A ; (B OR C)+) : A",
    "A ; (B ; C)+ ; A",
    "(A OR B)+ ; C ; (A OR C)",
    "A ; A ; A",
    "(A:+ OR B:+) ; C+",
];

const PROJECTIONS: &[&str] = &["*", "NONE", "A", "B, C", "x", "A, y"];

fn compile(formula: &str, projection: &str, window: Option<u64>) -> Option<CompiledQuery> {
    let w = window.map_or(String::new(), |n| format!(" WITHIN {n} EVENTS"));
    let text = format!("SELECT {projection} FROM S WHERE {formula}{w}");
    CompiledQuery::compile(&text, None, CompileOptions::default()).ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]
    #[test]
    fn evaluator_reports_exactly_the_accepting_runs(
        f in 0..FORMULAS.len(),
        p in 0..PROJECTIONS.len(),
        window in prop_oneof![Just(None), (0u64..6).prop_map(Some)],
        stream in prop::collection::vec(0usize..4, 0..12),
    ) {
        let Some(q) = compile(FORMULAS[f], PROJECTIONS[p], window) else { return Ok(()) };
        let names = ["A", "B", "C", "X"];
        let schema = &q.plan.schema;
        // Class of each event for the brute-force model: its type id (no predicates).
        let classes: Vec<(u32, u64)> = stream
            .iter()
            .map(|&t| (schema.types_named(names[t]).first().copied().unwrap_or(u32::MAX), 0))
            .collect();
        let expected = runs(&q.cea, &classes, window);
        let cea = q.cea.clone();
        let mut rt = Runtime::new(Arc::new(q), RuntimeOptions::default());
        let mut out = MatchBuffer::new();
        for &t in &stream {
            rt.push(None, names[t], &[] as &[ValueRef<'_>], &mut out).unwrap();
        }
        let got: Vec<Ce> = out.iter().map(|m| (m.start, m.end, m.positions.to_vec())).collect();
        let as_set: BTreeSet<Ce> = got.iter().cloned().collect();
        prop_assert_eq!(got.len(), as_set.len(), "duplicate-free");
        prop_assert!(got.windows(2).all(|w| w[0].1 <= w[1].1), "in order of end");
        prop_assert_eq!(as_set, expected, "states: {}", cea.num_states);
    }
}
