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

/// Runs `text` over `events`; the first event error ends the run.
fn run(text: &str, events: &[Event<'_>]) -> Result<Vec<(u64, u64, Vec<u64>)>, String> {
    let text = format!("SELECT * FROM S WHERE {text}");
    let query = Arc::new(CompiledQuery::compile(&text, None, CompileOptions::default()).expect("query compiles"));
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
fn strategies_apply_once_nothing_is_left_to_test() {
    for s in ["NEXT", "LAST", "MAX"] {
        let text =
            format!("SELECT {s} * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user] WITHIN 10 EVENTS");
        let q = CompiledQuery::compile(&text, None, CompileOptions::default()).unwrap();
        assert!(q.residual.is_none(), "{text}");
        let text = format!("SELECT {s} * FROM S WHERE LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND v > a.v]");
        // A residual test is left: routed, and the strategy chooses among the valuations
        // that pass it (docs/language.md#s3-6a).
        let q = CompiledQuery::compile(&text, None, CompileOptions::default()).unwrap();
        assert!(q.residual.is_some(), "{text}");
        assert_eq!(q.facts().routed_by, pairs(&[("LOGIN", "user")]), "{text}");
    }
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
