//! Equalities routed by key (docs/language.md#s3-4b): which queries are routed, by
//! which attribute per type, and the key rules (int and double, NULL, NaN, kinds) on
//! small hand-worked streams.

use crate::output::MatchBuffer;
use crate::runtime::{Runtime, RuntimeOptions};
use crate::value::ValueRef;
use crate::{CompileOptions, CompiledQuery};
use std::sync::Arc;

use ValueRef::{Float as F, Int as I, Null as N, Str as S};

fn compile(text: &str) -> CompiledQuery {
    CompiledQuery::compile(&format!("SELECT * FROM S WHERE {text}"), None, CompileOptions::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn routed_by(text: &str) -> Vec<(String, String)> {
    compile(text).facts().routed_by
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter().map(|(t, a)| (format!("S>{t}"), a.to_string())).collect()
}

type Event<'a> = (&'a str, Vec<(&'a str, ValueRef<'a>)>);

/// Runs `SELECT * FROM S WHERE text` over `events`; the first event error ends the run.
fn run(text: &str, events: &[Event<'_>]) -> Result<Vec<(u64, u64, Vec<u64>)>, String> {
    run_query(&format!("SELECT * FROM S WHERE {text}"), events)
}

/// Runs the query `text` over `events`; the first event error ends the run.
fn run_query(text: &str, events: &[Event<'_>]) -> Result<Vec<(u64, u64, Vec<u64>)>, String> {
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).expect("query compiles"));
    let mut rt = Runtime::new(query, RuntimeOptions::default());
    let names = rt.attribute_names().to_vec();
    let mut out = MatchBuffer::new();
    for (ty, attrs) in events {
        let row: Vec<ValueRef<'_>> =
            names.iter().map(|n| attrs.iter().find(|(a, _)| a == n).map_or(ValueRef::Absent, |(_, v)| *v)).collect();
        rt.push(None, ty, &row, &mut out).map_err(|e| format!("{}: {}", e.field, e.message))?;
    }
    let mut got: Vec<_> = out.iter().map(|m| (m.start, m.end, m.positions.to_vec())).collect();
    got.sort_by(|a, b| (a.1, a.0, &a.2).cmp(&(b.1, b.0, &b.2)));
    Ok(got)
}

fn login(user: ValueRef<'static>) -> Event<'static> {
    ("LOGIN", vec![("user", user)])
}

#[test]
fn query_2_is_routed_by_user() {
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND country != a.country] WITHIN 1 hour";
    assert_eq!(routed_by(q), pairs(&[("LOGIN", "user")]));
    let q = compile(q);
    assert!(!q.facts().partitioned, "`partitioned` is PARTITION BY as written");
    assert!(q.explain().contains("routed by     S>LOGIN.user"), "{}", q.explain());
    // The inequality stays a residual test; the equality left the filters.
    assert_eq!(q.plan.residuals.len(), 1);
    assert!(!q.normalized_formula().contains("user"), "{}", q.normalized_formula());
}

#[test]
fn the_key_attribute_is_per_type() {
    assert_eq!(
        routed_by("ORDER AS o ; PAYMENT AS p FILTER p[order_id = o.id]"),
        pairs(&[("ORDER", "id"), ("PAYMENT", "order_id")])
    );
    // Type names are variables; equalities chain; the reversed form is one too.
    assert_eq!(routed_by("A ; B ; C FILTER B[k = A.k] AND C[B.k = k]"), pairs(&[("A", "k"), ("B", "k"), ("C", "k")]));
    // A variable over several types and an OR whose branches bind it.
    assert_eq!(
        routed_by("(A AS x OR B AS x) ; C AS c FILTER c[k = x.k]"),
        pairs(&[("A", "k"), ("B", "k"), ("C", "k")])
    );
    // An iteration: every event of b against a.
    assert_eq!(routed_by("A AS a ; (B AS b)+ FILTER b[k = a.k]"), pairs(&[("A", "k"), ("B", "k")]));
}

#[test]
fn what_is_not_routed() {
    for q in [
        // One type, two attributes.
        "A AS x ; A AS y FILTER y[u = x.v]",
        // Not connected / not covered.
        "A AS a ; B AS b ; C AS c FILTER b[k = a.k]",
        "A AS a ; B AS b ; C AS c ; D AS d FILTER b[k = a.k] AND d[k = c.k]",
        // Under OR.
        "A AS a ; B AS b FILTER b[k = a.k] OR b[v = 1]",
        "A AS a ; B AS b FILTER b[k = a.k OR v = 1]",
        "A AS a ; B AS b FILTER b[NOT (k != a.k)]",
        // A filter of a sub-formula does not constrain the rest.
        "(A AS a ; B AS b FILTER b[k = a.k]) ; C AS c",
        // Looks at unmarked events.
        "A AS a : B AS b FILTER b[k = a.k]",
        "A AS a ; NOT(C) ; B AS b FILTER b[k = a.k]",
        "(A AS a ; B AS b):+ FILTER b[k = a.k]",
        "A AS a ; B AS b FILTER b[k = a.k] CONSUME BY PARTITION",
        // Self-equality: no edge.
        "(A AS a)+ FILTER a[k = a.k]",
        // An anchor some valuations leave empty.
        "A AS a ; (B AS b OR C AS c) FILTER b[k = a.k] AND c[k = a.k]",
        // ... which would disconnect `d` from `a` in the valuations through C.
        "A AS a ; (B AS b OR C AS c) ; D AS d FILTER b[k = a.k] AND b[d.k = k] AND c[k = a.k]",
        // Only comparisons other than `=` between attributes.
        "A AS a ; B AS b FILTER b[k > a.k]",
        "A AS a ; B AS b FILTER b[k + 1 = a.k]",
    ] {
        assert_eq!(routed_by(q), Vec::<(String, String)>::new(), "{q}");
    }
    let strict = CompiledQuery::compile(
        "SELECT STRICT * FROM S WHERE A AS a ; B AS b FILTER b[k = a.k]",
        None,
        CompileOptions::default(),
    );
    // STRICT asks for contiguity in the whole stream, which routing by key would change:
    // it keeps the residual test (STRICT commutes with it) and is not routed.
    let strict = strict.expect("STRICT with filters between events compiles");
    assert!(strict.facts().routed_by.is_empty());
    assert_eq!(strict.plan.residuals.len(), 1);
}

#[test]
fn a_conflicting_equality_stays_a_residual_test() {
    // `country` would give LOGIN a second attribute: routed by user, country tested.
    let q = compile("LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND country = a.country]");
    assert_eq!(q.facts().routed_by, pairs(&[("LOGIN", "user")]));
    assert_eq!(q.plan.residuals.len(), 1);
}

#[test]
fn next_last_and_max_are_routed_and_choose_inside_the_window() {
    use ceql_syntax::ast::Strategy;
    for (s, strategy) in [("NEXT", Strategy::Next), ("LAST", Strategy::Last), ("MAX", Strategy::Max)] {
        // With a window: routed, and the strategy chooses among the key's valuations
        // inside the window (docs/language.md#s3-6a), on the residual path with nothing
        // left to test.
        let text =
            format!("SELECT {s} * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 10 EVENTS");
        let q = CompiledQuery::compile(&text, None, CompileOptions::default()).unwrap();
        assert_eq!(q.facts().routed_by, pairs(&[("LOGIN", "user")]), "{text}");
        assert!(q.plan.residuals.is_empty(), "{text}");
        assert_eq!(q.residual.as_ref().and_then(|r| r.select), Some(strategy), "{text}");
        // Without a window both orders agree: the strategy automata choose.
        let text = format!("SELECT {s} * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]");
        let q = CompiledQuery::compile(&text, None, CompileOptions::default()).unwrap();
        assert_eq!(q.facts().routed_by, pairs(&[("LOGIN", "user")]), "{text}");
        assert!(q.residual.is_none(), "{text}");
        // A residual test left: routed, and the strategy chooses among the passing
        // valuations.
        let text = format!("SELECT {s} * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND v > a.v]");
        let q = CompiledQuery::compile(&text, None, CompileOptions::default()).unwrap();
        assert_eq!(q.facts().routed_by, pairs(&[("LOGIN", "user")]), "{text}");
        assert_eq!(q.residual.as_ref().and_then(|r| r.select), Some(strategy), "{text}");
        // compat_ignore_strategy evaluates the strategy as ALL: the automaton path.
        let text =
            format!("SELECT {s} * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 10 EVENTS");
        let opts = CompileOptions { compat_ignore_strategy: true };
        assert!(CompiledQuery::compile(&text, None, opts).unwrap().residual.is_none(), "{text}");
    }
    // STRICT looks at unmarked events.
    let text = "SELECT STRICT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 10 EVENTS";
    let q = CompiledQuery::compile(text, None, CompileOptions::default()).unwrap();
    assert!(q.facts().routed_by.is_empty(), "{text}");
}

#[test]
fn a_preferred_valuation_outside_the_window_hides_nothing() {
    // The minimal case of the matches routed NEXT lost on 2026-11-26 (docs/language.md#s3-4b,
    // *Strategies*). Over A(k=1) A(k=1) B(k=1) the valuations ending at 2 are {0,1,2},
    // {0,2} and {1,2}; every strategy prefers {0,1,2} (NEXT: min of the difference with
    // {0,2} is 1, with {1,2} is 0, both in it; LAST: max of the difference with {1,2} is
    // 0, in it, and {1,2} beats {0,2}; MAX: it contains both). With `WITHIN 1 EVENTS` only
    // [1,2]{1,2} is in the window, and the window comes first: that is the answer.
    let ev = |t: &'static str| (t, vec![("k", I(1))]);
    let stream = [ev("A"), ev("A"), ev("B")];
    for s in ["NEXT", "LAST", "MAX", "ALL"] {
        let text = format!("SELECT {s} * FROM S WHERE (A AS a)+ ; B AS b FILTER b[k = a.k] WITHIN 1 EVENTS");
        assert_eq!(run_query(&text, &stream).unwrap(), [(1, 2, vec![1, 2])], "{text}");
    }
    // Keys of other values in between, and keyless events: routed by 1 = 1.0 and
    // 0 = -0.0; NaN, NULL and an absent key take a position and belong to no key.
    let k = |t: &'static str, v: ValueRef<'static>| (t, vec![("k", v)]);
    let stream = [
        k("A", F(1.0)),
        ("B", vec![]),
        k("A", F(-0.0)),
        k("A", I(1)),
        k("B", F(-0.0)),
        k("A", F(f64::NAN)),
        k("B", N),
        k("C", I(1)),
        k("B", F(2.0)),
    ];
    // Ending at 4: a = 2 only. Ending at 7: a = 0 (7 - 0 > 6, outside) or 3: [3,7].
    let text = "SELECT NEXT * FROM S WHERE A AS a ; (B AS b OR C AS b) FILTER a[k = b.k] WITHIN 6 EVENTS";
    assert_eq!(run_query(text, &stream).unwrap(), [(2, 4, vec![2, 4]), (3, 7, vec![3, 7])]);
}

#[test]
fn keys_follow_value_equality() {
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]";
    // 1 = 1.0 and -0.0 = 0 are TRUE; NaN and NULL are never equal; 1.5 is not 1.
    let stream = [
        login(I(1)),
        login(F(1.0)),
        login(F(-0.0)),
        login(I(0)),
        login(F(f64::NAN)),
        login(F(f64::NAN)),
        login(N),
        login(N),
        login(F(1.5)),
        login(S("1")),
    ];
    // The string "1" arrives while numbers are inside the (unbounded) window.
    let e = run(q, &stream).unwrap_err();
    assert!(e.starts_with("user: cannot compare a string with a number"), "{e}");
    assert_eq!(run(q, &stream[..9]).unwrap(), [(0, 1, vec![0, 1]), (2, 3, vec![2, 3])]);
}

#[test]
fn kinds_may_change_once_the_window_has_moved_on() {
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 1 EVENTS";
    let stream = [login(I(1)), login(I(1)), login(N), login(N), login(S("x")), login(S("x"))];
    assert_eq!(run(q, &stream).unwrap(), [(0, 1, vec![0, 1]), (4, 5, vec![4, 5])]);
}

#[test]
fn the_kind_check_holds_a_partition_while_its_event_is_inside_the_window() {
    // At position 2 the event at 0 has left the window (2 - 0 > 1): no valuation pairs
    // them, and ALL keeps no strategy state, so the string meets nothing it is compared
    // with (docs/language.md#s3-4b). At position 1 it does.
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 1 EVENTS";
    assert_eq!(run(q, &[login(I(7)), login(N), login(S("7"))]).unwrap(), []);
    let e = run(q, &[login(I(7)), login(S("7"))]).unwrap_err();
    assert!(e.starts_with("user: cannot compare a string with a number"), "{e}");
}

#[test]
fn a_nan_is_a_number_to_the_kind_check() {
    // NaN has no key, but `=` between it and a string is a type error, as the residual
    // test would raise (docs/language.md#s3-4): in either order.
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]";
    for stream in [[login(F(f64::NAN)), login(S("x"))], [login(S("x")), login(F(f64::NAN))]] {
        let e = run(q, &stream).unwrap_err();
        assert!(e.starts_with("user: cannot compare a "), "{e}");
    }
    assert_eq!(run(q, &[login(F(f64::NAN)), login(I(1)), login(F(1.0))]).unwrap(), [(1, 2, vec![1, 2])]);
    // Once the NaN has left the window, a string is compared with nothing.
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 1 EVENTS";
    assert_eq!(run(q, &[login(F(f64::NAN)), login(N), login(S("x"))]).unwrap(), []);
    assert!(run(q, &[login(F(f64::NAN)), login(S("x"))]).is_err());
}

#[test]
fn a_restored_evaluation_remembers_the_last_nan() {
    let text = "SELECT * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]";
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).unwrap());
    let mut rt = Runtime::new(query.clone(), RuntimeOptions::default());
    let names = rt.attribute_names().to_vec();
    let row = |v: ValueRef<'static>| -> Vec<ValueRef<'static>> {
        names.iter().map(|n| if n == "user" { v } else { ValueRef::Absent }).collect()
    };
    let mut out = MatchBuffer::new();
    rt.push(None, "LOGIN", &row(F(f64::NAN)), &mut out).unwrap();
    let mut restored = Runtime::restore(query, &rt.snapshot()).unwrap();
    assert!(restored.push(None, "LOGIN", &row(S("x")), &mut out).is_err());
}

#[test]
fn a_large_double_is_refused() {
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user]";
    // 2^53 + 1 as an integer equals the double 2^53 under `=`, 2^53 as an integer too.
    let e = run(q, &[login(I((1 << 53) + 1)), login(F(9_007_199_254_740_992.0))]).unwrap_err();
    assert!(e.starts_with("user: cannot route by the double"), "{e}");
    // Large integers alone are exact keys.
    let stream = [login(I((1 << 53) + 1)), login(I(1 << 53)), login(I((1 << 53) + 1))];
    assert_eq!(run(q, &stream).unwrap(), [(0, 2, vec![0, 2])]);
}

#[test]
fn routing_with_partition_by_is_a_tuple_key() {
    let q = "A AS a ; B AS b FILTER b[k = a.k] PARTITION BY [p]";
    assert_eq!(routed_by(q), pairs(&[("A", "k"), ("B", "k")]));
    let ev = |t: &'static str, k: i64, p: i64| (t, vec![("k", I(k)), ("p", I(p))]);
    let stream = [ev("A", 1, 1), ev("A", 1, 2), ev("B", 1, 2), ev("B", 2, 2), ev("B", 1, 1)];
    assert_eq!(run(q, &stream).unwrap(), [(1, 2, vec![1, 2]), (0, 4, vec![0, 4])]);
}
