//! The abstract syntax tree of CEQL queries and `CREATE STREAM` declarations.
//!
//! Every node keeps the byte span of the text it came from, so that the static
//! checks of the engine can point at the exact token (docs/language.md#s4).

use crate::span::Span;

/// An identifier (plain or back-quoted; the quotes are stripped).
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name, without back quotes.
    pub name: String,
    /// Where it appears.
    pub span: Span,
}

/// A possibly stream-qualified name: `T` or `S>T`.
#[derive(Clone, Debug, PartialEq)]
pub struct QName {
    /// The stream `S` of `S>T`, if qualified.
    pub stream: Option<Ident>,
    /// The event type or variable name.
    pub name: Ident,
    /// Span of the whole name.
    pub span: Span,
}

impl QName {
    /// The name as written, `T` or `S>T`.
    pub fn display(&self) -> String {
        match &self.stream {
            Some(s) => format!("{}>{}", s.name, self.name.name),
            None => self.name.name.clone(),
        }
    }
}

/// One parsed text: optional declarations and one query.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryText {
    /// `CREATE STREAM` declarations that precede the query.
    pub streams: Vec<StreamDecl>,
    /// The query.
    pub query: Query,
}

/// `CREATE STREAM name { EVENT ..., ... }` (docs/language.md#s1-1).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamDecl {
    /// Stream name.
    pub name: Ident,
    /// Declared event types.
    pub events: Vec<EventDecl>,
    /// Whole declaration.
    pub span: Span,
}

/// `EVENT T { a: type, ... }`.
#[derive(Clone, Debug, PartialEq)]
pub struct EventDecl {
    /// Event type name.
    pub name: Ident,
    /// Declared attributes in order.
    pub attrs: Vec<AttrDecl>,
}

/// `name: type`; the type name is kept as written (checked by the engine, E0209).
#[derive(Clone, Debug, PartialEq)]
pub struct AttrDecl {
    /// Attribute name.
    pub name: Ident,
    /// Declared type name (`int`, `double`, `string`, `boolean`, `primary_time` or an alias).
    pub ty: Ident,
}

/// A CEQL query (docs/language.md#s2-2).
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// Span of the `SELECT` keyword (lints without a better place point here).
    pub select_span: Span,
    /// Selection strategy; `All` when omitted.
    pub strategy: Strategy,
    /// Span of the strategy keyword, if written.
    pub strategy_span: Option<Span>,
    /// What `SELECT` projects.
    pub select: SelectList,
    /// Streams named in `FROM` (empty when the clause is omitted).
    pub from: Vec<Ident>,
    /// The `WHERE` formula.
    pub pattern: Cel,
    /// `PARTITION BY` key groups (empty when absent).
    pub partition_by: Vec<KeyGroup>,
    /// `WITHIN` clause.
    pub within: Option<Window>,
    /// `CONSUME BY` policy; `None` (the policy) when omitted.
    pub consume: ConsumePolicy,
    /// `LIMIT n`.
    pub limit: Option<Limit>,
    /// Measures of the `SELECT` list (`count(b) AS n`), in order
    /// (docs/design/correlation.md, section 1). A list of measures only has `select` NONE.
    pub measures: Vec<Measure>,
    /// Span of the whole query.
    pub span: Span,
}

/// Selection strategy of `SELECT` (docs/language.md#s3-6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Every match (the default).
    All,
    /// Same as `All`.
    Any,
    /// Earliest-preferring total order per end position.
    Next,
    /// Latest-preferring total order per end position.
    Last,
    /// Maximal by inclusion per end position.
    Max,
    /// Contiguous matches only.
    Strict,
}

impl Strategy {
    /// The keyword as written in CEQL.
    pub fn keyword(self) -> &'static str {
        match self {
            Strategy::All => "ALL",
            Strategy::Any => "ANY",
            Strategy::Next => "NEXT",
            Strategy::Last => "LAST",
            Strategy::Max => "MAX",
            Strategy::Strict => "STRICT",
        }
    }
}

/// The `SELECT` list.
#[derive(Clone, Debug, PartialEq)]
pub enum SelectList {
    /// `SELECT *`: no projection.
    Star,
    /// `SELECT NONE`: only the interval.
    None(Span),
    /// `SELECT x, S>T, y[a, b]`.
    Items(Vec<SelectItem>),
}

/// One variable of the `SELECT` list, with an optional payload attribute list.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectItem {
    /// The variable.
    pub var: QName,
    /// `x[a, b]` payload restriction (phase later: parsed, payload only).
    pub attrs: Vec<Ident>,
}

/// `f(y.attr) AS name` in the `SELECT` list: a named aggregate per output.
#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
    /// The aggregate.
    pub agg: Aggregate,
    /// Its name (the column of `run_arrow`, the key of `Match.measures`).
    pub name: Ident,
}

/// Aggregate functions over the events of a variable (docs/design/correlation.md, section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `count(y)`: number of events.
    Count,
    /// `sum(y.a)`.
    Sum,
    /// `avg(y.a)`.
    Avg,
    /// `min(y.a)`.
    Min,
    /// `max(y.a)`.
    Max,
    /// `first(y.a)`: the value at the smallest position.
    First,
    /// `last(y.a)`: the value at the largest position.
    Last,
}

impl AggFunc {
    /// The function's name, lower case as the design writes it.
    pub fn name(self) -> &'static str {
        match self {
            AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Avg => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::First => "first",
            AggFunc::Last => "last",
        }
    }

    /// The function named `name` (any case), if it is one.
    pub fn from_name(name: &str) -> Option<AggFunc> {
        Some(match name.to_ascii_lowercase().as_str() {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "avg" => AggFunc::Avg,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "first" => AggFunc::First,
            "last" => AggFunc::Last,
            _ => return None,
        })
    }
}

/// `count(y)` or `f(y.attr)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    /// The function.
    pub func: AggFunc,
    /// The variable whose events are aggregated.
    pub var: Ident,
    /// The attribute (`None` for `count`).
    pub attr: Option<Ident>,
    /// Span of the whole call.
    pub span: Span,
}

/// `[a, b, ...]`: alternative names of one partition key component.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyGroup {
    /// Attribute names, first declared one wins (docs/language.md#s3-8).
    pub attrs: Vec<Ident>,
    /// Span of the group including brackets.
    pub span: Span,
}

/// `WITHIN` forms (docs/language.md#s3-7).
#[derive(Clone, Debug, PartialEq)]
pub enum Window {
    /// `WITHIN n EVENTS`.
    Events {
        /// Bound on `end - start` in positions.
        n: i64,
        /// Span of the window.
        span: Span,
    },
    /// `WITHIN n [attr]`.
    Attribute {
        /// Bound on the attribute difference.
        n: i64,
        /// The attribute.
        attr: Ident,
        /// Span of the window.
        span: Span,
    },
    /// `WITHIN 1 hour 30 minutes` (components are summed).
    Duration {
        /// The components as written.
        parts: Vec<DurationPart>,
        /// Span of the window.
        span: Span,
    },
}

impl Window {
    /// Span of the window clause body.
    pub fn span(&self) -> Span {
        match self {
            Window::Events { span, .. } | Window::Attribute { span, .. } | Window::Duration { span, .. } => *span,
        }
    }
}

/// One `number unit` component of a duration.
#[derive(Clone, Debug, PartialEq)]
pub struct DurationPart {
    /// The number exactly as written (may be a decimal: `1.5`).
    pub amount: String,
    /// The unit.
    pub unit: TimeUnit,
}

/// Time units of duration windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Milliseconds (`MS`, `MILLISECOND(S)`).
    Millisecond,
    /// Seconds.
    Second,
    /// Minutes.
    Minute,
    /// Hours.
    Hour,
    /// Days.
    Day,
}

impl TimeUnit {
    /// Nanoseconds in one unit.
    pub fn nanos(self) -> i128 {
        match self {
            TimeUnit::Millisecond => 1_000_000,
            TimeUnit::Second => 1_000_000_000,
            TimeUnit::Minute => 60_000_000_000,
            TimeUnit::Hour => 3_600_000_000_000,
            TimeUnit::Day => 86_400_000_000_000,
        }
    }

    /// Canonical keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            TimeUnit::Millisecond => "MILLISECONDS",
            TimeUnit::Second => "SECONDS",
            TimeUnit::Minute => "MINUTES",
            TimeUnit::Hour => "HOURS",
            TimeUnit::Day => "DAYS",
        }
    }
}

/// `CONSUME BY` policies (docs/language.md#s3-10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConsumePolicy {
    /// No consumption (default).
    None,
    /// Reset every partition after an output.
    Any,
    /// Reset the emitting partition after an output.
    Partition,
}

/// `LIMIT n`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// Maximum complex events emitted per position.
    pub n: i64,
    /// Span of the number.
    pub span: Span,
}

/// A CEL formula node (docs/language.md#s3-3) with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Cel {
    /// What the node is.
    pub kind: CelKind,
    /// Text the node covers.
    pub span: Span,
}

/// CEL formula constructors.
#[derive(Clone, Debug, PartialEq)]
pub enum CelKind {
    /// An event type `T` or `S>T`.
    Atom(QName),
    /// `NOT(T FILTER ...)`: one event that is not such a `T`.
    Not(Atomic),
    /// `ABSENT(T FILTER ... OR U ...)`: no such event (of any of the alternatives, never
    /// empty) between the neighbours of a `;` chain (docs/language.md#s3-3a), or, with `FOR
    /// d`, after the end of the whole formula for `d` (docs/language.md#s3-3b). It consumes no
    /// event; the engine checks its placement (E0302, E0303).
    Absent(Vec<Atomic>, Option<Deadline>),
    /// `ψ AS x`.
    As(Box<Cel>, Ident),
    /// `ψ FILTER θ`.
    Filter(Box<Cel>, Filter),
    /// `ψ1 ; ψ2`.
    Seq(Box<Cel>, Box<Cel>),
    /// `ψ1 : ψ2` (contiguous).
    Contiguous(Box<Cel>, Box<Cel>),
    /// `ψ1 OR ψ2`.
    Or(Box<Cel>, Box<Cel>),
    /// `ψ1 AND ψ2`: both, in any order, over distinct events (docs/language.md#s3-3c).
    And(Box<Cel>, Box<Cel>),
    /// `ψ+`.
    Plus(Box<Cel>),
    /// `ψ:+` (contiguous iteration).
    ContiguousPlus(Box<Cel>),
}

impl CelKind {
    /// The operands of `NOT(...)` (one) and `ABSENT(...)` (its alternatives); none for the
    /// other constructors. Why: most passes treat every such operand alike (its type and
    /// filters read one event).
    pub fn atomics(&self) -> &[Atomic] {
        match self {
            CelKind::Not(a) => std::slice::from_ref(a),
            CelKind::Absent(a, _) => a,
            _ => &[],
        }
    }
}

/// `FOR d` after a trailing `ABSENT(...)`: how long after the match the absence is checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Deadline {
    /// The duration's components as written (summed, as in `WITHIN`).
    pub parts: Vec<DurationPart>,
    /// Span of `FOR d`.
    pub span: Span,
}

/// The operand of `NOT(...)` and `ABSENT(...)`: a type with zero or more filters.
#[derive(Clone, Debug, PartialEq)]
pub struct Atomic {
    /// The event type.
    pub name: QName,
    /// `ABSENT(T AS x ...)`: a name for the absent event, one of its own variables in
    /// its filters (docs/language.md#s3-3a); always `None` inside `NOT`.
    pub alias: Option<Ident>,
    /// Filters applied to it, in order.
    pub filters: Vec<Filter>,
    /// Span inside the parentheses.
    pub span: Span,
}

/// A filter formula `x[P] AND (y[Q] OR z[R])`.
#[derive(Clone, Debug, PartialEq)]
pub enum Filter {
    /// `x[P]`.
    Var {
        /// The filtered variable.
        var: QName,
        /// The predicate (boxed: a predicate tree is far larger than the other
        /// variants, and filters are built and moved often while parsing).
        pred: Box<Pred>,
        /// Span of `x[P]`.
        span: Span,
    },
    /// `θ1 AND θ2`.
    And(Box<Filter>, Box<Filter>),
    /// `θ1 OR θ2`.
    Or(Box<Filter>, Box<Filter>),
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=` / `==`
    Eq,
    /// `!=` / `<>`
    Ne,
}

impl CmpOp {
    /// The operator as written in canonical form.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
        }
    }
}

/// A predicate (docs/language.md#s3-4): unary when it reads only the filtered event,
/// otherwise it also reads other events (`y.attr`, `PREV`, aggregates).
#[derive(Clone, Debug, PartialEq)]
pub enum Pred {
    /// `P AND Q`.
    And(Box<Pred>, Box<Pred>),
    /// `P OR Q`.
    Or(Box<Pred>, Box<Pred>),
    /// `NOT P`.
    Not(Box<Pred>, Span),
    /// `e1 op e2`.
    Cmp {
        /// Left operand.
        lhs: Expr,
        /// Operator.
        op: CmpOp,
        /// Right operand.
        rhs: Expr,
        /// Span of the operator.
        op_span: Span,
    },
    /// `e LIKE 'regex'`.
    Like {
        /// The matched expression.
        expr: Expr,
        /// The pattern text.
        pattern: String,
        /// Span of the pattern literal.
        pattern_span: Span,
        /// Span of the `LIKE` keyword.
        op_span: Span,
    },
    /// `e [NOT] IN {...}`.
    InSet {
        /// Tested expression.
        expr: Expr,
        /// The set.
        set: ValueSet,
        /// `NOT IN`.
        negated: bool,
        /// Span of `IN`.
        op_span: Span,
    },
    /// `e IN RANGE(lo, hi)`, inclusive.
    InRange {
        /// Tested expression.
        expr: Expr,
        /// Lower bound.
        lo: Expr,
        /// Upper bound.
        hi: Expr,
        /// Span of `IN`.
        op_span: Span,
    },
    /// `e IS NULL` / `e IS NOT NULL`: TRUE or FALSE, never UNKNOWN (docs/language.md#s3-4).
    IsNull {
        /// Tested expression.
        expr: Expr,
        /// `IS NOT NULL`.
        negated: bool,
        /// Span of `IS ... NULL`.
        op_span: Span,
    },
    /// A boolean-valued expression used as a predicate.
    Bool(Expr),
}

/// Values of `IN {...}`.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueSet {
    /// `{v1, ..., vn}`.
    List(Vec<Literal>),
    /// `{a..b}`, `{a..}`, `{..b}` (closed).
    Range {
        /// Lower bound, if any.
        lo: Option<Literal>,
        /// Upper bound, if any.
        hi: Option<Literal>,
    },
}

/// A literal in an `IN` set.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// Integer (sign applied).
    Int(i64, Span),
    /// Double (sign applied).
    Float(f64, Span),
    /// String.
    Str(String, Span),
}

impl Literal {
    /// Span of the literal.
    pub fn span(&self) -> Span {
        match self {
            Literal::Int(_, s) | Literal::Float(_, s) | Literal::Str(_, s) => *s,
        }
    }
}

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl ArithOp {
    /// The operator symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Rem => "%",
        }
    }
}

/// A value expression with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What the expression is.
    pub kind: ExprKind,
    /// Its text.
    pub span: Span,
}

/// Value expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// Integer literal.
    Int(i64),
    /// Double literal.
    Float(f64),
    /// String literal.
    Str(String),
    /// `TRUE` / `FALSE`.
    Bool(bool),
    /// Attribute of the filtered event.
    Attr(Ident),
    /// `y.attr`: an attribute of an event of variable `y` (docs/design/correlation.md, section 1).
    Ref {
        /// The variable.
        var: Ident,
        /// The attribute.
        attr: Ident,
    },
    /// `PREV(attr)`: the attribute of the previous event of the filtered variable.
    Prev(Ident),
    /// An aggregate over a variable's events.
    Agg(Aggregate),
    /// Unary `-e` (`negate = true`) or `+e`.
    Unary {
        /// `-` when true, `+` otherwise.
        negate: bool,
        /// Operand.
        operand: Box<Expr>,
    },
    /// `e1 op e2`.
    Binary {
        /// Operator.
        op: ArithOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
        /// Span of the operator symbol.
        op_span: Span,
    },
}

impl Pred {
    /// Calls `f` on every expression node of the predicate (operands and their sub-expressions).
    pub fn for_each_expr<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match self {
            Pred::And(a, b) | Pred::Or(a, b) => {
                a.for_each_expr(f);
                b.for_each_expr(f);
            }
            Pred::Not(a, _) => a.for_each_expr(f),
            Pred::Cmp { lhs, rhs, .. } => {
                lhs.for_each_node(f);
                rhs.for_each_node(f);
            }
            Pred::Like { expr, .. } | Pred::InSet { expr, .. } | Pred::IsNull { expr, .. } | Pred::Bool(expr) => {
                expr.for_each_node(f)
            }
            Pred::InRange { expr, lo, hi, .. } => {
                expr.for_each_node(f);
                lo.for_each_node(f);
                hi.for_each_node(f);
            }
        }
    }

    /// Whether the predicate reads events other than the filtered one (`y.attr`,
    /// `PREV(attr)`, an aggregate): such a predicate is tested per valuation, not per event.
    pub fn reads_other_events(&self) -> bool {
        let mut found = false;
        self.for_each_expr(&mut |e| {
            found |= matches!(e.kind, ExprKind::Ref { .. } | ExprKind::Prev(_) | ExprKind::Agg(_))
        });
        found
    }

    /// Whether the predicate uses `PREV(attr)`.
    pub fn uses_prev(&self) -> bool {
        let mut found = false;
        self.for_each_expr(&mut |e| found |= matches!(e.kind, ExprKind::Prev(_)));
        found
    }
}

impl Expr {
    /// Calls `f` on this node and every sub-expression.
    pub fn for_each_node<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Unary { operand, .. } => operand.for_each_node(f),
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.for_each_node(f);
                rhs.for_each_node(f);
            }
            _ => {}
        }
    }
}
