//! Absences whose filters read the match (docs/language.md#s3-3a): `A AS a ;
//! ABSENT(B FILTER B[x < c.y]) ; C AS c`. The automaton cannot evaluate such an absence,
//! so it is taken out of the formula (the automaton then keeps every gap, a superset of
//! the answer) and tested per valuation: the runtime keeps every event of the window and
//! reads the gap's events of the absent type ([`GapCheck`]).
//!
//! The test must find the gap from the valuation's captures alone, which is refused with
//! E0500 when it cannot: the absence must stand in the chain of the whole formula (not
//! under `+` or `OR`), the pattern before it must end and the one after it start with a
//! marked event, and each event of either side must carry a variable that only its side
//! binds.

use super::correlation::reads_other_events;
use super::{AtomEdge, RCel, RFilter};
use crate::bitset::BitSet;
use ceql_syntax::ast::{self, CelKind, Filter};
use ceql_syntax::{Diagnostic, Span};

/// One absence tested per valuation.
#[derive(Clone, Debug)]
pub struct GapCheck {
    /// The absent atom: its event types, and the variables an event of each binds (its
    /// own variables, which hold the gap's event in the filters).
    pub edges: Vec<AtomEdge>,
    /// Its filters, all of which must hold for an event to violate the absence.
    pub filters: Vec<RFilter>,
    /// Variables that only the patterns before the gap bind: a position captured by one
    /// of them is before the gap.
    pub left_only: BitSet,
    /// Variables that only the patterns after the gap bind.
    pub right_only: BitSet,
}

/// Takes the absences whose filters read other events out of `pattern` and plans their
/// test, refusing with E0500 what the test cannot evaluate.
/// `n_vars` is the number of variables of the query.
pub(super) fn plan_gaps(query: &ast::Query, pattern: &mut RCel, n_vars: usize) -> Result<Vec<GapCheck>, Diagnostic> {
    let chain = super::absence::seq_chain(&query.pattern);
    if let Some(last) = chain.last().filter(|_| chain.len() > 1) {
        if let CelKind::Absent(a, Some(_)) = &last.kind {
            if a.iter().flat_map(|b| &b.filters).any(syntax_reads_other_events) {
                return Err(unsupported(
                    last.span,
                    "a trailing ABSENT(...) FOR whose filters read other events",
                    "its deadline is checked without the match; filter it on its own event only",
                ));
            }
        }
    }
    let mut gaps = Vec::new();
    let mut top = pattern;
    while let RCel::Filter(x, _) | RCel::As(x, _) = top {
        top = x;
    }
    scan(top, true, &[], n_vars, &mut gaps)?;
    Ok(gaps)
}

fn syntax_reads_other_events(f: &Filter) -> bool {
    match f {
        Filter::Var { pred, .. } => pred.reads_other_events(),
        Filter::And(a, b) | Filter::Or(a, b) => syntax_reads_other_events(a) || syntax_reads_other_events(b),
    }
}

fn unsupported(span: Span, what: &str, label: &str) -> Diagnostic {
    Diagnostic::error("E0500", format!("not supported yet: {what}"), span).with_label(label.to_string())
}

/// Plans the correlated absences of the top chain's joints (`top`: `rc` is on the left
/// spine of the whole formula's chain; `right`: the capture sets of the patterns after
/// `rc` in that chain) and refuses those anywhere else.
fn scan(rc: &mut RCel, top: bool, right: &[BitSet], n_vars: usize, gaps: &mut Vec<GapCheck>) -> Result<(), Diagnostic> {
    if let RCel::SeqAbsent(l, absences, r) = rc {
        let correlated: Vec<usize> =
            (0..absences.len()).filter(|&i| absences[i].filters.iter().any(reads_other_events)).collect();
        if let Some(&first) = correlated.first() {
            let span = absences[first].span;
            if !top {
                return Err(unsupported(
                    span,
                    "an ABSENT(...) whose filters read other events inside an iteration, an OR or a nested chain",
                    "put it in the `;` chain of the whole formula",
                ));
            }
            let left_sets = capture_sets(l);
            let mut right_sets = capture_sets(r);
            right_sets.extend_from_slice(right);
            let (left_vars, right_vars) = (union(&left_sets), union(&right_sets));
            let left_only = minus(&left_vars, &right_vars, n_vars);
            let right_only = minus(&right_vars, &left_vars, n_vars);
            let told_apart = left_sets.iter().all(|s| s.intersects(&left_only))
                && right_sets.iter().all(|s| s.intersects(&right_only));
            if !told_apart {
                return Err(unsupported(
                    span,
                    "an ABSENT(...) whose filters read other events, between patterns whose events are not told apart",
                    "give the events before and after the absence AS names of their own",
                ));
            }
            if !ends_marked(last_element(l)) || !starts_marked(r) {
                return Err(unsupported(
                    span,
                    "an ABSENT(...) whose filters read other events next to a NOT(...) event",
                    "the gap must start after and end before events of the match",
                ));
            }
            for &i in &correlated {
                let a = &absences[i];
                gaps.push(GapCheck {
                    edges: a.edges.clone(),
                    filters: a.filters.clone(),
                    left_only: left_only.clone(),
                    right_only: right_only.clone(),
                });
            }
            let mut i = 0;
            absences.retain(|_| {
                i += 1;
                !correlated.contains(&(i - 1))
            });
        }
        if absences.is_empty() {
            let taken = std::mem::replace(rc, RCel::Not(Vec::new(), Vec::new(), Span::default()));
            if let RCel::SeqAbsent(l, _, r) = taken {
                *rc = RCel::Seq(l, r);
            }
        }
    }
    match rc {
        RCel::Seq(l, r) | RCel::SeqAbsent(l, _, r) => {
            let mut right_here = capture_sets(r);
            right_here.extend_from_slice(right);
            scan(l, top, &right_here, n_vars, gaps)?;
            scan(r, false, &[], n_vars, gaps)
        }
        RCel::Atom(..) | RCel::Not(..) => Ok(()),
        RCel::As(x, _) | RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => {
            scan(x, false, &[], n_vars, gaps)
        }
        RCel::Contiguous(a, b) | RCel::Or(a, b, _) | RCel::And(a, b, _) => {
            scan(a, false, &[], n_vars, gaps)?;
            scan(b, false, &[], n_vars, gaps)
        }
    }
}

/// The variable set of each way an atom of `rc` captures an event (its edge's variables
/// and the `AS` names around it): the capture labels its positions can carry.
fn capture_sets(rc: &RCel) -> Vec<BitSet> {
    fn walk(rc: &RCel, aliases: &BitSet, out: &mut Vec<BitSet>) {
        match rc {
            RCel::Atom(edges, _) => {
                for e in edges {
                    let mut s = aliases.clone();
                    s.union_with(&e.vars);
                    out.push(s);
                }
            }
            RCel::Not(..) => {}
            RCel::As(x, v) => {
                let mut inner = aliases.clone();
                inner.insert(*v);
                walk(x, &inner, out);
            }
            RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => walk(x, aliases, out),
            RCel::Seq(a, b)
            | RCel::Contiguous(a, b)
            | RCel::Or(a, b, _)
            | RCel::And(a, b, _)
            | RCel::SeqAbsent(a, _, b) => {
                walk(a, aliases, out);
                walk(b, aliases, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(rc, &BitSet::new(), &mut out);
    out
}

fn union(sets: &[BitSet]) -> BitSet {
    let mut u = BitSet::new();
    sets.iter().for_each(|s| u.union_with(s));
    u
}

fn minus(a: &BitSet, b: &BitSet, n_vars: usize) -> BitSet {
    let mut out = BitSet::new();
    (0..n_vars).filter(|&v| a.contains(v) && !b.contains(v)).for_each(|v| out.insert(v));
    out
}

/// The last pattern of a left-folded chain (`rc` itself if it is not a `;`).
fn last_element(rc: &RCel) -> &RCel {
    match rc {
        RCel::Seq(_, r) | RCel::SeqAbsent(_, _, r) => r,
        _ => rc,
    }
}

/// Whether every valuation of `rc` ends with a marked event.
fn ends_marked(rc: &RCel) -> bool {
    match rc {
        RCel::Atom(..) => true,
        RCel::Not(..) => false,
        RCel::As(x, _) | RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => ends_marked(x),
        RCel::Seq(_, b) | RCel::Contiguous(_, b) | RCel::SeqAbsent(_, _, b) => ends_marked(b),
        // A conjunction ends where the later of its sides ends (docs/language.md#s3-3c).
        RCel::Or(a, b, _) | RCel::And(a, b, _) => ends_marked(a) && ends_marked(b),
    }
}

/// Whether every valuation of `rc` starts with a marked event.
fn starts_marked(rc: &RCel) -> bool {
    match rc {
        RCel::Atom(..) => true,
        RCel::Not(..) => false,
        RCel::As(x, _) | RCel::Filter(x, _) | RCel::Plus(x, _) | RCel::ContiguousPlus(x, _) => starts_marked(x),
        RCel::Seq(a, _) | RCel::Contiguous(a, _) | RCel::SeqAbsent(a, _, _) => starts_marked(a),
        RCel::Or(a, b, _) | RCel::And(a, b, _) => starts_marked(a) && starts_marked(b),
    }
}
