//! Byte spans into the query text and their translation to 1-based line/column.

/// A half-open byte range `[start, end)` of the source text.
///
/// Spans are byte offsets so that slicing the source is O(1); columns are computed
/// on demand (in Unicode scalar values, as docs/language.md#s4 requires) only when a
/// diagnostic is rendered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte of the range.
    pub start: usize,
    /// One past the last byte of the range.
    pub end: usize,
}

impl Span {
    /// Creates a span from byte offsets.
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    /// Span of a pest pair.
    pub(crate) fn of(pair: &pest::iterators::Pair<'_, crate::parser::Rule>) -> Span {
        let s = pair.as_span();
        Span { start: s.start(), end: s.end() }
    }
}

/// A resolved source location: 1-based line, 1-based columns counted in Unicode
/// scalar values. `end_column` is exclusive and stays on `line` (a span that crosses a
/// line break is cut at the end of its first line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column of the first character.
    pub column: usize,
    /// 1-based column one past the last underlined character (at least `column + 1`).
    pub end_column: usize,
}

/// Resolves `span` in `source` to a [`Location`].
pub fn locate(source: &str, span: Span) -> Location {
    let start = clamp_to_char_boundary(source, span.start);
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let line = source[..start].matches('\n').count() + 1;
    let column = source[line_start..start].chars().count() + 1;
    let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
    let end = clamp_to_char_boundary(source, span.end.min(line_end).max(start));
    let width = source[start..end].chars().count().max(1);
    Location { line, column, end_column: column + width }
}

/// The text of the 1-based `line` of `source`, without its line terminator.
pub fn line_text(source: &str, line: usize) -> &str {
    source.split('\n').nth(line.saturating_sub(1)).unwrap_or("").trim_end_matches('\r')
}

fn clamp_to_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_lines_and_unicode_columns() {
        let src = "SELECT *\nWHERE é ; SEL";
        let at = src.find("SEL\u{0}").unwrap_or(src.rfind("SEL").unwrap());
        let loc = locate(src, Span::new(at, at + 3));
        assert_eq!(loc, Location { line: 2, column: 11, end_column: 14 });
        assert_eq!(line_text(src, 2), "WHERE é ; SEL");
    }

    #[test]
    fn empty_span_underlines_one_column() {
        let loc = locate("abc", Span::new(3, 3));
        assert_eq!(loc, Location { line: 1, column: 4, end_column: 5 });
    }
}
