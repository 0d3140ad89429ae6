//! Static checks and planning of the predicates that read other events
//! (docs/design/correlation.md): `y.attr`, `PREV(attr)` and aggregates.
//!
//! Checks: E0301 for such a term inside `NOT(...)`, E0204 for the attributes they
//! read, E0300 for their types (with declarations). The scope checks (E0301, E0305)
//! are in `scope.rs`. Planning ([`plan_residuals`]) takes the conjuncts that read
//! other events out of the automaton: they are tested per valuation during
//! enumeration (`crate::residual`). What the first version does not evaluate is
//! refused with E0500.

use super::{RCel, RFilter, Resolved, VarId};
use crate::bitset::BitSet;
use crate::value::{AttrType, TypeKind};
use ceql_syntax::ast::{self, AggFunc, Aggregate, Cel, CelKind, ExprKind, Filter, Pred};
use ceql_syntax::{Diagnostic, Span};

/// The span of the first term of `p` that reads another event, if any.
pub(crate) fn first_other_read(p: &Pred) -> Option<Span> {
    let mut found = None;
    p.for_each_expr(&mut |e| {
        if found.is_none() && matches!(e.kind, ExprKind::Ref { .. } | ExprKind::Prev(_) | ExprKind::Agg(_)) {
            found = Some(e.span);
        }
    });
    found
}

/// The span of the first `PREV(...)` of `p`, if any.
fn first_prev(p: &Pred) -> Option<Span> {
    let mut found = None;
    p.for_each_expr(&mut |e| {
        if found.is_none() && matches!(e.kind, ExprKind::Prev(_)) {
            found = Some(e.span);
        }
    });
    found
}

/// E0301: a filter inside `NOT(...)` reads one event, so it cannot read another; one
/// inside `ABSENT(...)` may read the match's other events (docs/language.md#s3-3a), but
/// not `PREV` (its own variables hold one event).
pub(super) fn check_not_filters(c: &Cel) -> Result<(), Diagnostic> {
    fn terms(f: &Filter, prev_only: bool, out: &mut Vec<Span>) {
        match f {
            Filter::Var { pred, .. } if prev_only => out.extend(first_prev(pred)),
            Filter::Var { pred, .. } => out.extend(first_other_read(pred)),
            Filter::And(a, b) | Filter::Or(a, b) => {
                terms(a, prev_only, out);
                terms(b, prev_only, out);
            }
        }
    }
    match &c.kind {
        CelKind::Atom(_) => Ok(()),
        CelKind::Not(_) | CelKind::Absent(..) => {
            let absent = matches!(c.kind, CelKind::Absent(..));
            let mut spans = Vec::new();
            c.kind.atomics().iter().flat_map(|a| &a.filters).for_each(|f| terms(f, absent, &mut spans));
            match spans.first() {
                Some(s) if absent => Err(Diagnostic::error("E0301", "a filter inside ABSENT reads PREV", *s)
                    .with_label("ABSENT(...) tests one event at a time: there is no previous event of its own")),
                Some(s) => Err(Diagnostic::error("E0301", "a filter inside NOT reads another event", *s).with_label(
                    "NOT(...) tests one event at a time; it cannot read other variables, PREV or aggregates",
                )),
                None => Ok(()),
            }
        }
        CelKind::As(x, _) | CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => {
            check_not_filters(x)
        }
        CelKind::Seq(a, b) | CelKind::Contiguous(a, b) | CelKind::Or(a, b) | CelKind::And(a, b) => {
            check_not_filters(a)?;
            check_not_filters(b)
        }
    }
}

/// The `(variable, attribute)` reads of `y.attr` and aggregates in `p`.
fn other_reads(p: &Pred) -> Vec<(&ast::Ident, Option<&ast::Ident>)> {
    let mut out = Vec::new();
    p.for_each_expr(&mut |e| match &e.kind {
        ExprKind::Ref { var, attr } => out.push((var, Some(attr))),
        ExprKind::Agg(a) => out.push((&a.var, a.attr.as_ref())),
        _ => {}
    });
    out
}

/// E0204 for the attributes read through `y.attr` and aggregates (filters and
/// measures): `type` and `stream` are not attributes; with declarations, some type
/// `y` can capture must declare the attribute.
pub(super) fn check_reference_attributes(query: &ast::Query, r: &Resolved) -> Result<(), Diagnostic> {
    let mut reads: Vec<(&ast::Ident, Option<&ast::Ident>)> = Vec::new();
    super::typing::for_each_filter_term(&query.pattern, &mut |_, pred| reads.extend(other_reads(pred)));
    reads.extend(query.measures.iter().map(|m| (&m.agg.var, m.agg.attr.as_ref())));
    for (_, attr) in &reads {
        if let Some(d) = attr.and_then(|a| super::names::reserved_attribute("E0204", a)) {
            return Err(d);
        }
    }
    if !r.schema.declared {
        return Ok(());
    }
    for (var, attr) in reads {
        let Some(attr) = attr else { continue };
        let types = &r.capturable[r.ref_var(var.span)];
        if !types.iter().any(|&t| r.schema.types[t as usize].attr_type(&attr.name).is_some()) {
            let names: Vec<String> = types.iter().map(|&t| r.schema.type_display(t)).collect();
            return Err(Diagnostic::error(
                "E0204",
                format!("unknown attribute `{}.{}`", var.name, attr.name),
                attr.span,
            )
            .with_label(format!(
                "not declared by any type `{}` can capture ({})",
                var.name,
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// The static kind of `y.attr` (of an aggregate's argument; `count` has none and
/// is an integer): unknown without declarations; with them, the declared kind over
/// the types `y` can capture, which must agree (E0300).
pub(super) fn ref_kind(r: &Resolved, var: VarId, attr: Option<&ast::Ident>) -> Result<TypeKind, Diagnostic> {
    let Some(attr) = attr else { return Ok(TypeKind::Int) };
    if !r.schema.declared {
        return Ok(TypeKind::Unknown);
    }
    let kinds: Vec<TypeKind> = r.capturable[var]
        .iter()
        .filter_map(|&t| r.schema.types[t as usize].attr_type(&attr.name))
        .map(AttrType::kind)
        .collect();
    let numeric = kinds.iter().all(|k| matches!(k, TypeKind::Int | TypeKind::Float));
    if kinds.is_empty() {
        Ok(TypeKind::Null)
    } else if numeric {
        Ok(if kinds.iter().all(|k| *k == TypeKind::Int) { TypeKind::Int } else { TypeKind::Float })
    } else if kinds.windows(2).all(|w| w[0] == w[1]) {
        Ok(kinds[0])
    } else {
        Err(Diagnostic::error(
            "E0300",
            format!("attribute `{}` has incompatible types across the event types this variable captures", attr.name),
            attr.span,
        ))
    }
}

/// The kind of an aggregate whose argument has kind `arg` (E0300 for `sum`, `avg`,
/// `min` and `max` of a non-number).
pub(super) fn aggregate_kind(a: &Aggregate, arg: TypeKind) -> Result<TypeKind, Diagnostic> {
    let numeric_only = matches!(a.func, AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max);
    if numeric_only && !arg.may_be_numeric() {
        return Err(Diagnostic::error(
            "E0300",
            format!("{} needs numbers, found {}", a.func.name(), arg.name()),
            a.attr.as_ref().map_or(a.span, |i| i.span),
        ));
    }
    Ok(match a.func {
        AggFunc::Count => TypeKind::Int,
        AggFunc::Avg => TypeKind::Float,
        _ => arg,
    })
}

/// A measure of the `SELECT` list (docs/language.md#s3-5a), resolved: what the runtime
/// computes per output and what the output's column is named and typed after.
#[derive(Clone, Debug)]
pub struct MeasurePlan {
    /// Its name (`AS n`), as written.
    pub name: String,
    /// The aggregate function.
    pub func: AggFunc,
    /// The variable aggregated over.
    pub var: VarId,
    /// The attribute read (none for `count`).
    pub attr: Option<String>,
    /// The static kind of its value: from the declarations, `Unknown` without them.
    pub kind: TypeKind,
    /// Span of the aggregate in the query.
    pub span: Span,
}

/// Column names of the outputs (`run_arrow`, `join_events`) that a measure may not take.
pub const MEASURE_RESERVED: [&str; 7] = ["match_id", "start", "end", "positions", "variables", "index", "position"];

/// E0210: measure names are unique and none is an output column's, without regard to
/// case (Spark's column names are case-insensitive).
pub(super) fn check_measure_names(query: &ast::Query) -> Result<(), Diagnostic> {
    let mut seen: Vec<String> = Vec::new();
    for m in &query.measures {
        let low = m.name.name.to_lowercase();
        let taken = if MEASURE_RESERVED.contains(&low.as_str()) {
            Some("an output column has this name")
        } else if seen.contains(&low) {
            Some("an earlier measure has this name")
        } else {
            None
        };
        if let Some(why) = taken {
            return Err(Diagnostic::error("E0210", format!("measure name `{}` is taken", m.name.name), m.name.span)
                .with_label(why));
        }
        seen.push(low);
    }
    Ok(())
}

/// Type-checks the measures of the SELECT list (E0300) and resolves them.
pub(super) fn check_measures(query: &ast::Query, r: &Resolved) -> Result<Vec<MeasurePlan>, Diagnostic> {
    query
        .measures
        .iter()
        .map(|m| {
            let var = r.ref_var(m.agg.var.span);
            let arg = ref_kind(r, var, m.agg.attr.as_ref())?;
            let kind = aggregate_kind(&m.agg, arg)?;
            Ok(MeasurePlan {
                name: m.name.name.clone(),
                func: m.agg.func,
                var,
                attr: m.agg.attr.as_ref().map(|a| a.name.clone()),
                kind,
                span: m.agg.span,
            })
        })
        .collect()
}

/// A filter conjunct tested per valuation rather than in the automaton.
#[derive(Clone, Debug)]
pub struct ResidualFilter {
    /// The conjunct (it may hold unary terms under an `OR` with a non-unary one).
    pub filter: RFilter,
    /// Index of the innermost `+` around it (in the list [`plan_residuals`] returns), if
    /// any: the conjunct is then tested per iteration (docs/language.md#s3-4c).
    pub plus: Option<usize>,
    /// The iteration marker of that `+` (set by `analyze` once the marker is interned).
    pub iteration: Option<VarId>,
}

/// The innermost iteration around a filter, while walking (docs/language.md#s3-4c).
#[derive(Clone, Copy)]
struct Around {
    /// Span of the `+`, as [`RCel::Plus`] keeps it.
    span: Span,
    /// Why its iterations cannot be cut apart, if they cannot (the E0500 label).
    refused: Option<&'static str>,
}

/// Whether an iteration of `c` can start with an event no variable binds (a leading
/// `NOT(...)`): such a first event carries no iteration marker.
fn can_start_unmarked(c: &Cel) -> bool {
    match &c.kind {
        CelKind::Atom(_) | CelKind::Absent(..) => false,
        CelKind::Not(_) => true,
        CelKind::As(x, _) | CelKind::Filter(x, _) | CelKind::Plus(x) | CelKind::ContiguousPlus(x) => {
            can_start_unmarked(x)
        }
        CelKind::Seq(..) => super::absence::seq_chain(c).first().is_some_and(|e| can_start_unmarked(e)),
        CelKind::Contiguous(a, _) => can_start_unmarked(a),
        CelKind::Or(a, b) | CelKind::And(a, b) => can_start_unmarked(a) || can_start_unmarked(b),
    }
}

/// Whether a resolved filter has a term that reads other events.
pub(super) fn reads_other_events(f: &RFilter) -> bool {
    match f {
        RFilter::Var { pred, .. } => pred.reads_other_events(),
        RFilter::And(a, b) | RFilter::Or(a, b) => reads_other_events(a) || reads_other_events(b),
        RFilter::Residual => false,
    }
}

/// Moves every filter conjunct that reads other events out of the formula into
/// `residuals` (the automaton treats it as TRUE), after refusing with E0500 what
/// the residual test does not evaluate yet:
///
/// * such a filter inside an iteration whose first event can be unmarked (a leading
///   `NOT(...)`): the iteration marker that cuts a valuation into iterations
///   (docs/language.md#s3-4c) would not be on it;
/// * a variable of such a conjunct that the formula can also bind outside the
///   filtered sub-formula `ψ` (the test sees the whole valuation, not `ψ`'s part);
///
/// Under `NEXT`, `LAST` and `MAX` the strategy then chooses among the passing
/// valuations in the window (docs/language.md#s3-6a).
/// Also returns the spans of the iterations whose filters are tested per iteration:
/// `analyze` gives each a marker variable.
#[allow(clippy::type_complexity)]
pub(super) fn plan_residuals(
    query: &ast::Query,
    pattern: &mut RCel,
    r: &Resolved,
) -> Result<(Vec<ResidualFilter>, Vec<super::correlated_absence::GapCheck>, Vec<Span>), Diagnostic> {
    // Atoms in pre-order with the variables that capture them (aliases included).
    let mut atoms: Vec<BitSet> = Vec::new();
    collect_atoms(pattern, &BitSet::new(), &mut atoms);
    let mut residuals = Vec::new();
    let mut next_atom = 0;
    let mut w = Walk { atoms: &atoms, next_atom: &mut next_atom, r, out: &mut residuals, pluses: Vec::new() };
    w.walk(&query.pattern, pattern, None)?;
    let pluses = w.pluses;
    // Absences whose filters read the match (docs/language.md#s3-3a): tested per valuation.
    let gaps = super::correlated_absence::plan_gaps(query, pattern, r.vars.len())?;
    Ok((residuals, gaps, pluses))
}

fn collect_atoms(c: &RCel, aliases: &BitSet, out: &mut Vec<BitSet>) {
    match c {
        RCel::Atom(edges, _) => {
            let mut vars = aliases.clone();
            for e in edges {
                vars.union_with(&e.vars);
            }
            out.push(vars);
        }
        RCel::Not(..) => {}
        RCel::As(x, v) => {
            let mut inner = aliases.clone();
            inner.insert(*v);
            collect_atoms(x, &inner, out);
        }
        RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => collect_atoms(x, aliases, out),
        RCel::Seq(a, b)
        | RCel::Contiguous(a, b)
        | RCel::Or(a, b, _)
        | RCel::And(a, b, _)
        | RCel::SeqAbsent(a, _, b) => {
            collect_atoms(a, aliases, out);
            collect_atoms(b, aliases, out);
        }
    }
}

fn count_atoms(c: &RCel) -> usize {
    match c {
        RCel::Atom(..) => 1,
        RCel::Not(..) => 0,
        RCel::As(x, _) | RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => count_atoms(x),
        RCel::Seq(a, b)
        | RCel::Contiguous(a, b)
        | RCel::Or(a, b, _)
        | RCel::And(a, b, _)
        | RCel::SeqAbsent(a, _, b) => count_atoms(a) + count_atoms(b),
    }
}

/// The state of [`Walk::walk`].
struct Walk<'a> {
    atoms: &'a [BitSet],
    next_atom: &'a mut usize,
    r: &'a Resolved,
    out: &'a mut Vec<ResidualFilter>,
    /// Spans of the iterations with a filter tested per iteration.
    pluses: Vec<Span>,
}

impl Walk<'_> {
    /// Walks the syntax tree and its resolved twin together (they have the same shape);
    /// `plus` is the innermost iteration around `c`.
    fn walk(&mut self, c: &Cel, rc: &mut RCel, plus: Option<Around>) -> Result<(), Diagnostic> {
        match (&c.kind, rc) {
            (CelKind::Atom(_), RCel::Atom(..)) => {
                *self.next_atom += 1;
                Ok(())
            }
            (CelKind::Not(_), RCel::Not(..)) => Ok(()),
            (CelKind::As(x, _), RCel::As(rx, _)) => self.walk(x, rx, plus),
            (CelKind::Plus(x), RCel::Plus(rx, span)) | (CelKind::ContiguousPlus(x), RCel::ContiguousPlus(rx, span)) => {
                let refused = can_start_unmarked(x)
                    .then_some("an iteration that can start with a NOT(...) event cannot be cut into iterations");
                self.walk(x, rx, Some(Around { span: *span, refused }))
            }
            (CelKind::Seq(..), rc)
                if super::absence::seq_chain(c).iter().any(|e| matches!(e.kind, CelKind::Absent(..))) =>
            {
                // A chain with absences is resolved as a left fold of its patterns (names.rs).
                let elements: Vec<&Cel> = super::absence::seq_chain(c)
                    .into_iter()
                    .filter(|e| !matches!(e.kind, CelKind::Absent(..)))
                    .collect();
                let mut resolved = Vec::new();
                fold_elements(rc, elements.len(), &mut resolved);
                for (e, re) in elements.into_iter().zip(resolved) {
                    self.walk(e, re, plus)?;
                }
                Ok(())
            }
            (CelKind::Seq(a, b), RCel::Seq(ra, rb))
            | (CelKind::Contiguous(a, b), RCel::Contiguous(ra, rb))
            | (CelKind::Or(a, b), RCel::Or(ra, rb, _))
            | (CelKind::And(a, b), RCel::And(ra, rb, _)) => {
                self.walk(a, ra, plus)?;
                self.walk(b, rb, plus)
            }
            (CelKind::Filter(x, f), RCel::Filter(rx, rf)) => {
                let first = *self.next_atom;
                let n = count_atoms(rx);
                self.walk(x, rx, plus)?;
                let mut outside = BitSet::new();
                for (i, vars) in self.atoms.iter().enumerate() {
                    if i < first || i >= first + n {
                        outside.union_with(vars);
                    }
                }
                let rf_taken = std::mem::replace(rf, RFilter::Residual);
                *rf = self.split(f, rf_taken, plus, &outside)?;
                Ok(())
            }
            _ => unreachable!("the resolved formula has the shape of the syntax tree"),
        }
    }

    /// Replaces the conjuncts of `rf` (resolved from `f`) that read other events.
    fn split(
        &mut self,
        f: &Filter,
        rf: RFilter,
        plus: Option<Around>,
        outside: &BitSet,
    ) -> Result<RFilter, Diagnostic> {
        if let (Filter::And(a, b), RFilter::And(ra, rb)) = (f, rf.clone()) {
            let left = self.split(a, *ra, plus, outside)?;
            let right = self.split(b, *rb, plus, outside)?;
            return Ok(RFilter::And(Box::new(left), Box::new(right)));
        }
        if !reads_other_events(&rf) {
            return Ok(rf);
        }
        check_conjunct(f, plus, outside, self.r)?;
        let plus = plus.map(|p| match self.pluses.iter().position(|s| *s == p.span) {
            Some(i) => i,
            None => {
                self.pluses.push(p.span);
                self.pluses.len() - 1
            }
        });
        self.out.push(ResidualFilter { filter: rf, plus, iteration: None });
        Ok(RFilter::Residual)
    }
}

/// The `n` patterns of a chain resolved as a left fold (`Seq`/`SeqAbsent` down the left
/// spine), left to right.
fn fold_elements<'a>(rc: &'a mut RCel, n: usize, out: &mut Vec<&'a mut RCel>) {
    if n == 1 {
        out.push(rc);
        return;
    }
    match rc {
        RCel::Seq(l, r) | RCel::SeqAbsent(l, _, r) => {
            fold_elements(l, n - 1, out);
            out.push(r);
        }
        _ => unreachable!("a chain of {n} patterns folds into {} joints", n - 1),
    }
}

/// The E0500 refusals for one conjunct that reads other events.
fn check_conjunct(f: &Filter, plus: Option<Around>, outside: &BitSet, r: &Resolved) -> Result<(), Diagnostic> {
    match f {
        Filter::And(a, b) | Filter::Or(a, b) => {
            check_conjunct(a, plus, outside, r)?;
            check_conjunct(b, plus, outside, r)
        }
        Filter::Var { var, pred, span } => {
            if let (Some(Around { refused: Some(why), .. }), true) = (plus, pred.reads_other_events()) {
                return Err(Diagnostic::error(
                    "E0500",
                    "not supported yet: a filter that reads other events inside an iteration whose first event can be a NOT(...) event",
                    *span,
                )
                .with_label(format!("{why}; move the filter after the `+` if every iteration's events may be compared together")));
            }
            let mut vars = vec![(r.filter_var(*span), var.span, var.display())];
            let mut refs = Vec::new();
            pred.for_each_expr(&mut |e| match &e.kind {
                ExprKind::Ref { var, .. } => refs.push(var),
                ExprKind::Agg(a) => refs.push(&a.var),
                _ => {}
            });
            vars.extend(refs.into_iter().map(|id| (r.ref_var(id.span), id.span, id.name.clone())));
            for (v, vspan, name) in vars {
                if outside.contains(v) {
                    return Err(Diagnostic::error(
                        "E0500",
                        format!(
                            "not supported yet: `{name}` is read by a filter between events but is also bound outside the formula it filters"
                        ),
                        vspan,
                    )
                    .with_label("give the events of the filtered formula their own AS name"));
                }
            }
            Ok(())
        }
    }
}
