//! Filters between events (docs/design/correlation.md): the oracle's hand-worked
//! examples (tests/test_oracle_correlation.py), whose expected outputs are derived
//! from the design's text, run through the engine.

use crate::output::MatchBuffer;
use crate::runtime::{Runtime, RuntimeOptions};
use crate::value::ValueRef;
use crate::{CompileOptions, CompiledQuery};
use std::sync::Arc;

type Event<'a> = (&'a str, Vec<(&'a str, ValueRef<'a>)>);

fn run(text: &str, events: &[Event<'_>]) -> Vec<(u64, u64, Vec<u64>)> {
    let text = format!("SELECT * FROM S WHERE {text}");
    let query = Arc::new(CompiledQuery::compile(&text, None, CompileOptions::default()).expect("query compiles"));
    let mut rt = Runtime::new(query, RuntimeOptions::default());
    let names = rt.attribute_names().to_vec();
    let mut out = MatchBuffer::new();
    for (ty, attrs) in events {
        let row: Vec<ValueRef<'_>> =
            names.iter().map(|n| attrs.iter().find(|(a, _)| a == n).map_or(ValueRef::Absent, |(_, v)| *v)).collect();
        rt.push(None, ty, &row, &mut out).expect("valid event");
    }
    let mut got: Vec<_> = out.iter().map(|m| (m.start, m.end, m.positions.to_vec())).collect();
    got.sort_by(|a, b| (a.1, a.0, &a.2).cmp(&(b.1, b.0, &b.2)));
    got
}

fn t<'a>(ty: &'a str, attrs: &[(&'a str, ValueRef<'a>)]) -> Event<'a> {
    (ty, attrs.to_vec())
}

use ValueRef::{Float as F, Int as I, Str as S};

#[test]
fn query_10_of_the_lazy_chain_paper() {
    let stream = [
        t("T", &[("name", S("MSFT")), ("price", F(10.0))]),
        t("T", &[("name", S("GOOG")), ("price", F(12.0))]),
        t("T", &[("name", S("MSFT")), ("price", F(13.0))]),
        t("T", &[("name", S("GOOG")), ("price", F(11.0))]),
        t("T", &[("name", S("AAPL")), ("price", F(14.0))]),
        t("T", &[("name", S("AAPL")), ("price", F(12.0))]),
    ];
    let q = "T AS a ; T AS b ; T AS c FILTER a[name = 'MSFT'] AND b[name = 'GOOG'] AND c[name = 'AAPL'] \
             AND a[price < b.price] AND b[price < c.price]";
    assert_eq!(run(q, &stream), [(0, 4, vec![0, 1, 4]), (0, 4, vec![0, 3, 4]), (0, 5, vec![0, 3, 5])]);
}

#[test]
fn equality_join_without_partition_by() {
    let stream = [
        t("LOGIN", &[("user", S("u1")), ("country", S("FR"))]),
        t("LOGIN", &[("user", S("u2")), ("country", S("DE"))]),
        t("LOGIN", &[("user", S("u1")), ("country", S("FR"))]),
        t("LOGIN", &[("user", S("u1")), ("country", S("US"))]),
        t("LOGIN", &[("user", S("u2")), ("country", S("DE"))]),
    ];
    let q = "LOGIN AS a ; LOGIN AS b FILTER b[user = a.user AND country != a.country]";
    assert_eq!(run(q, &stream), [(0, 3, vec![0, 3]), (2, 3, vec![2, 3])]);
}

#[test]
fn an_iteration_compared_with_an_outer_variable() {
    let stream = [
        t("SELL", &[("price", I(10))]),
        t("BUY", &[("price", I(11))]),
        t("BUY", &[("price", I(9))]),
        t("BUY", &[("price", I(12))]),
        t("SELL", &[("price", I(8))]),
        t("SELL", &[("price", I(10))]),
    ];
    let q = "SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER b[price > s.price] AND e[price < s.price]";
    assert_eq!(run(q, &stream), [(0, 4, vec![0, 1, 3, 4]), (0, 4, vec![0, 1, 4]), (0, 4, vec![0, 3, 4])]);
}

#[test]
fn prev_gives_the_strictly_rising_runs() {
    let stream: Vec<Event<'_>> = [1, 3, 2, 4].iter().map(|&p| t("BUY", &[("price", I(p))])).collect();
    let expected = [
        (0, 0, vec![0]),
        (0, 1, vec![0, 1]),
        (1, 1, vec![1]),
        (0, 2, vec![0, 2]),
        (2, 2, vec![2]),
        (0, 3, vec![0, 1, 3]),
        (0, 3, vec![0, 2, 3]),
        (0, 3, vec![0, 3]),
        (1, 3, vec![1, 3]),
        (2, 3, vec![2, 3]),
        (3, 3, vec![3]),
    ];
    assert_eq!(run("(BUY AS b)+ FILTER b[price > PREV(price)]", &stream), expected);
}

#[test]
fn aggregate_filter() {
    // b = {1}: avg 2 < 5 passes; {2}: avg 6 fails; {1, 2}: avg 4 passes.
    let stream = [t("A", &[("v", I(0))]), t("B", &[("v", I(2))]), t("B", &[("v", I(6))]), t("C", &[("v", I(5))])];
    let q = "A AS a ; (B AS b)+ ; C AS c FILTER c[v > avg(b.v)]";
    assert_eq!(run(q, &stream), [(0, 3, vec![0, 1, 2, 3]), (0, 3, vec![0, 1, 3])]);
}

#[test]
fn outside_the_iteration_every_pair_is_compared() {
    let stream = [t("A", &[("v", I(1))]), t("B", &[("v", I(2))]), t("A", &[("v", I(5))]), t("B", &[("v", I(6))])];
    assert_eq!(
        run("(A AS a ; B AS b)+ FILTER b[v > a.v]", &stream),
        [(0, 1, vec![0, 1]), (0, 3, vec![0, 3]), (2, 3, vec![2, 3])]
    );
}

#[test]
fn a_type_error_between_two_events_names_both_fields() {
    let text = "SELECT * FROM S WHERE A AS a ; B AS b FILTER b[s > a.v]";
    let query = Arc::new(CompiledQuery::compile(text, None, CompileOptions::default()).unwrap());
    let mut rt = Runtime::new(query, RuntimeOptions::default());
    let names = rt.attribute_names().to_vec();
    let row = |pairs: &[(&str, ValueRef<'static>)]| -> Vec<ValueRef<'static>> {
        names.iter().map(|n| pairs.iter().find(|(a, _)| a == n).map_or(ValueRef::Absent, |(_, v)| *v)).collect()
    };
    let mut out = MatchBuffer::new();
    rt.push(None, "A", &row(&[("v", I(1))]), &mut out).unwrap();
    let e = rt.push(None, "B", &row(&[("s", S("x"))]), &mut out).unwrap_err();
    assert!(e.message.contains("s and a.v"), "{}", e.message);
}
