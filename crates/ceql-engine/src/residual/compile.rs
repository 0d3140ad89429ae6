//! Compiles the residual filters of a plan over virtual slots, and fixes which
//! attributes the runtime stores per position.

use super::{FilterIr, Source, TermIr};
use crate::analyze::{Plan, RFilter, VarId, VarKind, Variables};
use crate::bitset::BitSet;
use crate::cea::{CaptureLabels, PredTable};
use crate::predicate::{compile_pred, AttrResolver, AttrSlot, Row};
use crate::schema::TypeId;
use crate::value::Value;
use ceql_syntax::ast::{AggFunc, ExprKind, Ident};
use ceql_syntax::Diagnostic;

/// Everything the runtime needs to test valuations against the residual filters.
#[derive(Clone, Debug)]
pub(crate) struct ResidualPlan {
    /// The conjuncts, all of which must hold.
    pub filters: Vec<FilterIr>,
    /// The stored attributes: their slots in the query's attribute layout.
    stored: Vec<AttrSlot>,
    /// `reads[t][i]`: events of type `t` have stored attribute `i` (with declarations,
    /// an attribute a type does not declare is NULL, docs/language.md#s1-2).
    reads: Vec<Vec<bool>>,
    /// The variables of each internal capture label.
    label_vars: Vec<BitSet>,
    /// The label each internal label has after the user's projection (0: not reported).
    pub to_user: Vec<u32>,
    /// The measures of the `SELECT` list, in its order (docs/language.md#s3-5a).
    pub measures: Vec<MeasureIr>,
    /// `NEXT`, `LAST` or `MAX` choosing among the passing valuations of each position
    /// (docs/language.md#s3-6a); `None` when the automaton applies the strategy.
    pub select: Option<ceql_syntax::ast::Strategy>,
    /// Absences that read the match, tested on each valuation's gap (docs/language.md#s3-3a).
    /// With any, every accepted event is stored, its row ending with its type
    /// (`Value::Int`) and its partition key (`Value::Str`, hexadecimal).
    pub gaps: Vec<GapIr>,
}

/// One absence tested per valuation.
#[derive(Clone, Debug)]
pub(crate) struct GapIr {
    /// The absence's filters, all of which must hold for an event to violate it.
    pub filters: Vec<FilterIr>,
    /// The absent types, and the variables an event of each binds (its own variables).
    pub own: Vec<(TypeId, BitSet)>,
    /// Per internal label: whether a position with it is before the gap.
    pub left: Vec<bool>,
    /// Per internal label: whether a position with it is after the gap.
    pub right: Vec<bool>,
}

/// One measure: an aggregate over a variable's events, read from the stored attributes.
#[derive(Clone, Debug)]
pub(crate) struct MeasureIr {
    /// The aggregate function.
    pub func: AggFunc,
    /// The variable aggregated over.
    pub var: VarId,
    /// The stored attribute read (none for `count`).
    pub attr: Option<usize>,
    /// How the aggregate is written (`avg(b.price)`), for errors.
    pub text: String,
}

impl ResidualPlan {
    /// Compiles the residual filters of `plan`; `internal` are the capture labels of
    /// the automaton (every variable), `to_user` their projection.
    pub(crate) fn new(
        plan: &Plan,
        table: &mut PredTable,
        internal: &CaptureLabels,
        to_user: Vec<u32>,
    ) -> Result<ResidualPlan, Diagnostic> {
        let mut names: Vec<String> = Vec::new();
        let filters = plan
            .residuals
            .iter()
            .map(|r| {
                let f = filter(&r.filter, plan, &mut names)?;
                // Inside an iteration: tested on each iteration (docs/language.md#s3-4c).
                Ok(match r.iteration {
                    Some(marker) => FilterIr::PerIteration(marker, Box::new(f)),
                    None => f,
                })
            })
            .collect::<Result<Vec<_>, Diagnostic>>()?;
        let measures = plan
            .measures
            .iter()
            .map(|m| {
                let attr = m.attr.as_ref().map(|a| stored_index(&mut names, a));
                let var = match plan.variables.kind(m.var) {
                    VarKind::Alias(n) | VarKind::Type(n) => n.clone(),
                    VarKind::Qualified(..) | VarKind::Iteration(_) => format!("{}", m.var),
                };
                let text = match &m.attr {
                    Some(a) => format!("{}({var}.{a})", m.func.name()),
                    None => format!("{}({var})", m.func.name()),
                };
                MeasureIr { func: m.func, var: m.var, attr, text }
            })
            .collect();
        let gaps = plan
            .gaps
            .iter()
            .map(|g| {
                let filters = g.filters.iter().map(|f| filter(f, plan, &mut names)).collect::<Result<Vec<_>, _>>()?;
                let own = g.edges.iter().map(|e| (e.ty, e.vars.clone())).collect();
                let side = |only: &BitSet| {
                    (0..internal.len() as u32).map(|l| internal.vars(l).iter().any(|&v| only.contains(v))).collect()
                };
                Ok(GapIr { filters, own, left: side(&g.left_only), right: side(&g.right_only) })
            })
            .collect::<Result<Vec<_>, Diagnostic>>()?;
        let stored = names.iter().map(|n| table.slot(n)).collect();
        let schema = &plan.schema;
        let reads = schema
            .types
            .iter()
            .map(|td| names.iter().map(|n| !schema.declared || td.attr_type(n).is_some()).collect())
            .collect();
        let label_vars = (0..internal.len() as u32)
            .map(|l| {
                let mut s = BitSet::new();
                internal.vars(l).iter().for_each(|&v| s.insert(v));
                s
            })
            .collect();
        let select = plan.selects_after_test().then_some(plan.strategy);
        Ok(ResidualPlan { filters, stored, reads, label_vars, to_user, measures, select, gaps })
    }

    /// The stored row of an event of type `ty`.
    pub(crate) fn row<'a, R: Row + ?Sized>(
        &'a self,
        ty: TypeId,
        row: &'a R,
    ) -> impl ExactSizeIterator<Item = Value> + 'a {
        let reads = &self.reads[ty as usize];
        self.stored
            .iter()
            .zip(reads)
            .map(move |(&slot, &read)| if read { row.get(slot).to_owned_value() } else { Value::Null })
    }

    /// The stored row of an event of type `ty` with partition key `key`, for a plan
    /// with gaps: its attributes, then its type and key ([`ResidualPlan::gaps`]).
    pub(crate) fn row_with_key<'a, R: Row + ?Sized>(
        &'a self,
        ty: TypeId,
        row: &'a R,
        key: &[u8],
    ) -> impl Iterator<Item = Value> + 'a {
        let tail = [Value::Int(ty as i64), Value::Str(key_text(key))];
        self.row(ty, row).chain(tail)
    }

    /// The number of stored attributes (a row of a plan with gaps has two values more).
    pub(crate) fn stored_len(&self) -> usize {
        self.stored.len()
    }

    /// Whether internal label `l` captures variable `v`.
    #[inline]
    pub(crate) fn captures(&self, l: u32, v: VarId) -> bool {
        self.label_vars[l as usize].contains(v)
    }
}

fn filter(f: &RFilter, plan: &Plan, names: &mut Vec<String>) -> Result<FilterIr, Diagnostic> {
    Ok(match f {
        RFilter::Var { var, pred } => {
            let mut slots =
                Slots { names, vars: &plan.variables, sources: Vec::new(), texts: Vec::new(), refs: Vec::new() };
            let ir = compile_pred(pred, &mut slots, &plan.regexes)?;
            let Slots { sources, texts, refs, .. } = slots;
            FilterIr::Term(Box::new(TermIr {
                var: *var,
                pred: ir,
                sources,
                names: texts,
                refs,
                prev: pred.uses_prev(),
            }))
        }
        RFilter::And(a, b) => FilterIr::And(Box::new(filter(a, plan, names)?), Box::new(filter(b, plan, names)?)),
        RFilter::Or(a, b) => FilterIr::Or(Box::new(filter(a, plan, names)?), Box::new(filter(b, plan, names)?)),
        RFilter::Residual => unreachable!("residual conjuncts are not nested"),
    })
}

/// Gives every distinct read of a term a virtual slot.
struct Slots<'a> {
    /// The stored attribute names (shared by every term).
    names: &'a mut Vec<String>,
    vars: &'a Variables,
    sources: Vec<Source>,
    texts: Vec<String>,
    refs: Vec<VarId>,
}

/// The index of stored attribute `name`, added if new.
fn stored_index(names: &mut Vec<String>, name: &str) -> usize {
    match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.to_string());
            names.len() - 1
        }
    }
}

impl Slots<'_> {
    fn stored(&mut self, name: &str) -> usize {
        stored_index(self.names, name)
    }

    fn slot(&mut self, source: Source, text: String) -> AttrSlot {
        let i = match self.sources.iter().position(|s| *s == source) {
            Some(i) => i,
            None => {
                self.sources.push(source);
                self.texts.push(text);
                self.sources.len() - 1
            }
        };
        i as AttrSlot
    }

    /// The variable a reference names: an `AS` name first, then an event type (as
    /// the name pass resolved it).
    fn var(&self, id: &Ident) -> VarId {
        self.vars
            .find(&VarKind::Alias(id.name.clone()))
            .or_else(|| self.vars.find(&VarKind::Type(id.name.clone())))
            .expect("references were resolved by the name pass")
    }
}

impl AttrResolver for Slots<'_> {
    fn resolve(&mut self, name: &str) -> Option<AttrSlot> {
        let a = self.stored(name);
        Some(self.slot(Source::Own(a), name.to_string()))
    }

    fn resolve_term(&mut self, term: &ExprKind) -> Option<AttrSlot> {
        Some(match term {
            ExprKind::Ref { var, attr } => {
                let v = self.var(var);
                let r = match self.refs.iter().position(|&x| x == v) {
                    Some(r) => r,
                    None => {
                        self.refs.push(v);
                        self.refs.len() - 1
                    }
                };
                let a = self.stored(&attr.name);
                self.slot(Source::Ref(r, a), format!("{}.{}", var.name, attr.name))
            }
            ExprKind::Prev(attr) => {
                let a = self.stored(&attr.name);
                self.slot(Source::Prev(a), format!("PREV({})", attr.name))
            }
            ExprKind::Agg(agg) => {
                let v = self.var(&agg.var);
                let a = agg.attr.as_ref().map(|id| self.stored(&id.name));
                self.slot(Source::Agg(agg.func, v, a), ceql_syntax::aggregate_to_string(agg))
            }
            _ => return None,
        })
    }
}

/// A partition key as text (hexadecimal), to store it among a row's values.
pub(crate) fn key_text(key: &[u8]) -> Box<str> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(key.len() * 2);
    for &b in key {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s.into_boxed_str()
}
