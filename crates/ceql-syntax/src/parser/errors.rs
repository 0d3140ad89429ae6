//! Turns pest's parse errors into `E0100` diagnostics that name the expected tokens
//! in CEQL terms and show the token that was found.

use super::Rule;
use crate::diagnostic::Diagnostic;
use crate::span::Span;
use pest::error::{ErrorVariant, InputLocation};

/// Converts a pest error into an `E0100` diagnostic.
pub(crate) fn from_pest(source: &str, err: pest::error::Error<Rule>) -> Diagnostic {
    let pos = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let pos = skip_trivia(source, pos);
    let found = token_at(source, pos);
    let mut expected: Vec<&'static str> = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => {
            positives.iter().flat_map(|r| describe(*r).iter().copied()).collect()
        }
        ErrorVariant::CustomError { .. } => Vec::new(),
    };
    expected.sort_unstable();
    expected.dedup();
    // Keep the most informative order: names first, then symbols, then keywords.
    expected.sort_by_key(|e| (!e.contains(' ') && !e.starts_with('`'), e.starts_with('`'), *e));
    let found_text = if found.is_empty() { "end of query".to_string() } else { format!("`{found}`") };
    let message = match expected.len() {
        0 => format!("unexpected {found_text}"),
        _ => format!("expected {}, found {found_text}", join_alternatives(&expected)),
    };
    let span = Span::new(pos, pos + found.len());
    Diagnostic::error("E0100", message, span).with_label(label_for(source, pos, found, &expected))
}

/// The text of the `ABSENT(` operand that is still open at `pos`, upper-cased (a heuristic
/// for the label: the last `ABSENT` before `pos`, followed by `(`, whose parentheses are
/// still open); `None` outside one.
fn open_absent(source: &str, pos: usize) -> Option<String> {
    let before = source[..pos].to_ascii_uppercase();
    let at = before.rfind("ABSENT")?;
    let rest = &before[at + "ABSENT".len()..];
    let depth = rest.chars().fold(0i32, |d, c| d + i32::from(c == '(') - i32::from(c == ')'));
    (rest.trim_start().starts_with('(') && depth > 0).then(|| rest.to_string())
}

/// Whether an operand text has `OR (`: after a filter, `(` opens a filter term, so a
/// parenthesised alternative fails there, on its contents.
fn has_or_paren(operand: &str) -> bool {
    let words: Vec<&str> = operand.split_whitespace().collect();
    words.windows(2).any(|w| w[0] == "OR" && w[1].starts_with('(')) || operand.contains("OR(")
}

/// Words that open a call: the aggregates and `PREV` (docs/language.md#s3-4a).
const CALLS: [&str; 8] = ["COUNT", "SUM", "AVG", "MIN", "MAX", "FIRST", "LAST", "PREV"];

/// The caret's label: what the user most likely meant, when the context says it, else
/// "unexpected token".
///
/// * A clause keyword found where the parser was between clauses (it expected the end of
///   the query or another clause) is a clause out of order (a user from SQL or FlinkCEP
///   may write WITHIN first): the label gives the order (docs/language.md#s2-2).
/// * A reserved word where a name was expected (an attribute `minute`, a variable
///   `last`), or an aggregate's name not followed by `(` (a price field named `last`):
///   backquotes make it a name.
/// * `*`, `?` or `{` after a pattern: CEQL has `+` only; the patterns guide rewrites the
///   others.
/// * A word where a time unit was expected: the units.
/// * `count(a.v)`, `PREV(b.v)`, `avg(a)`: what each call takes.
fn label_for(source: &str, pos: usize, found: &str, expected: &[&str]) -> String {
    const CLAUSES: [&str; 6] = ["FROM", "WHERE", "PARTITION", "WITHIN", "CONSUME", "LIMIT"];
    let is = |words: &[&str], w: &str| words.iter().any(|k| k.eq_ignore_ascii_case(w));
    let expects = |what: &str| expected.contains(&what);
    let between_clauses = expects("end of query") || expected.iter().any(|e| CLAUSES.contains(e));
    let (call, opened) = call_before(source, pos);
    if between_clauses && is(&CLAUSES, found) {
        "clauses come in this order: SELECT, FROM, WHERE (with its FILTERs), PARTITION BY, WITHIN, CONSUME BY, LIMIT"
            .into()
    } else if crate::display::is_reserved(found)
        && ["name", "predicate", "expression", "variable"].iter().any(|w| expects(w))
    {
        format!("`{found}` is a reserved word: write `` `{found}` `` (in backquotes) to use it as a name")
    } else if expected == ["`(`"] && !opened && is(&CALLS, call) {
        format!("`{call}` is a call here, `{call}(...)`; for an attribute named `{call}`, write `` `{call}` ``")
    } else if matches!(found, "*" | "?" | "{") && expects("`+`") {
        "CEQL has no `*`, `?` or `{n,m}`: `B+` is one or more; write `?` and `{n,m}` with OR or a count filter \
         (docs/guide/patterns.md#quantifiers)"
            .into()
    } else if expects("time unit") && found.starts_with(|c: char| c.is_ascii_alphabetic()) {
        "time units: MILLISECOND(S) or MS, SECOND(S), MINUTE(S), HOUR(S), DAY(S)".into()
    } else if found == "." && opened && call.eq_ignore_ascii_case("COUNT") {
        "count takes a variable: `count(b)` counts the events `b` captured".into()
    } else if found == "." && opened && call.eq_ignore_ascii_case("PREV") {
        "PREV takes an attribute of the filtered event: `b[v > PREV(v)]`".into()
    } else if found == ")" && opened && is(&CALLS[1..7], call) {
        format!("`{call}` takes an attribute of a variable: `{call}(b.price)`")
    } else if open_absent(source, pos).is_some_and(|operand| {
        matches!(found, "(" | ";" | ":" | "+" | ":+")
            || found.eq_ignore_ascii_case("AND")
            || (expects("`[`") && has_or_paren(&operand))
    }) {
        "ABSENT(...) holds one event, a type with its filters, or alternatives of one event each \
         (`ABSENT(B OR C FILTER C[v > 1])`), not a pattern (docs/language.md#s3-3a)"
            .into()
    } else {
        "unexpected token".into()
    }
}

/// The word of the call the caret is in or after: `(count, true)` for `count(a` (the
/// caret inside its parentheses), `(last, false)` for `last` right before the caret.
fn call_before(source: &str, pos: usize) -> (&str, bool) {
    let head = source[..pos].trim_end();
    let word_end = |t: &str| t.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let last = &head[word_end(head)..];
    // Inside `f(x`: the word before the last `(`, with only a name between.
    let inner = head.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_').trim_end();
    if let Some(before) = inner.strip_suffix('(') {
        let before = before.trim_end();
        return (&before[word_end(before)..], true);
    }
    (last, false)
}

fn join_alternatives(items: &[&str]) -> String {
    match items {
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
        [] => String::new(),
    }
}

/// pest reports positions before whitespace/comments were skipped in some cases.
fn skip_trivia(source: &str, mut pos: usize) -> usize {
    loop {
        let rest = &source[pos.min(source.len())..];
        let trimmed = rest.trim_start_matches([' ', '\t', '\r', '\n', '\u{0B}']);
        pos += rest.len() - trimmed.len();
        if trimmed.starts_with("--") {
            pos += trimmed.find('\n').unwrap_or(trimmed.len());
        } else if let Some(body) = trimmed.strip_prefix("/*") {
            pos += body.find("*/").map_or(trimmed.len(), |i| i + 4);
        } else {
            return pos.min(source.len());
        }
    }
}

/// The token starting at `pos`: a word, a number, a quoted literal or one symbol.
fn token_at(source: &str, pos: usize) -> &str {
    let rest = &source[pos..];
    let mut chars = rest.char_indices();
    let Some((_, first)) = chars.next() else { return "" };
    let end = if first.is_alphanumeric() || first == '_' {
        rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len())
    } else if first == '\'' || first == '"' || first == '`' {
        rest[1..].find(first).map_or(rest.len(), |i| i + 2)
    } else {
        const TWO: [&str; 8] = [":+", "<=", ">=", "==", "!=", "<>", "..", "--"];
        if TWO.iter().any(|t| rest.starts_with(t)) {
            2
        } else {
            first.len_utf8()
        }
    };
    &rest[..end]
}

/// How a grammar rule is named in an "expected ..." list; empty hides helper rules.
fn describe(rule: Rule) -> &'static [&'static str] {
    use Rule::*;
    match rule {
        qname | ident | plain_ident | quoted_ident => &["name"],
        integer => &["integer"],
        number | double | signed => &["number"],
        string | single_quoted | double_quoted => &["string"],
        lparen | paren_cel | paren_filter | paren_pred | paren_expr => &["`(`"],
        rparen => &["`)`"],
        lbracket => &["`[`"],
        rbracket => &["`]`"],
        lbrace | value_set | set_list | set_range => &["`{`"],
        rbrace => &["`}`"],
        comma => &["`,`"],
        semi => &["`;`"],
        colon => &["`:`"],
        colon_plus => &["`:+`"],
        plus => &["`+`"],
        minus => &["`-`"],
        star => &["`*`"],
        slash => &["`/`"],
        percent => &["`%`"],
        dotdot => &["`..`"],
        dot => &["`.`"],
        gt_sym => &["`>`"],
        cmp_op | op_le | op_ne | op_lt | op_ge | op_gt | op_eq => &["comparison operator"],
        kw_all => &["ALL"],
        kw_and => &["AND"],
        kw_any => &["ANY"],
        kw_as => &["AS"],
        kw_by => &["BY"],
        kw_consume => &["CONSUME"],
        kw_create => &["CREATE"],
        kw_event => &["EVENT"],
        kw_events => &["EVENTS"],
        kw_filter => &["FILTER"],
        kw_from => &["FROM"],
        kw_in => &["IN"],
        kw_is | is_null_tail => &["IS"],
        kw_null => &["NULL"],
        kw_last => &["LAST"],
        kw_like => &["LIKE"],
        kw_limit => &["LIMIT"],
        kw_max => &["MAX"],
        kw_next => &["NEXT"],
        kw_none => &["NONE"],
        kw_not | not_atom => &["NOT"],
        kw_or => &["OR"],
        kw_partition => &["PARTITION"],
        kw_range => &["RANGE"],
        kw_select => &["SELECT"],
        kw_stream => &["STREAM"],
        kw_strict => &["STRICT"],
        kw_where => &["WHERE"],
        kw_within => &["WITHIN"],
        kw_true | kw_false => &["TRUE or FALSE"],
        time_unit | unit_days | unit_hours | unit_minutes | unit_ms | unit_seconds => &["time unit"],
        EOI => &["end of query"],
        cel | cel_unit => &["event type", "`(`", "NOT"],
        atomic => &["event type"],
        cel_postfix => &["AS", "FILTER", "`+`", "`:+`"],
        cel_infix => &["`;`", "`:`", "AND", "OR"],
        filter | filter_and | filter_term | var_filter => &["filter `var[predicate]`"],
        pred | pred_and | pred_not | pred_atom | pred_test => &["predicate"],
        cmp_tail => &["comparison operator"],
        like_tail => &["LIKE"],
        in_range_tail | in_set_tail => &["IN"],
        expr | e_mul | e_un | e_prim | add_op | mul_op | unary_op => &["expression"],
        select_list | select_item | select_entry => &["`*`", "NONE", "variable"],
        measure => &["aggregate `f(var.attr) AS name`"],
        aggregate | count_call | value_agg | agg_count | agg_func => &["aggregate"],
        prev_call | kw_prev => &["PREV"],
        var_attr => &["`var.attr`"],
        strategy => &["ALL", "ANY", "NEXT", "LAST", "MAX", "STRICT"],
        window | window_events | window_attr | window_duration | duration => &["window"],
        consume_policy => &["ANY", "PARTITION", "NONE"],
        key_group => &["`[`"],
        stream_decl => &["CREATE STREAM"],
        event_decl => &["EVENT"],
        attr_decl => &["attribute declaration"],
        query => &["SELECT"],
        literal => &["literal"],
        _ => &[],
    }
}
