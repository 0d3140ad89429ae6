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
    Diagnostic::error("E0100", message, span).with_label(label_for(found, &expected))
}

/// The caret's label: a clause keyword found where the parser was between clauses
/// (it expected the end of the query or another clause) is a clause out of order (a
/// user from SQL or FlinkCEP may write WITHIN first), and the label gives the order
/// (docs/language.md#s2-2); a reserved word used as a name is not.
fn label_for(found: &str, expected: &[&str]) -> &'static str {
    const CLAUSES: [&str; 6] = ["FROM", "WHERE", "PARTITION", "WITHIN", "CONSUME", "LIMIT"];
    let between_clauses = expected.iter().any(|e| *e == "end of query" || CLAUSES.contains(e));
    if between_clauses && CLAUSES.iter().any(|c| c.eq_ignore_ascii_case(found)) {
        "clauses come in this order: SELECT, FROM, WHERE (with its FILTERs), PARTITION BY, WITHIN, CONSUME BY, LIMIT"
    } else {
        "unexpected token"
    }
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
