//! Prints an AST back to CEQL text. The output is fully parenthesised, so that
//! parsing it again gives the same tree (the round-trip property tested below and in
//! `tests/roundtrip.rs`).

use crate::ast::*;

/// Prints a query as CEQL text (fully parenthesised formula).
pub fn query_to_string(q: &Query) -> String {
    let mut out = String::from("SELECT ");
    if q.strategy_span.is_some() {
        out += q.strategy.keyword();
        out += " ";
    }
    let measures: Vec<String> =
        q.measures.iter().map(|m| format!("{} AS {}", aggregate(&m.agg), ident(&m.name))).collect();
    match &q.select {
        SelectList::Star if !measures.is_empty() => out += &format!("*, {}", measures.join(", ")),
        SelectList::None(_) if !measures.is_empty() => out += &measures.join(", "),
        SelectList::Star => out += "*",
        SelectList::None(_) => out += "NONE",
        SelectList::Items(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|i| {
                    let mut s = qname(&i.var);
                    if !i.attrs.is_empty() {
                        let a: Vec<String> = i.attrs.iter().map(ident).collect();
                        s += &format!("[{}]", a.join(", "));
                    }
                    s
                })
                .chain(measures)
                .collect();
            out += &parts.join(", ");
        }
    }
    if !q.from.is_empty() {
        let f: Vec<String> = q.from.iter().map(ident).collect();
        out += &format!(" FROM {}", f.join(", "));
    }
    out += " WHERE ";
    out += &cel_to_string(&q.pattern);
    if !q.partition_by.is_empty() {
        let groups: Vec<String> = q
            .partition_by
            .iter()
            .map(|g| format!("[{}]", g.attrs.iter().map(ident).collect::<Vec<_>>().join(", ")))
            .collect();
        out += &format!(" PARTITION BY {}", groups.join(", "));
    }
    match &q.within {
        Some(Window::Events { n, .. }) => out += &format!(" WITHIN {n} EVENTS"),
        Some(Window::Attribute { n, attr, .. }) => out += &format!(" WITHIN {n} [{}]", ident(attr)),
        Some(Window::Duration { parts, .. }) => {
            out += " WITHIN";
            for p in parts {
                out += &format!(" {} {}", p.amount, p.unit.keyword());
            }
        }
        None => {}
    }
    match q.consume {
        ConsumePolicy::None => {}
        ConsumePolicy::Any => out += " CONSUME BY ANY",
        ConsumePolicy::Partition => out += " CONSUME BY PARTITION",
    }
    if let Some(l) = q.limit {
        out += &format!(" LIMIT {}", l.n);
    }
    out
}

/// Prints a CEL formula, parenthesising every compound sub-formula.
pub fn cel_to_string(c: &Cel) -> String {
    match &c.kind {
        CelKind::Atom(q) => qname(q),
        CelKind::Not(a) => format!("NOT({})", atomic(a)),
        CelKind::Absent(a, None) => format!("ABSENT({})", alternatives(a)),
        CelKind::Absent(a, Some(d)) => {
            let parts: Vec<String> = d.parts.iter().map(|p| format!("{} {}", p.amount, p.unit.keyword())).collect();
            format!("ABSENT({}) FOR {}", alternatives(a), parts.join(" "))
        }
        CelKind::As(inner, x) => format!("({} AS {})", cel_to_string(inner), ident(x)),
        CelKind::Filter(inner, f) => format!("({} FILTER {})", cel_to_string(inner), filter(f)),
        CelKind::Seq(a, b) => format!("({} ; {})", cel_to_string(a), cel_to_string(b)),
        CelKind::Contiguous(a, b) => format!("({} : {})", cel_to_string(a), cel_to_string(b)),
        CelKind::Or(a, b) => format!("({} OR {})", cel_to_string(a), cel_to_string(b)),
        CelKind::And(a, b) => format!("({} AND {})", cel_to_string(a), cel_to_string(b)),
        CelKind::Plus(inner) => format!("({})+", cel_to_string(inner)),
        CelKind::ContiguousPlus(inner) => format!("({}):+", cel_to_string(inner)),
    }
}

/// The alternatives of `ABSENT(...)`, `OR` between them (what follows each `OR` is a type,
/// not a filter term, so a filter before it does not swallow it: it reads back as written).
fn alternatives(a: &[Atomic]) -> String {
    a.iter().map(atomic).collect::<Vec<_>>().join(" OR ")
}

/// The operand of `NOT(...)` or `ABSENT(...)`: the type and its filters.
fn atomic(a: &Atomic) -> String {
    let mut s = qname(&a.name);
    if let Some(x) = &a.alias {
        s += &format!(" AS {}", ident(x));
    }
    for f in &a.filters {
        s += &format!(" FILTER {}", filter(f));
    }
    s
}

fn filter(f: &Filter) -> String {
    match f {
        Filter::Var { var, pred: p, .. } => format!("{}[{}]", qname(var), pred(p)),
        Filter::And(a, b) => format!("({} AND {})", filter(a), filter(b)),
        Filter::Or(a, b) => format!("({} OR {})", filter(a), filter(b)),
    }
}

/// Prints a predicate, fully parenthesised (used as its structural key).
pub fn pred_to_string(p: &Pred) -> String {
    pred(p)
}

fn pred(p: &Pred) -> String {
    match p {
        Pred::And(a, b) => format!("({} AND {})", pred(a), pred(b)),
        Pred::Or(a, b) => format!("({} OR {})", pred(a), pred(b)),
        Pred::Not(a, _) => format!("(NOT {})", pred(a)),
        Pred::Cmp { lhs, op, rhs, .. } => format!("{} {} {}", expr(lhs), op.symbol(), expr(rhs)),
        Pred::Like { expr: e, pattern, .. } => format!("{} LIKE {}", expr(e), string(pattern)),
        Pred::InSet { expr: e, set, negated, .. } => {
            let not = if *negated { "NOT " } else { "" };
            let body = match set {
                ValueSet::List(items) => items.iter().map(literal).collect::<Vec<_>>().join(", "),
                ValueSet::Range { lo, hi } => format!(
                    "{}..{}",
                    lo.as_ref().map(literal).unwrap_or_default(),
                    hi.as_ref().map(literal).unwrap_or_default()
                ),
            };
            format!("{} {not}IN {{{body}}}", expr(e))
        }
        Pred::InRange { expr: e, lo, hi, .. } => format!("{} IN RANGE({}, {})", expr(e), expr(lo), expr(hi)),
        Pred::IsNull { expr: e, negated, .. } => format!("{} IS {}NULL", expr(e), if *negated { "NOT " } else { "" }),
        Pred::Bool(e) => expr(e),
    }
}

fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => float(*v),
        ExprKind::Str(s) => string(s),
        ExprKind::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        ExprKind::Attr(a) => ident(a),
        ExprKind::Ref { var, attr } => format!("{}.{}", ident(var), ident(attr)),
        ExprKind::Prev(a) => format!("PREV({})", ident(a)),
        ExprKind::Agg(a) => aggregate(a),
        ExprKind::Unary { negate, operand } => format!("({}{})", if *negate { "-" } else { "+" }, expr(operand)),
        ExprKind::Binary { op, lhs, rhs, .. } => format!("({} {} {})", expr(lhs), op.symbol(), expr(rhs)),
    }
}

fn literal(l: &Literal) -> String {
    match l {
        Literal::Int(v, _) => v.to_string(),
        Literal::Float(v, _) => float(*v),
        Literal::Str(s, _) => string(s),
    }
}

fn float(v: f64) -> String {
    let s = format!("{:?}", v.abs());
    let s = if s.contains('.') || s.contains('e') { s } else { format!("{s}.0") };
    // `1e300` is not a CEQL double; `1.0e300` is.
    let s = if s.contains('e') && !s.contains('.') { s.replacen('e', ".0e", 1) } else { s };
    if v.is_sign_negative() {
        format!("-{s}")
    } else {
        s
    }
}

fn string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn qname(q: &QName) -> String {
    match &q.stream {
        Some(s) => format!("{}>{}", ident(s), ident(&q.name)),
        None => ident(&q.name),
    }
}

fn ident(i: &Ident) -> String {
    let plain = i.name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && i.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_reserved(&i.name);
    if plain {
        i.name.clone()
    } else {
        format!("`{}`", i.name.replace('`', "``"))
    }
}

/// Whether `word` is one of the words the grammar reserves (its `reserved` rule,
/// docs/language.md#s2-1): not a name unless written in backquotes (also what a syntax
/// error's caret says of such a word).
pub(crate) fn is_reserved(word: &str) -> bool {
    const RESERVED: [&str; 34] = [
        "ALL",
        "AND",
        "ANY",
        "AS",
        "BY",
        "CONSUME",
        "DISTINCT",
        "EVENT",
        "EVENTS",
        "FILTER",
        "FROM",
        "HOUR",
        "HOURS",
        "IN",
        "LAST",
        "LIKE",
        "LIMIT",
        "MAX",
        "MINUTE",
        "MINUTES",
        "NEXT",
        "NONE",
        "NOT",
        "OR",
        "PARTITION",
        "RANGE",
        "SECOND",
        "SECONDS",
        "SELECT",
        "STREAM",
        "STRICT",
        "UNLESS",
        "WHERE",
        "WITHIN",
    ];
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
        || word.eq_ignore_ascii_case("true")
        || word.eq_ignore_ascii_case("false")
}

/// Prints `count(y)` or `f(y.attr)`.
pub fn aggregate(a: &Aggregate) -> String {
    match &a.attr {
        None => format!("{}({})", a.func.name(), ident(&a.var)),
        Some(attr) => format!("{}({}.{})", a.func.name(), ident(&a.var), ident(attr)),
    }
}
