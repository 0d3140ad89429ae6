//! `explain` and `to_dot` against the compiled automaton.

use super::text::SECTIONS;
use crate::{CompileOptions, CompiledQuery, MatchBuffer, Runtime, RuntimeOptions, ValueRef};
use std::sync::Arc;

fn compile(text: &str) -> CompiledQuery {
    CompiledQuery::compile(text, None, CompileOptions::default()).unwrap()
}

fn dot_lines(dot: &str, prefix: char) -> (Vec<&str>, Vec<&str>) {
    let is_node = |l: &&str| {
        let l = l.trim_start();
        l.starts_with(prefix) && l[1..].split(' ').next().is_some_and(|n| n.parse::<u32>().is_ok()) && !l.contains("->")
    };
    let is_edge = |l: &&str| l.trim_start().starts_with(prefix) && l.contains(" -> ");
    (dot.lines().filter(is_node).collect(), dot.lines().filter(is_edge).collect())
}

const QUERIES: [&str; 10] = [
    "SELECT * FROM S WHERE A ; B+ ; C WITHIN 10 EVENTS",
    "SELECT * FROM S WHERE (A AS x ; B AS y) FILTER x[v > 1] AND y[v < 2 OR w = 'a']",
    "SELECT x FROM S WHERE A AS x : B:+ ; NOT(C FILTER C[v = 3]) ; D",
    "SELECT NEXT * FROM S WHERE (A OR B) AS x ; C FILTER x[v > 0] OR x[v < -5]",
    "SELECT MAX x FROM S WHERE A AS x ; B+ AS y PARTITION BY [k] WITHIN 5 [t]",
    "SELECT STRICT * FROM S WHERE A ; B ; C",
    "SELECT LAST * FROM S WHERE A ; B WITHIN 3 seconds CONSUME BY PARTITION LIMIT 2",
    "SELECT NONE FROM S WHERE A ; B CONSUME BY ANY",
    "SELECT * FROM S1, S2 WHERE S1>A ; B FILTER B[v = 1]",
    "SELECT * WHERE A ; B",
];

#[test]
fn dot_has_one_node_per_state_and_one_edge_per_transition() {
    for text in QUERIES {
        let q = compile(text);
        let facts = q.facts();
        let dot = q.to_dot();
        let (nodes, edges) = dot_lines(&dot, 'q');
        assert_eq!(nodes.len(), facts.states, "{text}\n{dot}");
        assert_eq!(edges.len(), facts.transitions, "{text}\n{dot}");
        let finals = nodes.iter().filter(|l| l.contains("doublecircle")).count();
        assert_eq!(finals, q.cea.finals.iter().filter(|&&f| f).count(), "{text}");
        assert!(dot.contains("start -> q0;"));
        let view = q.automaton_view();
        assert_eq!(view.transitions.len(), facts.transitions);
        for (t, line) in view.transitions.iter().zip(&edges) {
            assert!(line.starts_with(&format!("  q{} -> q{} ", t.source, t.target)), "{line}");
        }
    }
}

#[test]
fn text_has_every_section() {
    for text in QUERIES {
        let e = compile(text).explain();
        let mut at = 0;
        for s in SECTIONS {
            let i = e[at..].find(&format!("\n{s}")).map(|i| i + at).or_else(|| e.starts_with(s).then_some(0));
            at = i.unwrap_or_else(|| panic!("section {s} missing or out of order in\n{e}"));
        }
    }
}

#[test]
fn filters_move_onto_their_atoms() {
    let cases = [
        ("SELECT * FROM S WHERE (A AS x ; B) FILTER x[v > 1]", "A[v > 1] AS x ; B"),
        ("SELECT * FROM S WHERE (A ; B) AS z FILTER z[v > 1]", "(A[v > 1] ; B[v > 1]) AS z"),
        ("SELECT * FROM S WHERE A ; B FILTER A[v = 1] OR B[w = 2]", "(A[v = 1] ; B) OR (A ; B[w = 2])"),
        ("SELECT * FROM S WHERE A ; B FILTER A[v = 1 AND w = 2] AND A[u < 0]", "A[(v = 1 AND w = 2) AND u < 0] ; B"),
        ("SELECT * FROM S WHERE A ; NOT(C FILTER C[v = 3]) ; D", "A ; NOT(C[v = 3]) ; D"),
        ("SELECT * FROM S WHERE (A ; B)+ : C", "(A ; B)+ : C"),
        ("SELECT * FROM S WHERE A : (B ; C)", "A : B ; C"),
        ("SELECT * FROM S WHERE (A : B) ; C", "(A : B) ; C"),
        ("SELECT * FROM S1, S2 WHERE A ; B FILTER S1>A[v = 1]", "(S1>A[v = 1] OR S2>A) ; B"),
    ];
    for (text, want) in cases {
        assert_eq!(compile(text).normalized_formula(), want, "{text}");
    }
}

#[test]
fn labels_name_types_filters_and_variables() {
    let q = compile("SELECT x FROM S WHERE (A AS x ; B AS y) FILTER x[v > 1] AND y[w = 'a']");
    let view = q.automaton_view();
    let labels: Vec<String> = view.transitions.iter().map(|t| t.label()).collect();
    assert!(labels.contains(&"A[v > 1] AS x".to_string()), "{labels:?}");
    assert!(labels.contains(&"B[w = 'a'] AS y".to_string()), "{labels:?}");
    assert!(labels.contains(&"TRUE".to_string()), "{labels:?}");
    // y is captured but not selected: no output mark.
    let b = view.transitions.iter().find(|t| t.reads.starts_with('B')).unwrap();
    assert!(b.captures && !b.output);
    let e = q.explain();
    assert!(e.contains("bit 0   v > 1") && e.contains("bit 0   w = 'a'"), "{e}");
}

#[test]
fn det_states_dot_draws_every_materialised_det_state() {
    for text in QUERIES {
        let q = Arc::new(compile(text));
        let mut rt = Runtime::new(q.clone(), RuntimeOptions::default());
        let mut out = MatchBuffer::new();
        let names = rt.attribute_names().to_vec();
        for (i, ty) in ["A", "B", "X", "B", "C", "D", "A", "B", "C"].iter().enumerate() {
            let values: Vec<ValueRef> = names
                .iter()
                .map(|n| match n.as_str() {
                    "v" | "k" | "t" => ValueRef::Int(i as i64),
                    "w" => ValueRef::Str("a"),
                    _ => ValueRef::Null,
                })
                .collect();
            let stream = if text.contains("FROM S1") { "S1" } else { "S" };
            rt.push(Some(stream), ty, &values, &mut out).unwrap();
        }
        let stats = rt.statistics();
        let dot = rt.det_states_dot();
        let (nodes, edges) = dot_lines(&dot, 'd');
        assert_eq!(nodes.len(), stats.det_states, "{text}\n{dot}");
        assert!(!edges.is_empty(), "{text}: some transitions are cached\n{dot}");
        let cache = rt.explain_cache();
        assert!(cache.contains(&format!("{} interned now", stats.det_states)), "{cache}");
        assert!(cache.contains(&format!("{} hits, {} misses", stats.cache.hits, stats.cache.misses)), "{cache}");
    }
}

#[test]
fn absences_are_printed_in_the_formula() {
    let q = crate::CompiledQuery::compile(
        "SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1]) ; C ; ABSENT(A) FOR 2 seconds WITHIN 1 minute",
        None,
        crate::CompileOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = q.normalized_formula();
    assert!(f.contains("ABSENT(B[v > 1])"), "{f}");
    assert!(f.ends_with("; ABSENT(A) FOR 2000000000 ns"), "{f}");
}
