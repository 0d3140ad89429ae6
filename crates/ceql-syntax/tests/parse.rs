//! Parser tests: the bundled stock queries, the precedence consequences of reference
//! docs/language.md#s2-3, lexical details, and error locations.

use ceql_syntax::{parse_query_text, parse_schema, query_to_string};

fn formula(text: &str) -> String {
    let q = parse_query_text(text).unwrap_or_else(|d| panic!("{}", d.render(text, "query")));
    let printed = query_to_string(&q.query);
    let start = printed.find(" WHERE ").unwrap() + 7;
    printed[start..].to_string()
}

fn error(text: &str) -> (String, usize, usize, String) {
    let d = parse_query_text(text).expect_err("query should not parse");
    let loc = d.location(text);
    (d.code.to_string(), loc.line, loc.column, d.message)
}

#[test]
fn every_bundled_stock_query_parses() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/stock/queries");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        parse_query_text(&text).unwrap_or_else(|d| panic!("{}: {}", path.display(), d.render(&text, "query")));
        n += 1;
    }
    assert_eq!(n, 37);
}

#[test]
fn cel_precedence_matches_reference() {
    let w = |f: &str| formula(&format!("SELECT * FROM S WHERE {f}"));
    assert_eq!(w("A ; B OR C"), "((A ; B) OR C)");
    assert_eq!(w("A ; B AS x"), "(A ; (B AS x))");
    assert_eq!(w("A OR B AS x"), "(A OR (B AS x))");
    assert_eq!(w("A ; B FILTER A[v > 1]"), "((A ; B) FILTER A[v > 1])");
    assert_eq!(w("A FILTER A[v > 1] ; B"), "((A FILTER A[v > 1]) ; B)");
    assert_eq!(w("A : B ; C"), "(A : (B ; C))");
    assert_eq!(w("A ; B ; C"), "((A ; B) ; C)");
    assert_eq!(w("A ; B+ ; C"), "((A ; (B)+) ; C)");
    assert_eq!(w("A:+ OR B"), "((A):+ OR B)");
    assert_eq!(w("A FILTER A[v > 1] OR B"), "((A FILTER A[v > 1]) OR B)");
    assert_eq!(w("A FILTER A[v > 1] OR B[v < 2]"), "(A FILTER (A[v > 1] OR B[v < 2]))");
}

#[test]
fn predicate_precedence_matches_reference() {
    assert_eq!(
        formula("SELECT * FROM S WHERE A FILTER A[NOT v > 5 AND v > 2 OR v = 9]"),
        "(A FILTER A[(((NOT v > 5) AND v > 2) OR v = 9)])"
    );
    assert_eq!(
        formula("SELECT * FROM S WHERE A FILTER A[-v - 2 * 3 % 4 > 1]"),
        "(A FILTER A[((-v) - ((2 * 3) % 4)) > 1])"
    );
}

#[test]
fn keywords_are_case_insensitive_and_comments_are_skipped() {
    let a = formula("select all * from S where A as x ; B filter x[v > 1] within 5 events -- trailing");
    let b = formula("SELECT ALL * FROM S WHERE /* block */ A AS x ; B FILTER x[v > 1] WITHIN 5 EVENTS");
    assert_eq!(a, b);
    assert!(parse_query_text("SELECT * FROM S WHERE A /* never closed").is_ok());
}

#[test]
fn quoted_identifiers_and_both_string_styles() {
    let q =
        parse_query_text("SELECT * FROM S WHERE `a``b` FILTER `a``b`[name = \"MS\"\"FT\" OR name = 'it''s']").unwrap();
    assert_eq!(
        query_to_string(&q.query),
        "SELECT * FROM S WHERE (`a``b` FILTER `a``b`[(name = 'MS\"FT' OR name = 'it''s')])"
    );
}

#[test]
fn windows_and_clauses() {
    let q = parse_query_text(
        "SELECT NEXT a, S>B[x, y] FROM S, T WHERE A AS a ; S>B PARTITION BY [k, j], [v] WITHIN 1.5 hours 30 ms CONSUME BY PARTITION LIMIT 3",
    )
    .unwrap();
    assert_eq!(
        query_to_string(&q.query),
        "SELECT NEXT a, S>B[x, y] FROM S, T WHERE ((A AS a) ; S>B) PARTITION BY [k, j], [v] WITHIN 1.5 HOURS 30 MILLISECONDS CONSUME BY PARTITION LIMIT 3"
    );
    let q = parse_query_text("SELECT * FROM S WHERE A WITHIN 10000 [stock_time]").unwrap();
    assert!(query_to_string(&q.query).ends_with("WITHIN 10000 [stock_time]"));
}

#[test]
fn errors_carry_code_line_column_and_expectations() {
    let (code, line, col, msg) = error("SELECT * FROM S WHERE A ; ; B");
    assert_eq!((code.as_str(), line, col), ("E0100", 1, 27));
    assert_eq!(msg, "expected event type, `(` or NOT, found `;`");

    let (code, line, col, _) = error("SELECT *\nFROM S\nWHERE A FILTER A[v > ]");
    assert_eq!((code.as_str(), line, col), ("E0100", 3, 22));

    let (code, _, col, _) = error("SELECT * FROM S WHERE A LIMIT 99999999999999999999");
    assert_eq!((code.as_str(), col), ("E0101", 31));

    // Exactly one query per text.
    assert_eq!(error("").0, "E0100");
    assert_eq!(error("SELECT * FROM S WHERE A SELECT * FROM S WHERE B").0, "E0100");
    // Reserved words are not identifiers.
    assert_eq!(error("SELECT * FROM S WHERE A AS within").0, "E0100");
}

#[test]
fn declarations_parse() {
    let decls = parse_schema(
        "CREATE STREAM Stock { EVENT BUY { name: string, price: double, ts: primary_time }, EVENT SELL { } }",
    )
    .unwrap();
    assert_eq!(decls[0].name.name, "Stock");
    assert_eq!(decls[0].events.len(), 2);
    assert_eq!(decls[0].events[0].attrs[2].ty.name, "primary_time");
    let t = parse_query_text("CREATE STREAM S { EVENT A { v: int } } SELECT * FROM S WHERE A").unwrap();
    assert_eq!(t.streams.len(), 1);
}

#[test]
fn absent_is_a_contextual_keyword() {
    let w = |f: &str| formula(&format!("SELECT * FROM S WHERE {f}"));
    assert_eq!(w("A ; ABSENT(B) ; C"), "((A ; ABSENT(B)) ; C)");
    assert_eq!(w("A ; absent ( B FILTER B[v > 1] ) ; C"), "((A ; ABSENT(B FILTER B[v > 1])) ; C)");
    // without a parenthesis it is a name
    assert_eq!(w("ABSENT ; absent AS x"), "(ABSENT ; (absent AS x))");
    assert_eq!(w("A FILTER A[absent > 1]"), "(A FILTER A[absent > 1])");
}

#[test]
fn conjunction_binds_between_contiguity_and_or() {
    // docs/language.md#s2-3 and #s3-3c: `;` 50, `:` 40, AND 35, OR 30
    let w = |f: &str| formula(&format!("SELECT * FROM S WHERE {f}"));
    assert_eq!(w("A ; B AND C"), "((A ; B) AND C)");
    assert_eq!(w("A AND B : C"), "(A AND (B : C))");
    assert_eq!(w("A : B AND C"), "((A : B) AND C)");
    assert_eq!(w("A AND B OR C"), "((A AND B) OR C)");
    assert_eq!(w("A OR B AND C"), "(A OR (B AND C))");
    assert_eq!(w("A AND B AND C"), "((A AND B) AND C)");
    assert_eq!(w("A AND B AS x"), "(A AND (B AS x))");
    assert_eq!(w("A and B+"), "(A AND (B)+)");
}

#[test]
fn and_after_filter_continues_the_filter_only_before_a_filter_term() {
    // docs/language.md#s3-3c remark 3
    let w = |f: &str| formula(&format!("SELECT * FROM S WHERE {f}"));
    assert_eq!(w("A AND B FILTER A[x > 1] AND B[y > 2]"), "((A AND B) FILTER (A[x > 1] AND B[y > 2]))");
    assert_eq!(w("A FILTER A[v > 1] AND B"), "((A FILTER A[v > 1]) AND B)");
    assert_eq!(w("A FILTER A[v > 1] AND (B ; C)"), "((A FILTER A[v > 1]) AND (B ; C))");
    assert_eq!(w("A FILTER A[v > 1] AND (B)"), "((A FILTER A[v > 1]) AND B)");
    assert_eq!(w("A FILTER A[v > 1] AND (B[v > 2] OR A[v < 0])"), "(A FILTER (A[v > 1] AND (B[v > 2] OR A[v < 0])))");
    assert_eq!(w("A FILTER A[v > 1] AND B FILTER B[v > 2]"), "(((A FILTER A[v > 1]) AND B) FILTER B[v > 2])");
    // AND inside NOT(...) is the filter's: the operand is one atom
    assert_eq!(w("NOT(A FILTER A[v > 1] AND A[v < 5]) AND B"), "(NOT(A FILTER (A[v > 1] AND A[v < 5])) AND B)");
    // a dangling AND lists the conjunction among the expected tokens
    let (code, _, _, message) = error("SELECT * FROM S WHERE A AND");
    assert_eq!(code, "E0100");
    assert!(message.contains("event type"), "{message}");
}

#[test]
fn absent_alternatives_and_the_filter_or_before_them() {
    // docs/language.md#s3-3a, "Alternatives": an OR after a FILTER continues the filter
    // only when a whole filter term follows it.
    let w = |f: &str| formula(&format!("SELECT * FROM S WHERE {f}"));
    assert_eq!(w("A ; ABSENT(B OR C) ; D"), "((A ; ABSENT(B OR C)) ; D)");
    assert_eq!(w("A ; ABSENT(B FILTER B[v > 1] OR C) ; D"), "((A ; ABSENT(B FILTER B[v > 1] OR C)) ; D)");
    assert_eq!(
        w("A ; ABSENT(B FILTER B[v > 1] OR B[v < 0]) ; D"),
        "((A ; ABSENT(B FILTER (B[v > 1] OR B[v < 0]))) ; D)"
    );
    assert_eq!(
        w("A ; ABSENT(B AS b FILTER b[v > 1] or S>C AS c or X) FOR 5 seconds"),
        "(A ; ABSENT(B AS b FILTER b[v > 1] OR S>C AS c OR X) FOR 5 SECONDS)"
    );
    // printed text reads back the same
    let printed = w("A ; ABSENT(B FILTER B[v > 1] OR C FILTER C[w < 2]) ; D");
    assert_eq!(w(&printed), printed);
    // a pattern is not an alternative: the caret's label says what ABSENT holds
    for text in ["SELECT * FROM S WHERE A ; ABSENT(B OR (C ; X)) ; D", "SELECT * FROM S WHERE A ; ABSENT(B ; C) ; D"] {
        let d = parse_query_text(text).expect_err("a pattern inside ABSENT");
        let rendered = d.render(text, "query");
        assert!(rendered.contains("ABSENT(...) holds one event"), "{rendered}");
    }
}

#[test]
fn a_parenthesised_alternative_after_a_filter_gets_the_absent_label() {
    // After a FILTER, `OR (` opens a filter term; the error comes on the alternative's
    // contents, and the label says what ABSENT holds.
    for text in [
        "SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1] OR (C)) ; D",
        "SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1] OR (C AS c FILTER c[v > 1])) ; D",
    ] {
        let d = parse_query_text(text).expect_err("a parenthesised alternative");
        let rendered = d.render(text, "query");
        assert!(rendered.contains("ABSENT(...) holds one event"), "{rendered}");
    }
    // A parenthesised filter term there is fine.
    assert!(parse_query_text("SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1] OR (B[v < 0])) ; D").is_ok());
}
