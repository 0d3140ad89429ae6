//! Property: for random CEL trees, printing with the *minimal* parentheses implied by
//! the precedence table of docs/language.md#s2-3 and parsing back yields the same tree.
//! The minimal printer below is written from the table, independently of the parser.

use ceql_syntax::parse_query_text;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum T {
    Atom(&'static str),
    As(Box<T>, &'static str),
    Plus(Box<T>),
    ContPlus(Box<T>),
    Filter(Box<T>),
    Seq(Box<T>, Box<T>),
    Cont(Box<T>, Box<T>),
    And(Box<T>, Box<T>),
    Or(Box<T>, Box<T>),
}

fn power(t: &T) -> u8 {
    match t {
        T::Atom(_) => 100,
        T::As(..) | T::Plus(_) | T::ContPlus(_) => 60,
        T::Seq(..) => 50,
        T::Cont(..) => 40,
        T::And(..) => 35,
        T::Or(..) => 30,
        T::Filter(_) => 20,
    }
}

/// Minimal rendering: a child is parenthesised only when the table requires it.
fn minimal(t: &T) -> String {
    let wrap = |c: &T, need: u8| if power(c) >= need { minimal(c) } else { format!("({})", minimal(c)) };
    match t {
        T::Atom(a) => a.to_string(),
        T::As(c, x) => format!("{} AS {x}", wrap(c, 60)),
        T::Plus(c) => format!("{}+", wrap(c, 60)),
        T::ContPlus(c) => format!("{}:+", wrap(c, 60)),
        T::Filter(c) => format!("{} FILTER A[v > 1]", wrap(c, 20)),
        T::Seq(a, b) => format!("{} ; {}", wrap(a, 50), wrap(b, 51)),
        T::Cont(a, b) => format!("{} : {}", wrap(a, 40), wrap(b, 41)),
        T::And(a, b) => format!("{} AND {}", wrap(a, 35), wrap(b, 36)),
        T::Or(a, b) => format!("{} OR {}", wrap(a, 30), wrap(b, 31)),
    }
}

/// Full rendering in the printer's format of `ceql_syntax::cel_to_string`.
fn full(t: &T) -> String {
    match t {
        T::Atom(a) => a.to_string(),
        T::As(c, x) => format!("({} AS {x})", full(c)),
        T::Plus(c) => format!("({})+", full(c)),
        T::ContPlus(c) => format!("({}):+", full(c)),
        T::Filter(c) => format!("({} FILTER A[v > 1])", full(c)),
        T::Seq(a, b) => format!("({} ; {})", full(a), full(b)),
        T::Cont(a, b) => format!("({} : {})", full(a), full(b)),
        T::And(a, b) => format!("({} AND {})", full(a), full(b)),
        T::Or(a, b) => format!("({} OR {})", full(a), full(b)),
    }
}

fn tree() -> impl Strategy<Value = T> {
    let leaf = prop_oneof![Just(T::Atom("A")), Just(T::Atom("B")), Just(T::Atom("C"))];
    leaf.prop_recursive(5, 40, 2, |inner| {
        prop_oneof![
            (inner.clone(), prop_oneof![Just("x"), Just("y")]).prop_map(|(c, x)| T::As(Box::new(c), x)),
            inner.clone().prop_map(|c| T::Plus(Box::new(c))),
            inner.clone().prop_map(|c| T::ContPlus(Box::new(c))),
            inner.clone().prop_map(|c| T::Filter(Box::new(c))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| T::Seq(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| T::Cont(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| T::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| T::Or(Box::new(a), Box::new(b))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn minimal_parentheses_parse_to_the_same_tree(t in tree()) {
        let text = format!("SELECT * FROM S WHERE {}", minimal(&t));
        let parsed = parse_query_text(&text).map_err(|d| TestCaseError::fail(d.render(&text, "q")))?;
        prop_assert_eq!(ceql_syntax::cel_to_string(&parsed.query.pattern), full(&t), "input: {}", text);
    }

    #[test]
    fn printing_is_a_fixed_point(t in tree()) {
        let text = format!("SELECT * FROM S WHERE {} WITHIN 3 EVENTS", minimal(&t));
        let once = ceql_syntax::query_to_string(&parse_query_text(&text).unwrap().query);
        let twice = ceql_syntax::query_to_string(&parse_query_text(&once).unwrap().query);
        prop_assert_eq!(once, twice);
    }
}
