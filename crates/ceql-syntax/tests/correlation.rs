//! The terms that read other events (docs/design/correlation.md, section 1): `y.attr`,
//! `PREV(attr)`, aggregates in filters, and measures in the SELECT list. Each query is
//! printed back and parsed again (the round trip must be stable).

use ceql_syntax::ast::{AggFunc, SelectList};
use ceql_syntax::{parse_query_text, query_to_string};

fn printed(text: &str) -> String {
    let q = parse_query_text(text).unwrap_or_else(|d| panic!("{}", d.render(text, "query")));
    let once = query_to_string(&q.query);
    let again = parse_query_text(&once).unwrap_or_else(|d| panic!("{}", d.render(&once, "query")));
    assert_eq!(query_to_string(&again.query), once, "round trip of {text}");
    once
}

#[test]
fn references_prev_and_aggregates_in_filters() {
    let q = printed(
        "SELECT * FROM S WHERE A AS a ; (B AS b)+ FILTER b[price > a.price AND price > PREV(price)] \
         AND a[v < last(b.v) + count(b)] AND a[MAX(b.v) >= Min ( b . v )]",
    );
    assert!(q.contains("b[(price > a.price AND price > PREV(price))]"), "{q}");
    assert!(q.contains("a[v < (last(b.v) + count(b))]"), "{q}");
    assert!(q.contains("a[max(b.v) >= min(b.v)]"), "{q}");
}

#[test]
fn aggregate_names_are_attributes_when_no_parenthesis_follows() {
    // `count`, `first` and `prev` stay attribute names; `max` and `last` are keywords.
    let q = printed("SELECT * FROM S WHERE A FILTER A[count > 1 AND first = prev]");
    assert!(q.contains("A[(count > 1 AND first = prev)]"), "{q}");
    assert!(parse_query_text("SELECT * FROM S WHERE A FILTER A[max > 1]").is_err());
}

#[test]
fn measures_in_the_select_list() {
    let t = parse_query_text("SELECT a, count(b) AS n, avg(b.price) AS p FROM S WHERE A AS a ; B AS b").unwrap();
    assert!(matches!(&t.query.select, SelectList::Items(items) if items.len() == 1));
    let m: Vec<(AggFunc, &str)> = t.query.measures.iter().map(|m| (m.agg.func, m.name.name.as_str())).collect();
    assert_eq!(m, [(AggFunc::Count, "n"), (AggFunc::Avg, "p")]);
    let star = parse_query_text("SELECT *, sum(b.v) AS s FROM S WHERE B AS b").unwrap();
    assert!(matches!(star.query.select, SelectList::Star) && star.query.measures.len() == 1);
    // Measures only: no variable is listed, so no position is reported (as NONE).
    let only = parse_query_text("SELECT count(b) AS n FROM S WHERE B AS b").unwrap();
    assert!(matches!(only.query.select, SelectList::None(_)) && only.query.measures.len() == 1);
    assert_eq!(printed("SELECT *, count(b) AS n FROM S WHERE B AS b"), "SELECT *, count(b) AS n FROM S WHERE (B AS b)");
    printed("SELECT a, max(b.v) AS top, last(b.v) AS l FROM S WHERE A AS a ; B AS b");
    // `max(` and `last(` right after SELECT start a measure, not a strategy.
    for text in ["SELECT last(b.v) AS l FROM S WHERE B AS b", "SELECT MAX(b.v) AS m, b FROM S WHERE B AS b"] {
        let t = parse_query_text(text).unwrap();
        assert_eq!(t.query.strategy, ceql_syntax::ast::Strategy::All, "{text}");
        assert_eq!(t.query.measures.len(), 1, "{text}");
    }
    let t = parse_query_text("SELECT LAST last(b.v) AS l FROM S WHERE B AS b").unwrap();
    assert_eq!(t.query.strategy, ceql_syntax::ast::Strategy::Last);
}

#[test]
fn malformed_aggregates_and_select_lists_are_syntax_errors() {
    for text in [
        "SELECT * FROM S WHERE A AS a FILTER a[v > count(a.v)]",
        "SELECT * FROM S WHERE A AS a FILTER a[v > sum(a)]",
        "SELECT *, a FROM S WHERE A AS a",
        "SELECT count(b) FROM S WHERE B AS b",
    ] {
        let d = parse_query_text(text).expect_err(text);
        assert_eq!(d.code, "E0100", "{text}");
    }
}

#[test]
fn absent_event_named() {
    // `ABSENT(B AS b FILTER b[...])`: the absent event's own name (docs/language.md#s3-3a).
    let q = printed("SELECT * FROM S WHERE A AS a ; ABSENT(B AS b FILTER b[x < c.y]) ; C AS c");
    assert!(q.contains("ABSENT(B AS b FILTER b[x < c.y])"), "{q}");
    assert!(parse_query_text("SELECT * FROM S WHERE A ; NOT(B AS b) ; C").is_err());
}
