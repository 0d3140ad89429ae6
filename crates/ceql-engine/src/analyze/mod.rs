//! Static checks of docs/language.md#s4 and name resolution. The passes run in the order
//! the reference fixes (names, types, scope, lints); the first error aborts, warnings
//! are collected. The result is a [`Plan`]: the query with every name resolved, ready
//! for the CEA construction.

mod absence;
mod absent_names;
mod clauses;
mod correlated_absence;
mod correlation;
mod lints;
mod names;
mod routing;
mod scope;
mod typing;
mod valuation_lint;

pub(crate) use correlation::MeasurePlan;
pub(crate) use names::validate_declarations;
pub use routing::Routing;

use crate::bitset::BitSet;
use crate::schema::{Schema, StreamId, TypeId};
use ceql_syntax::ast::{self, ConsumePolicy, Strategy};
use ceql_syntax::{Diagnostic, Span};
use std::sync::Arc;

/// Identifier of a query variable: an event type `T`, a qualified `S>T`, or an `AS` name.
pub type VarId = usize;

/// What a variable names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Event type name `T` (holds events of type `T` from any stream).
    Type(String),
    /// `S>T`.
    Qualified(StreamId, String),
    /// `AS x`.
    Alias(String),
    /// The iteration marker of the `n`-th `+` whose body has a filter between events
    /// (docs/language.md#s3-4c): it binds the first event of each iteration, so that the
    /// residual test can cut a valuation into its iterations. Internal: never reported.
    Iteration(usize),
}

/// The variables of a query.
#[derive(Clone, Debug, Default)]
pub struct Variables {
    kinds: Vec<VarKind>,
    /// Qualified variables `S>T` that the query writes (every atom binds one).
    written: BitSet,
}

impl Variables {
    /// Returns the id of `kind`, creating it if needed.
    pub fn intern(&mut self, kind: VarKind) -> VarId {
        if let Some(i) = self.kinds.iter().position(|k| *k == kind) {
            return i;
        }
        self.kinds.push(kind);
        self.kinds.len() - 1
    }

    /// Looks up an existing variable.
    pub fn find(&self, kind: &VarKind) -> Option<VarId> {
        self.kinds.iter().position(|k| k == kind)
    }

    /// What variable `v` is.
    pub fn kind(&self, v: VarId) -> &VarKind {
        &self.kinds[v]
    }

    /// Number of variables.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Records that the query writes the qualified variable `v` (`S>T`).
    pub fn mark_written(&mut self, v: VarId) {
        self.written.insert(v);
    }

    /// Whether captures report `v` (docs/language.md#s3-2a): type and `AS` names
    /// always, a qualified `S>T` only when the query writes it.
    pub fn is_reported(&self, v: VarId) -> bool {
        match self.kinds[v] {
            VarKind::Qualified(..) => self.written.contains(v),
            VarKind::Iteration(_) => false,
            VarKind::Type(_) | VarKind::Alias(_) => true,
        }
    }

    /// Whether `v` is an iteration marker ([`VarKind::Iteration`]): labelled inside the
    /// engine when every variable is (filters tested per valuation), never reported.
    pub fn is_marker(&self, v: VarId) -> bool {
        matches!(self.kinds[v], VarKind::Iteration(_))
    }
}

/// One way an atom can capture an event: its type `S>T` and the variables the
/// capturing transition binds (`{T, S>T}`).
#[derive(Clone, Debug)]
pub struct AtomEdge {
    /// The captured event type.
    pub ty: TypeId,
    /// Variables bound by capturing it.
    pub vars: BitSet,
}

/// A filter with resolved variables.
#[derive(Clone, Debug)]
pub enum RFilter {
    /// `x[P]`.
    Var {
        /// Filtered variable.
        var: VarId,
        /// The predicate (compiled per captured type by the CEA builder).
        pred: Arc<ast::Pred>,
    },
    /// `θ1 AND θ2`.
    And(Box<RFilter>, Box<RFilter>),
    /// `θ1 OR θ2`.
    Or(Box<RFilter>, Box<RFilter>),
    /// A conjunct that reads other events, moved to [`Plan::residuals`]: TRUE for
    /// the automaton, tested per valuation.
    Residual,
}

/// A CEL formula with resolved names. The constructs that create automaton states
/// keep their span, so that the automaton can say which part of the query a state
/// comes from (diagnostics, `explain`).
#[derive(Clone, Debug)]
pub enum RCel {
    /// An event type: one edge per captured `S>T`.
    Atom(Vec<AtomEdge>, Span),
    /// `NOT(T FILTER ...)`.
    Not(Vec<AtomEdge>, Vec<RFilter>, Span),
    /// `ψ AS x`.
    As(Box<RCel>, VarId),
    /// `ψ FILTER θ`.
    Filter(Box<RCel>, RFilter),
    /// `ψ1 ; ψ2`.
    Seq(Box<RCel>, Box<RCel>),
    /// `ψ1 ; ABSENT(β1) ; … ; ABSENT(βn) ; ψ2`: `ψ1 ; ψ2` with no event satisfying any `βk`
    /// strictly between them (docs/language.md#s3-3a).
    SeqAbsent(Box<RCel>, Vec<Absence>, Box<RCel>),
    /// `ψ1 : ψ2`.
    Contiguous(Box<RCel>, Box<RCel>),
    /// `ψ1 OR ψ2`.
    Or(Box<RCel>, Box<RCel>, Span),
    /// `ψ1 AND ψ2` (docs/language.md#s3-3c): compiled to the product of the two automata;
    /// the span names the product's states.
    And(Box<RCel>, Box<RCel>, Span),
    /// `ψ+`.
    Plus(Box<RCel>, Span),
    /// `ψ:+`.
    ContiguousPlus(Box<RCel>, Span),
}

/// One `ABSENT(T FILTER ...)` condition: the atom's edges and filters, as in `NOT`.
#[derive(Clone, Debug)]
pub struct Absence {
    /// The absent type's edges.
    pub edges: Vec<AtomEdge>,
    /// Its filters.
    pub filters: Vec<RFilter>,
    /// Span of `ABSENT(...)`.
    pub span: Span,
}

/// What `SELECT` keeps of each complex event (docs/language.md#s3-5).
#[derive(Clone, Debug)]
pub enum Projection {
    /// `SELECT *`.
    All,
    /// `SELECT NONE`.
    Nothing,
    /// `SELECT x, y`: the union of these variables.
    Vars(BitSet),
}

/// The resolved `WITHIN` clause (docs/language.md#s3-7, #s6-1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowPlan {
    /// No `WITHIN`.
    Unbounded,
    /// `WITHIN n EVENTS`: `end - start ≤ n` in positions.
    Events(i64),
    /// `WITHIN <duration>`: `ts(end) - ts(start) ≤ nanos`.
    Duration(i64),
    /// `WITHIN n [attr]`: `attr(end) - attr(start) ≤ n`.
    Attribute {
        /// Bound.
        n: i64,
        /// The attribute.
        attr: String,
    },
}

impl WindowPlan {
    /// True for windows over time stamps or attribute values (late events possible).
    pub fn is_time_based(&self) -> bool {
        matches!(self, WindowPlan::Duration(_) | WindowPlan::Attribute { .. })
    }

    /// The bound `ε` of docs/language.md#s6-1 (inclusive), `None` when unbounded.
    pub fn epsilon(&self) -> Option<i64> {
        match self {
            WindowPlan::Unbounded => None,
            WindowPlan::Events(n) | WindowPlan::Duration(n) | WindowPlan::Attribute { n, .. } => Some(*n),
        }
    }
}

/// A query after the static checks.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Streams and types the query reads.
    pub schema: Schema,
    /// The resolved `WHERE` formula (without a trailing absence).
    pub pattern: RCel,
    /// `ψ ; ABSENT(β) FOR d` (docs/language.md#s3-3b): the absence (one per alternative of
    /// `ABSENT(β1 OR β2)`, never empty) and `d` in nanoseconds.
    pub trailing: Option<(Vec<Absence>, i64)>,
    /// Span of the `WHERE` formula in the query text.
    pub pattern_span: Span,
    /// The compiled regular expressions of its `LIKE` tests.
    pub regexes: crate::predicate::Regexes,
    /// The variables the formula and the projection name (type, `S>T` and `AS` names).
    pub variables: Variables,
    /// The `SELECT` projection.
    pub projection: Projection,
    /// The selection strategy.
    pub strategy: Strategy,
    /// `PARTITION BY` groups (attribute names, first present wins).
    pub partition_by: Vec<Vec<String>>,
    /// The window.
    pub window: WindowPlan,
    /// `CONSUME BY`.
    pub consume: ConsumePolicy,
    /// `LIMIT n`.
    pub limit: Option<u64>,
    /// Warnings (`W04xx`).
    pub warnings: Vec<Diagnostic>,
    /// Filter conjuncts that read other events (docs/design/correlation.md, section 3.2).
    pub residuals: Vec<correlation::ResidualFilter>,
    /// Equalities between variables evaluated by routing events by key
    /// (docs/language.md#s3-4b), when the query is routed.
    pub routing: Option<Routing>,
    /// The iterations whose first events get a marker variable (docs/language.md#s3-4c):
    /// the span of the `+` (as [`RCel::Plus`] keeps it) and its marker.
    pub iterations: Vec<(Span, VarId)>,
    /// The measures of the `SELECT` list (docs/language.md#s3-5a).
    pub measures: Vec<correlation::MeasurePlan>,
    /// Absences whose filters read the match, tested per valuation (docs/language.md#s3-3a).
    pub gaps: Vec<correlated_absence::GapCheck>,
}

impl Plan {
    /// Whether the query runs on the residual path (docs/design/correlation.md, section
    /// 3.2): filters between events to test, or measures to compute, per valuation.
    pub fn needs_valuations(&self) -> bool {
        !self.residuals.is_empty() || !self.measures.is_empty() || !self.gaps.is_empty() || self.selects_in_window()
    }

    /// Whether the strategy chooses among the valuations that pass the filters tested
    /// per valuation, inside the window, instead of in the automaton
    /// (docs/language.md#s3-6a): `NEXT`, `LAST` or `MAX` with such filters.
    pub fn selects_after_test(&self) -> bool {
        let tested = !self.residuals.is_empty() || !self.gaps.is_empty() || self.selects_in_window();
        tested && matches!(self.strategy, Strategy::Next | Strategy::Last | Strategy::Max)
    }
}

/// Options that change what the checks accept.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckOptions {
    /// Evaluate `NEXT/LAST/MAX/STRICT` as `ALL` with warning `W0404` (CORE C++ behaviour).
    pub compat_ignore_strategy: bool,
}

/// Runs every check on `query` against the declarations `decls`.
pub fn analyze(query: &ast::Query, decls: &[ast::StreamDecl], opts: CheckOptions) -> Result<Plan, Diagnostic> {
    let mut warnings = Vec::new();
    // Literals (E0101): regular expressions of LIKE, before any name or type check.
    let regexes = typing::check_like_patterns(&query.pattern, &mut warnings)?;
    // Placement of ABSENT and FOR (E0302, E0303): structural, before any name is resolved.
    let deadline = absence::check_formula(&query.pattern)?;
    // Names (E02xx), including the clause-level names of PARTITION BY and WITHIN.
    let resolved = names::resolve(query, decls)?;
    let window = clauses::window(query, &resolved.schema)?;
    let partition_by = clauses::partition(query, &resolved.schema)?;
    correlation::check_measure_names(query)?;
    let limit = query.limit.map(|l| l.n as u64);
    // Types (E0300), per capturable type.
    typing::check_filters(query, &resolved, &mut warnings)?;
    let measures = correlation::check_measures(query, &resolved)?;
    // Scope (E0301, E0305).
    scope::check_well_formed(query, &resolved)?;
    let mut resolved = resolved;
    let mut pattern = std::mem::replace(&mut resolved.pattern, RCel::Not(Vec::new(), Vec::new(), Span::default()));
    // Routed equalities leave the filters first: they are not residual tests.
    let routing = routing::plan_routing(query, &mut pattern, &resolved);
    let (mut residuals, gaps, plus_spans) = correlation::plan_residuals(query, &mut pattern, &resolved)?;
    resolved.pattern = pattern;
    // Iteration markers (docs/language.md#s3-4c), after every check that indexes variables.
    let iterations: Vec<(Span, VarId)> =
        plus_spans.iter().enumerate().map(|(i, s)| (*s, resolved.vars.intern(VarKind::Iteration(i)))).collect();
    for r in &mut residuals {
        r.iteration = r.plus.map(|i| iterations[i].1);
    }
    // Strategies: CORE C++ compatibility evaluates them as ALL.
    let strategy = match query.strategy {
        Strategy::All | Strategy::Any => query.strategy,
        s if opts.compat_ignore_strategy => {
            let span = query.strategy_span.unwrap_or(query.select_span);
            warnings.push(
                Diagnostic::warning(
                    "W0404",
                    format!("strategy {} evaluated as ALL (compat_ignore_strategy)", s.keyword()),
                    span,
                )
                .with_label("CORE C++ ignores selection strategies"),
            );
            Strategy::All
        }
        s => s,
    };
    // A trailing absence needs time stamps and a bounded window, and is not combined with
    // consumption (E0304).
    let deadline_nanos = match deadline {
        Some(d) => Some(absence::check_trailing(query, &window, d)?),
        None => None,
    };
    // Lints.
    lints::safety(&query.pattern, &mut warnings);
    valuation_lint::valuation_blowup(&query.pattern, &mut warnings);
    absent_names::selected_absent_names(query, &mut warnings);
    if query.within.is_none() {
        warnings.push(
            Diagnostic::warning(
                "W0402",
                "no WITHIN clause: partial matches are only released by consumption",
                query.select_span,
            )
            .with_label("memory grows with the stream; add WITHIN to bound it"),
        );
    }
    Ok(Plan {
        schema: resolved.schema,
        pattern: resolved.pattern,
        trailing: resolved.trailing.zip(deadline_nanos),
        pattern_span: query.pattern.span,
        regexes,
        variables: resolved.vars,
        projection: resolved.projection,
        strategy,
        partition_by,
        window,
        consume: query.consume,
        limit,
        warnings,
        residuals,
        iterations,
        routing,
        measures,
        gaps,
    })
}

/// Output of the name pass, shared by the later passes.
pub(crate) struct Resolved {
    pub schema: Schema,
    pub vars: Variables,
    pub pattern: RCel,
    /// The trailing `ABSENT(β) FOR d`, resolved, one absence per alternative (its duration
    /// is in the query).
    pub trailing: Option<Vec<Absence>>,
    pub projection: Projection,
    /// `types(x)` of docs/language.md#s4-1 for every variable.
    pub capturable: Vec<Vec<TypeId>>,
    /// Variable of each filter `x[P]` of the query, keyed by the span of `x[P]`.
    pub filter_vars: Vec<(Span, VarId)>,
    /// Variable of each `y` of `y.attr` and of aggregates (filters and measures),
    /// keyed by the span of `y`.
    pub ref_vars: Vec<(Span, VarId)>,
}

impl Resolved {
    /// The variable resolved for the reference `y` at `span`.
    pub fn ref_var(&self, span: Span) -> VarId {
        self.ref_vars.iter().find(|(s, _)| *s == span).map(|(_, v)| *v).expect("every reference was resolved")
    }

    /// The variable resolved for the filter term at `span`.
    pub fn filter_var(&self, span: Span) -> VarId {
        self.filter_vars.iter().find(|(s, _)| *s == span).map(|(_, v)| *v).expect("every filter term was resolved")
    }
}
