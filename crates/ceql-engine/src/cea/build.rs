//! The ε-free CEA construction of docs/language.md#s5-4 (Theorem 1 of [CORE], with the
//! reference's two corrections to `+`), followed by the top-level `q0`, trimming
//! and the projection marks.
//!
//! Filters are pushed down while building (LP normal form, docs/language.md#s5-2): `ψ FILTER x[P]`
//! conjoins `P` to the guard of every transition of `ψ` that binds `x`, and
//! `FILTER θ1 OR θ2` duplicates `ψ` (docs/language.md#s5-1).

use super::{product, Cea, Guard, StateId, Term, Transition};
use crate::analyze::{AtomEdge, Plan, Projection, RCel, RFilter, VarId};
use crate::bitset::BitSet;
use crate::predicate::{compile_pred, AttrResolver, AttrSlot, PredIr, Regexes};
use crate::schema::{Schema, TypeId};
use ceql_syntax::{ast, Diagnostic, Span};
use std::collections::HashMap;

/// The predicates of each event type, numbered per type (the bit index of docs/language.md#s5-3),
/// and the attribute layout they read.
#[derive(Clone, Debug, Default)]
pub struct PredTable {
    /// `per_type[t][b]` is predicate bit `b` of type `t`.
    pub per_type: Vec<Vec<PredIr>>,
    /// Attribute names read by the predicates, indexed by slot.
    pub attributes: Vec<String>,
    keys: HashMap<(TypeId, String), u32>,
}

impl PredTable {
    fn new(num_types: usize) -> Self {
        PredTable { per_type: vec![Vec::new(); num_types], attributes: Vec::new(), keys: HashMap::new() }
    }

    /// The slot of an attribute name, allocating one if needed.
    pub fn slot(&mut self, name: &str) -> AttrSlot {
        match self.attributes.iter().position(|a| a == name) {
            Some(i) => i as AttrSlot,
            None => {
                self.attributes.push(name.to_string());
                (self.attributes.len() - 1) as AttrSlot
            }
        }
    }

    /// The text of every predicate (printed as [`ceql_syntax::pred_to_string`] does),
    /// per type in bit order: how `explain` names a predicate bit.
    pub fn texts(&self) -> Vec<Vec<String>> {
        let mut texts: Vec<Vec<String>> = self.per_type.iter().map(|ps| vec![String::new(); ps.len()]).collect();
        for ((ty, text), &bit) in &self.keys {
            texts[*ty as usize][bit as usize] = text.clone();
        }
        texts
    }

    /// The bit of predicate `p` for type `ty`; structurally equal predicates share a bit.
    fn bit(&mut self, schema: &Schema, regexes: &Regexes, ty: TypeId, p: &ast::Pred) -> Result<u32, Diagnostic> {
        let key = (ty, ceql_syntax::pred_to_string(p));
        if let Some(&b) = self.keys.get(&key) {
            return Ok(b);
        }
        let ir = compile_pred(p, &mut Resolver { table: self, schema, ty }, regexes)?;
        let list = &mut self.per_type[ty as usize];
        list.push(ir);
        let b = (list.len() - 1) as u32;
        self.keys.insert(key, b);
        Ok(b)
    }
}

struct Resolver<'a> {
    table: &'a mut PredTable,
    schema: &'a Schema,
    ty: TypeId,
}

impl AttrResolver for Resolver<'_> {
    fn resolve(&mut self, name: &str) -> Option<AttrSlot> {
        // With declarations an attribute the type does not declare is NULL (docs/language.md#s1-2),
        // even if the event happens to carry a value for it.
        if self.schema.declared && self.schema.types[self.ty as usize].attr_type(name).is_none() {
            return None;
        }
        Some(self.table.slot(name))
    }
}

/// A transition guard while building: `TRUE`, one term (an atom's, with negative
/// literals in a conjunction's product), or a negated disjunction of terms (`NOT`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum G {
    True,
    Pos(Term),
    Neg(Vec<Term>),
}

/// A transition `(from, guard, vars, to)` while building.
#[derive(Clone, Debug)]
pub(super) struct Tr {
    pub(super) from: u32,
    pub(super) guard: G,
    pub(super) vars: BitSet,
    pub(super) to: u32,
}

/// A sub-automaton with local state numbers `0..n`.
#[derive(Clone, Debug)]
pub(super) struct Sub {
    pub(super) n: u32,
    pub(super) trans: Vec<Tr>,
    pub(super) init: Vec<u32>,
    pub(super) fin: Vec<u32>,
    /// Indices in `trans` of the transitions that enter a state of `fin`: the
    /// constructions copy exactly these, and finding them without a scan keeps a
    /// chain of n operators linear in n instead of quadratic.
    pub(super) into_fin: Vec<usize>,
    /// Per local state, the span of the construct that created it.
    pub(super) spans: Vec<Span>,
}

impl Sub {
    fn shifted(mut self, by: u32) -> Sub {
        for t in &mut self.trans {
            t.from += by;
            t.to += by;
        }
        self.init.iter_mut().for_each(|s| *s += by);
        self.fin.iter_mut().for_each(|s| *s += by);
        self
    }

    /// The disjoint union of `self` and `other` (the `OR` construction).
    fn union(self, other: Sub) -> Sub {
        let other = other.shifted(self.n);
        let offset = self.trans.len();
        let mut into_fin = self.into_fin;
        into_fin.extend(other.into_fin.iter().map(|i| i + offset));
        Sub {
            n: self.n + other.n,
            trans: self.trans.into_iter().chain(other.trans).collect(),
            init: self.init.into_iter().chain(other.init).collect(),
            fin: self.fin.into_iter().chain(other.fin).collect(),
            into_fin,
            spans: self.spans.into_iter().chain(other.spans).collect(),
        }
    }
}

/// Largest number of transitions a query's automaton may have while it is built
/// (`FILTER θ1 OR θ2` duplicates the filtered formula, so nested disjunctive
/// filters grow it exponentially): a query beyond it is refused with `E0102`
/// instead of exhausting memory at compile time.
pub const MAX_TRANSITIONS: usize = 1 << 20;

struct Builder<'a> {
    schema: &'a Schema,
    regexes: &'a Regexes,
    preds: PredTable,
    /// Span of the whole formula (the caret of a too-large automaton).
    span: Span,
    /// The iterations whose first events get a marker ([`Plan::iterations`]).
    iterations: &'a [(Span, VarId)],
}

impl Builder<'_> {
    fn sub(&mut self, c: &RCel) -> Result<Sub, Diagnostic> {
        let s = self.sub_unchecked(c)?;
        if s.trans.len() > MAX_TRANSITIONS {
            return Err(self.too_large());
        }
        Ok(s)
    }

    fn too_large(&self) -> Diagnostic {
        Diagnostic::error(
            "E0102",
            format!("the formula's automaton would have more than {MAX_TRANSITIONS} transitions"),
            self.span,
        )
        .with_label("each `FILTER ... OR ...` duplicates the formula it filters; use one predicate with OR inside")
    }

    fn too_large_and(&self, span: Span) -> Diagnostic {
        Diagnostic::error(
            "E0102",
            format!("the conjunction's product automaton would have more than {MAX_TRANSITIONS} transitions"),
            span,
        )
        .with_label("its size is the product of its sides' sizes; nest fewer conjunctions of large patterns")
    }

    fn sub_unchecked(&mut self, c: &RCel) -> Result<Sub, Diagnostic> {
        Ok(match c {
            RCel::Atom(edges, span) => atom(edges, *span),
            RCel::Not(edges, filters, span) => {
                let terms = self.terms(edges, filters, *span)?;
                Sub {
                    n: 2,
                    trans: vec![Tr { from: 0, guard: G::Neg(terms), vars: BitSet::new(), to: 1 }],
                    init: vec![0],
                    fin: vec![1],
                    into_fin: vec![0],
                    spans: vec![*span; 2],
                }
            }
            RCel::As(x, v) => {
                let mut s = self.sub(x)?;
                for t in &mut s.trans {
                    if !t.vars.is_empty() {
                        t.vars.insert(*v);
                    }
                }
                s
            }
            RCel::Filter(x, f) => {
                let s = self.sub(x)?;
                self.filter(s, f)?
            }
            RCel::Or(a, b, span) => {
                let mut u = self.sub(a)?.union(self.sub(b)?);
                // The states of a choice between single events (`(A OR B) AS x`) are
                // named after the whole choice, not after one of its atoms.
                if is_choice(c) {
                    u.spans.iter_mut().for_each(|s| *s = *span);
                }
                u
            }
            RCel::Seq(a, b) => self.sequence(a, b, Some(G::True))?,
            RCel::SeqAbsent(a, absences, b) => {
                let mut terms = Vec::new();
                for x in absences {
                    terms.extend(self.terms(&x.edges, &x.filters, x.span)?);
                }
                self.sequence(a, b, Some(G::Neg(terms)))?
            }
            RCel::Contiguous(a, b) => self.sequence(a, b, None)?,
            RCel::And(a, b, span) => {
                let (a, b) = (self.sub(a)?, self.sub(b)?);
                product::conjunction(&a, &b, *span, MAX_TRANSITIONS).map_err(|_| self.too_large_and(*span))?
            }
            // An iteration of an iteration is the outer one (`(ψ+)+ = ψ+`, and
            // `(ψ:+):+ = ψ:+`; any other mix is `ψ+`): building each level would
            // copy the body's final-entering transitions again, quadratically
            // for a chain like `A+++…+`.
            RCel::Plus(_, span) | RCel::ContiguousPlus(_, span) => {
                let (body, contiguous) = innermost_iteration(c);
                let mut s = self.sub(body)?;
                self.mark_iterations(c, &mut s);
                iterate(s, !contiguous, *span)
            }
        })
    }

    /// The positive terms of an atom with filters (`FILTER θ1 OR θ2` gives several): the
    /// disjunction that `NOT(...)` and `ABSENT(...)` negate.
    fn terms(&mut self, edges: &[AtomEdge], filters: &[RFilter], span: Span) -> Result<Vec<Term>, Diagnostic> {
        let mut a = atom(edges, span);
        for f in filters {
            a = self.filter(a, f)?;
        }
        Ok(a.trans
            .into_iter()
            .map(|t| match t.guard {
                G::Pos(term) => term,
                _ => unreachable!("an atom with filters has only positive guards"),
            })
            .collect())
    }

    /// `ψ1 ; ψ2` (with `TRUE` loops on `I2`), `ψ1 ; ABSENT(β) ; ψ2` (with `¬β` loops: the
    /// skipped events are exactly those strictly between the two sides) or `ψ1 : ψ2`
    /// (`skip` is `None`: no loops).
    fn sequence(&mut self, a: &RCel, b: &RCel, skip: Option<G>) -> Result<Sub, Diagnostic> {
        let a = self.sub(a)?;
        let b = self.sub(b)?.shifted(a.n);
        let mut trans = a.trans;
        for i in a.into_fin {
            for &q in &b.init {
                let copy = Tr { to: q, ..trans[i].clone() };
                trans.push(copy);
            }
        }
        if let Some(guard) = skip {
            for &q in &b.init {
                trans.push(Tr { from: q, guard: guard.clone(), vars: BitSet::new(), to: q });
            }
        }
        let offset = trans.len();
        trans.extend(b.trans);
        let into_fin = b.into_fin.iter().map(|i| i + offset).collect();
        let spans = a.spans.into_iter().chain(b.spans).collect();
        Ok(Sub { n: a.n + b.n, trans, init: a.init, fin: b.fin, into_fin, spans })
    }

    /// Iteration markers (docs/language.md#s3-4c): when one of the directly nested
    /// iterations `c` has a marker, every transition of the body `s` that leaves an
    /// initial state binds it too. `iterate` copies exactly these transitions to start
    /// the next iterations, so the marker binds the first event of every iteration and
    /// nothing else (no transition enters an initial state). A transition without
    /// variables (a leading `NOT`) is left alone: the analysis refuses such bodies.
    fn mark_iterations(&self, mut c: &RCel, s: &mut Sub) {
        if self.iterations.is_empty() {
            return;
        }
        let mut markers = Vec::new();
        while let RCel::Plus(x, span) | RCel::ContiguousPlus(x, span) = c {
            markers.extend(self.iterations.iter().filter(|(sp, _)| sp == span).map(|(_, v)| *v));
            c = x;
        }
        if markers.is_empty() {
            return;
        }
        let is_init = membership(s.n as usize, &s.init);
        for t in &mut s.trans {
            if is_init[t.from as usize] && !t.vars.is_empty() {
                markers.iter().for_each(|&v| t.vars.insert(v));
            }
        }
    }

    /// Pushes a filter down to the transitions that bind its variable.
    fn filter(&mut self, s: Sub, f: &RFilter) -> Result<Sub, Diagnostic> {
        Ok(match f {
            RFilter::Var { var, pred } => self.conjoin(s, *var, pred)?,
            // Tested per valuation during enumeration: TRUE for the automaton.
            RFilter::Residual => s,
            RFilter::And(a, b) => {
                let s = self.filter(s, a)?;
                self.filter(s, b)?
            }
            RFilter::Or(a, b) => {
                if 2 * s.trans.len() > MAX_TRANSITIONS {
                    return Err(self.too_large());
                }
                let left = self.filter(s.clone(), a)?;
                left.union(self.filter(s, b)?)
            }
        })
    }

    fn conjoin(&mut self, mut s: Sub, var: VarId, pred: &ast::Pred) -> Result<Sub, Diagnostic> {
        for t in &mut s.trans {
            if t.vars.contains(var) {
                let G::Pos(term) = &mut t.guard else {
                    unreachable!("only atom transitions bind variables, and their guards are positive")
                };
                // A term of a conjunction's product may require this bit to be 0: it then
                // becomes unsatisfiable, and `build_cea` drops the transition.
                let bit = self.preds.bit(self.schema, self.regexes, term.ty, pred)?;
                term.insert(bit);
            }
        }
        Ok(s)
    }
}

/// Whether `c` matches one event at a time: atoms, `NOT`, and their `OR`, `AS` and
/// `FILTER` combinations.
fn is_choice(c: &RCel) -> bool {
    match c {
        RCel::Atom(..) | RCel::Not(..) => true,
        RCel::Or(a, b, _) => is_choice(a) && is_choice(b),
        RCel::As(x, _) | RCel::Filter(x, _) => is_choice(x),
        _ => false,
    }
}

/// The body under a chain of directly nested iterations, and whether every one of
/// them is contiguous (`:+`).
fn innermost_iteration(mut c: &RCel) -> (&RCel, bool) {
    let mut contiguous = true;
    loop {
        match c {
            RCel::Plus(x, _) => {
                contiguous = false;
                c = x;
            }
            RCel::ContiguousPlus(x, _) => c = x,
            body => return (body, contiguous),
        }
    }
}

/// Per local state of `s`, whether it can reach a final state of `s`.
pub(super) fn coreachable(s: &Sub) -> Vec<bool> {
    closure(s.n as usize, &s.fin, &s.trans, |t| (t.to, t.from))
}

fn atom(edges: &[AtomEdge], span: Span) -> Sub {
    let trans: Vec<Tr> = edges
        .iter()
        .map(|e| Tr { from: 0, guard: G::Pos(Term { ty: e.ty, bits: Vec::new() }), vars: e.vars.clone(), to: 1 })
        .collect();
    let into_fin = (0..trans.len()).collect();
    Sub { n: 2, trans, init: vec![0], fin: vec![1], into_fin, spans: vec![span; 2] }
}

/// `ψ+` (with the skip loop on the fresh state `h`) or `ψ:+` (without).
fn iterate(s: Sub, skip: bool, span: Span) -> Sub {
    let h = s.n;
    let is_init = membership(s.n as usize, &s.init);
    let is_fin = membership(s.n as usize, &s.fin);
    let out: Vec<Tr> =
        s.trans.iter().filter(|t| is_init[t.from as usize]).map(|t| Tr { from: h, ..t.clone() }).collect();
    let out_fin: Vec<usize> = (0..out.len()).filter(|&i| is_fin[out[i].to as usize]).collect();
    let into_h: Vec<Tr> = s
        .into_fin
        .iter()
        .map(|&i| &s.trans[i])
        .chain(out_fin.iter().map(|&i| &out[i]))
        .map(|t| Tr { to: h, ..t.clone() })
        .collect();
    let mut into_fin = s.into_fin;
    into_fin.extend(out_fin.iter().map(|i| i + s.trans.len()));
    let mut trans = s.trans;
    trans.extend(out);
    trans.extend(into_h);
    if skip {
        trans.push(Tr { from: h, guard: G::True, vars: BitSet::new(), to: h });
    }
    let mut spans = s.spans;
    spans.push(span);
    Sub { n: h + 1, trans, init: s.init, fin: s.fin, into_fin, spans }
}

/// Builds the CEA of a resolved formula: the construction of docs/language.md#s5-4, a fresh initial
/// state `q0` (state 0), trimming of states that are unreachable or cannot reach a
/// final state, and output marks for `projection`.
pub fn build_cea(plan: &Plan) -> Result<(Cea, PredTable), Diagnostic> {
    let (schema, projection) = (&plan.schema, &plan.projection);
    let mut b = Builder {
        schema,
        regexes: &plan.regexes,
        preds: PredTable::new(schema.types.len()),
        span: plan.pattern_span,
        iterations: &plan.iterations,
    };
    let s = b.sub(&plan.pattern)?;
    // The trailing absence's predicates get bits of their types like any other.
    let trailing = match &plan.trailing {
        // `ABSENT(β1 OR β2) FOR d`: an event satisfying any alternative cancels.
        Some((alternatives, _)) => {
            let mut terms = Vec::new();
            for x in alternatives {
                terms.extend(b.terms(&x.edges, &x.filters, x.span)?);
            }
            terms.sort();
            terms.dedup();
            Some(Guard { negated: false, terms })
        }
        None => None,
    };
    // Top level: q0 gets a copy of every transition leaving an initial state.
    let q0 = s.n;
    let n = (s.n + 1) as usize;
    let is_init = membership(n, &s.init);
    let is_final = membership(n, &s.fin);
    let s_spans = s.spans;
    let mut trans = s.trans;
    // A filter pushed onto a conjunction's product can contradict a negative literal.
    trans.retain(|t| !matches!(&t.guard, G::Pos(term) if !term.is_satisfiable()));
    let starts: Vec<Tr> =
        trans.iter().filter(|t| is_init[t.from as usize]).map(|t| Tr { from: q0, ..t.clone() }).collect();
    trans.extend(starts);

    // Trim: keep states reachable from q0 that can reach a final state.
    let reach = closure(n, &[q0], &trans, |t| (t.from, t.to));
    let finals_list: Vec<u32> = (0..n as u32).filter(|&q| is_final[q as usize]).collect();
    let coreach = closure(n, &finals_list, &trans, |t| (t.to, t.from));
    let mut new_id = vec![u32::MAX; n];
    new_id[q0 as usize] = 0;
    let mut next = 1;
    for q in 0..n {
        if q as u32 != q0 && reach[q] && coreach[q] {
            new_id[q] = next;
            next += 1;
        }
    }
    let num_states = next as usize;
    let mut state_spans = vec![plan.pattern_span; num_states];
    for (q, &id) in new_id.iter().enumerate() {
        if id != u32::MAX && q as u32 != q0 {
            state_spans[id as usize] = s_spans[q];
        }
    }
    let mut finals = vec![false; num_states];
    for q in 0..n {
        if new_id[q] != u32::MAX && is_final[q] {
            finals[new_id[q] as usize] = true;
        }
    }

    let mut guards: Vec<Guard> = Vec::new();
    let mut guard_ids: HashMap<G, u32> = HashMap::new();
    let mut out: Vec<Vec<Transition>> = vec![Vec::new(); num_states];
    for t in &trans {
        let (p, q) = (new_id[t.from as usize], new_id[t.to as usize]);
        if p == u32::MAX || q == u32::MAX {
            continue;
        }
        let gid = *guard_ids.entry(t.guard.clone()).or_insert_with(|| {
            guards.push(match &t.guard {
                G::True => Guard::always(),
                G::Pos(term) => Guard { negated: false, terms: vec![term.clone()] },
                G::Neg(terms) => Guard { negated: true, terms: terms.clone() },
            });
            (guards.len() - 1) as u32
        });
        let marked = match projection {
            Projection::All => !t.vars.is_empty(),
            Projection::Nothing => false,
            Projection::Vars(sel) => t.vars.intersects(sel),
        };
        let tr = Transition {
            guard: gid,
            vars: t.vars.clone(),
            target: q as StateId,
            marked,
            compared: !t.vars.is_empty() || p == 0,
            label: 0,
        };
        let list = &mut out[p as usize];
        let dup = list.iter().any(|x| x.guard == tr.guard && x.target == tr.target && x.vars == tr.vars);
        if !dup {
            list.push(tr);
        }
    }
    debug_assert!(out.iter().flatten().all(|t| t.target != 0), "(C1): no transition enters q0");
    debug_assert!(
        (0..num_states).all(|q| !finals[q] || out[q].is_empty()),
        "(C3): final states have no outgoing transitions"
    );
    Ok((Cea { num_states, finals, out, guards, state_spans, trailing }, b.preds))
}

/// The states reachable from `starts` along `edge` (a breadth-first search over
/// adjacency lists: linear in the automaton's size).
fn closure(n: usize, starts: &[u32], trans: &[Tr], edge: impl Fn(&Tr) -> (u32, u32)) -> Vec<bool> {
    let mut adjacent: Vec<Vec<u32>> = vec![Vec::new(); n];
    for t in trans {
        let (a, b) = edge(t);
        adjacent[a as usize].push(b);
    }
    let mut seen = vec![false; n];
    let mut stack = Vec::new();
    for &s in starts {
        if !seen[s as usize] {
            seen[s as usize] = true;
            stack.push(s);
        }
    }
    while let Some(p) = stack.pop() {
        for &b in &adjacent[p as usize] {
            if !seen[b as usize] {
                seen[b as usize] = true;
                stack.push(b);
            }
        }
    }
    seen
}

/// `set` as a membership vector over states `0..n`.
fn membership(n: usize, set: &[u32]) -> Vec<bool> {
    let mut v = vec![false; n];
    for &q in set {
        v[q as usize] = true;
    }
    v
}
