//! The regular expressions of a query's `LIKE` tests, compiled once per distinct
//! pattern under one memory budget for the whole query.
//!
//! The `regex` crate bounds each expression on its own (10 MiB of compiled program,
//! 2 MiB of lazy-DFA cache by default), so a filter with hundreds of large patterns
//! (`x LIKE '\w{100}' OR ...`) used to take gigabytes and seconds to compile. Here
//! the query's distinct patterns share [`REGEX_BUDGET_BYTES`]: each gets an equal
//! share (never more than the crate's own default), and a pattern that does not fit
//! its share is refused with `E0101` at its literal.

use ceql_syntax::{Diagnostic, Span};
use regex::{Regex, RegexBuilder};
use std::collections::HashMap;
use std::sync::Arc;

/// Bytes of compiled programs and lazy-DFA caches all the regular expressions of
/// one query may use together.
pub const REGEX_BUDGET_BYTES: usize = 64 << 20;

/// The `regex` crate's default limit on one compiled program.
const DEFAULT_SIZE_LIMIT: usize = 10 << 20;
/// The `regex` crate's default limit on one lazy-DFA cache.
const DEFAULT_DFA_SIZE_LIMIT: usize = 2 << 20;

/// Compiled regular expressions by pattern text.
#[derive(Clone, Debug, Default)]
pub struct Regexes {
    by_pattern: HashMap<String, Arc<Regex>>,
}

impl Regexes {
    /// Compiles the distinct patterns among `patterns` (text, span of its literal)
    /// within the budget; the first invalid or too large one is an `E0101` error.
    pub fn compile<'a>(patterns: impl IntoIterator<Item = (&'a str, Span)>) -> Result<Regexes, Diagnostic> {
        let mut distinct: Vec<(&str, Span)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (p, span) in patterns {
            if seen.insert(p) {
                distinct.push((p, span));
            }
        }
        let share = REGEX_BUDGET_BYTES / distinct.len().max(1);
        let size_limit = DEFAULT_SIZE_LIMIT.min(share * 5 / 6);
        let dfa_size_limit = DEFAULT_DFA_SIZE_LIMIT.min(share / 6);
        let mut by_pattern = HashMap::with_capacity(distinct.len());
        for (pattern, span) in distinct {
            let re = RegexBuilder::new(pattern)
                .size_limit(size_limit)
                .dfa_size_limit(dfa_size_limit)
                .build()
                .map_err(|err| invalid(err, span, seen.len(), size_limit))?;
            by_pattern.insert(pattern.to_string(), Arc::new(re));
        }
        Ok(Regexes { by_pattern })
    }

    /// The compiled expression of `pattern` (compiled by [`Regexes::compile`]).
    pub fn get(&self, pattern: &str) -> Option<Arc<Regex>> {
        self.by_pattern.get(pattern).cloned()
    }
}

fn invalid(err: regex::Error, span: Span, patterns: usize, size_limit: usize) -> Diagnostic {
    match err {
        regex::Error::Syntax(s) => Diagnostic::error(
            "E0101",
            format!("invalid regular expression: {}", s.lines().last().unwrap_or("").trim()),
            span,
        ),
        regex::Error::CompiledTooBig(_) => Diagnostic::error(
            "E0101",
            format!(
                "regular expression too large: the query's {patterns} distinct pattern(s) share {} MiB, {} KiB each",
                REGEX_BUDGET_BYTES >> 20,
                size_limit >> 10
            ),
            span,
        )
        .with_label("simplify the pattern (a Unicode class such as \\w repeated many times is large), or use fewer"),
        other => Diagnostic::error("E0101", format!("invalid regular expression: {other}"), span),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_patterns_share_the_budget() {
        let span = Span::new(0, 1);
        assert!(Regexes::compile([(r"\w{100}", span)]).is_ok(), "one large pattern fits the crate's default");
        let many: Vec<String> = (0..200).map(|i| format!(r"\w{{100}}{i}")).collect();
        let err = Regexes::compile(many.iter().map(|p| (p.as_str(), span))).unwrap_err();
        assert_eq!(err.code, "E0101");
        assert!(err.message.contains("200 distinct"), "{}", err.message);
        // The same pattern repeated is compiled once.
        let same = vec![r"\w{100}"; 500];
        let r = Regexes::compile(same.into_iter().map(|p| (p, span))).unwrap();
        assert!(r.get(r"\w{100}").is_some());
    }

    #[test]
    fn invalid_patterns_are_e0101() {
        let err = Regexes::compile([("(", Span::new(3, 6))]).unwrap_err();
        assert_eq!((err.code, err.span), ("E0101", Span::new(3, 6)));
        assert!(err.message.starts_with("invalid regular expression"), "{}", err.message);
    }
}
