//! OUTPUT with filters between events (docs/design/correlation.md, section 3.2) or
//! measures (docs/language.md#s3-5a): the valuations of the final det-states are
//! enumerated with their capture labels, one at a time, tested against the residual
//! filters, their measures computed, projected as the user asked, and appended without
//! repeats (captures off: equal complex events with equal measures are one output), up
//! to LIMIT. Memory: one valuation, plus the set of distinct outputs at this position.

use super::partition::Entry;
use super::Runtime;
use crate::output::{MatchBuffer, Position};
use crate::predicate::Row;
use crate::residual::Valuation;
use crate::schema::TypeId;
use ceql_syntax::ast::Strategy;
use std::cmp::Ordering;
use std::collections::HashSet;

/// What tells two outputs of one position apart, in one allocation: the start, the
/// number of projected positions, the positions, their capture labels (captures on),
/// and the measures' canonical bytes, eight to a word.
type OutputKey = Vec<u64>;

impl Runtime {
    /// Keeps the attribute values the residual filters read for the event at
    /// `position`, after forgetting those no future output can contain (the rows
    /// before the window's horizon: the store is trimmed with the window).
    #[inline(never)]
    pub(super) fn store_values<R: Row + ?Sized>(&mut self, ty: TypeId, row: &R, position: u64) {
        if self.config.facts.every_row {
            return; // stored with every accepted event (`store_every_event`)
        }
        // The position is committed, so `horizon` speaks for the next event; this
        // event's outputs may start one position earlier (`WITHIN n EVENTS`). The
        // complex events waiting for a deadline passed their filters and got their
        // measures when they ended: the window's horizon, not theirs.
        let horizon = self.window_horizon().saturating_sub(1);
        self.state.values.trim(horizon);
        if ty == crate::det::OTHER_TYPE {
            return; // never captured
        }
        let plan = self.config.query.residual.as_ref().expect("a residual query");
        self.state.values.push(position, plan.row(ty, row));
    }

    /// For absences that read the match (docs/language.md#s3-3a): keeps the attribute
    /// values, type and partition key of every accepted event, since a gap's events are
    /// the ones the automaton skips. Called once the position is committed.
    #[inline(never)]
    pub(super) fn store_every_event<R: Row + ?Sized>(&mut self, ty: TypeId, row: &R, position: u64) {
        let horizon = self.window_horizon().saturating_sub(1);
        self.state.values.trim(horizon);
        if ty == crate::det::OTHER_TYPE {
            return; // never captured, never absent
        }
        let plan = self.config.query.residual.as_ref().expect("a residual query");
        self.state.values.push(position, plan.row_with_key(ty, row, &self.scratch.key_buf));
    }

    /// OUTPUT for a query with residual filters; returns whether some valuation passed.
    /// The valuations are tested one at a time as the enumerator produces them. A type
    /// error between events stops the test; the push reports it.
    ///
    /// Under NEXT, LAST and MAX (docs/language.md#s3-6a) the automaton runs as under ALL,
    /// and the strategy chooses among the passing valuations of this position (all in
    /// the window): NEXT and LAST keep the best so far and those tied with it, MAX keeps
    /// every passing valuation and drops the dominated ones at the end.
    #[inline(never)]
    pub(super) fn emit_tested<P: Position>(
        &mut self,
        next: &[Entry],
        position: u64,
        tau: i64,
        out: &mut MatchBuffer<P>,
    ) -> bool {
        let plan = self.config.query.residual.clone().expect("a residual query");
        let mut one = std::mem::take(&mut self.scratch.candidates);
        let mut enumerator = std::mem::take(&mut self.scratch.enumerator);
        let store_output = self.config.options.enumerate;
        let values = &self.state.values;
        let key_now =
            if plan.gaps.is_empty() { Box::from("") } else { crate::residual::key_text(&self.scratch.key_buf) };
        let mut emitter = Emitter::new(&plan, self.config.options.captures, self.config.facts.limit, position);
        let mut chosen = Chosen::default();
        let mut any = false;
        let mut error = None;
        // The caller's interrupt check, polled every POLL_EVERY valuations, full or partial.
        let check = std::cell::RefCell::new(self.interrupt.check.take());
        let (polls, stopped) = (std::cell::Cell::new(0u32), std::cell::Cell::new(false));
        let poll = || {
            polls.set(polls.get().wrapping_add(1));
            if polls.get() % super::interrupt::POLL_EVERY == 0 && check.borrow_mut().as_mut().is_some_and(|f| f()) {
                stopped.set(true);
            }
            stopped.get()
        };
        let mut each = |c: &MatchBuffer<u64>| -> bool {
            if poll() {
                return false;
            }
            let m = c.get(0);
            let labels = m.labels;
            let captures = |i: usize, v: crate::analyze::VarId| plan.captures(labels[i], v);
            let valuation = Valuation { positions: m.positions, captures: &captures };
            for f in &plan.filters {
                match f.holds(&valuation, values) {
                    Ok(true) => {}
                    Ok(false) => return true,
                    Err(e) => {
                        error = Some(e);
                        return false;
                    }
                }
            }
            if !plan.gaps.is_empty() {
                match plan.gaps_violated(m.positions, labels, values, &key_now) {
                    Ok(false) => {}
                    Ok(true) => return true,
                    Err(e) => {
                        error = Some(e);
                        return false;
                    }
                }
            }
            any = true;
            if !store_output {
                // Without output, one passing valuation is all CONSUME BY needs.
                return false;
            }
            match plan.select {
                None => emitter.emit(m.start, m.positions, labels, values, out),
                Some(s) => {
                    chosen.offer(s, m.start, m.positions, labels);
                    true
                }
            }
        };
        // Pruning: a conjunct without aggregates that fails on the positions enumerated
        // so far (a suffix of the valuation) fails on the whole valuation.
        let prunable: Vec<&crate::residual::FilterIr> = plan.filters.iter().filter(|f| f.prunable()).collect();
        let mut words: Vec<u64> = Vec::new();
        let mut keep = |partial: &[u64]| -> bool {
            if poll() {
                return false;
            }
            words.clear();
            words.extend(partial.iter().map(|w| w & crate::cea::POSITION_MASK));
            let captures =
                |i: usize, v: crate::analyze::VarId| plan.captures((partial[i] >> crate::cea::LABEL_SHIFT) as u32, v);
            let valuation = Valuation { positions: &words, captures: &captures };
            // An error is left to the test of the whole valuation, which reports it.
            prunable.iter().all(|f| f.holds(&valuation, values).unwrap_or(true))
        };
        'entries: for e in next {
            if !self.state.cache.is_final(e.det) || e.head_max() < tau {
                continue;
            }
            for &item in &e.ul {
                if !enumerator.for_each_valuation(
                    &self.state.arena,
                    item,
                    position,
                    tau,
                    &mut one,
                    if prunable.is_empty() { None } else { Some(&mut keep) },
                    &mut each,
                ) {
                    break 'entries;
                }
            }
        }
        if let (Some(s), None) = (plan.select, &error) {
            for (start, positions, labels) in chosen.selected(s) {
                if !emitter.emit(start, &positions, &labels, values, out) {
                    break;
                }
            }
        }
        self.scratch.residual_error = error.or(emitter.error);
        self.scratch.candidates = one;
        self.scratch.enumerator = enumerator;
        self.interrupt.check = check.into_inner();
        self.interrupt.hit |= stopped.get();
        any
    }
}

/// The output side of [`Runtime::emit_tested`]: measures, projection, captures, repeats
/// and LIMIT, for one passing (and selected) valuation at a time.
struct Emitter<'p> {
    plan: &'p crate::residual::ResidualPlan,
    user_captures: bool,
    left: u64,
    position: u64,
    seen: HashSet<OutputKey>,
    measures: Vec<crate::value::Value>,
    measure_key: Vec<u8>,
    key: OutputKey,
    scratch: Vec<u64>,
    kept: Vec<u64>,
    kept_labels: Vec<u32>,
    error: Option<crate::residual::ResidualError>,
}

impl<'p> Emitter<'p> {
    fn new(plan: &'p crate::residual::ResidualPlan, user_captures: bool, limit: u64, position: u64) -> Self {
        Emitter {
            plan,
            user_captures,
            left: limit,
            position,
            seen: HashSet::new(),
            measures: Vec::new(),
            measure_key: Vec::new(),
            key: Vec::new(),
            scratch: Vec::new(),
            kept: Vec::new(),
            kept_labels: Vec::new(),
            error: None,
        }
    }

    /// Appends the output of the valuation (`positions` ascending, internal `labels`)
    /// unless it repeats one of this position; false to stop (LIMIT reached, no memory,
    /// or an error, kept in `self.error`).
    fn emit<P: Position>(
        &mut self,
        start: u64,
        positions: &[u64],
        labels: &[u32],
        values: &crate::residual::ValueStore,
        out: &mut MatchBuffer<P>,
    ) -> bool {
        if self.left == 0 {
            return false;
        }
        let plan = self.plan;
        // The user's projection (and captures, if asked for).
        self.kept.clear();
        self.kept_labels.clear();
        for (i, &p) in positions.iter().enumerate() {
            let l = plan.to_user[labels[i] as usize];
            if l != 0 {
                self.kept.push(p);
                self.kept_labels.push(if self.user_captures { l } else { 0 });
            }
        }
        self.measure_key.clear();
        if !plan.measures.is_empty() {
            let captures = |i: usize, v: crate::analyze::VarId| plan.captures(labels[i], v);
            let valuation = Valuation { positions, captures: &captures };
            if let Err(e) = plan.measure_values(&valuation, values, &mut self.measures, &mut self.scratch) {
                self.error = Some(e);
                return false;
            }
            let key = &mut self.measure_key;
            self.measures.iter().for_each(|v| crate::residual::measure_key(v, key));
        }
        self.key.clear();
        self.key.extend([start, self.kept.len() as u64]);
        self.key.extend_from_slice(&self.kept);
        if self.user_captures {
            self.key.extend(self.kept_labels.iter().map(|&l| l as u64));
        }
        self.key.extend(self.measure_key.chunks(8).map(|c| c.iter().fold(0u64, |w, &b| w << 8 | b as u64)));
        if self.seen.contains(&self.key) {
            return true;
        }
        self.seen.insert(self.key.clone());
        if !out.begin(start, self.position) || !out.push_measures(&self.measures) {
            return false;
        }
        for (&p, &l) in self.kept.iter().zip(&self.kept_labels) {
            let ok = if self.user_captures {
                out.push_labelled_position(p | (l as u64) << crate::cea::LABEL_SHIFT)
            } else {
                out.push_position(p)
            };
            if !ok {
                return false;
            }
        }
        out.finish();
        self.left -= 1;
        true
    }
}

/// The passing valuations a strategy chooses among (docs/language.md#s3-6a): under NEXT
/// and LAST the best so far and those tied with it, under MAX every one.
#[derive(Default)]
struct Chosen {
    /// (start, positions, internal labels).
    kept: Vec<(u64, Vec<u64>, Vec<u32>)>,
}

impl Chosen {
    fn offer(&mut self, s: Strategy, start: u64, positions: &[u64], labels: &[u32]) {
        let v = (start, positions.to_vec(), labels.to_vec());
        if s == Strategy::Max {
            self.kept.push(v);
            return;
        }
        let order = match self.kept.first() {
            None => Ordering::Greater,
            Some(best) => compare_pairs(s, (v.0, &v.1), (best.0, &best.1)),
        };
        match order {
            Ordering::Greater => {
                self.kept.clear();
                self.kept.push(v);
            }
            Ordering::Equal => self.kept.push(v),
            Ordering::Less => {}
        }
    }

    /// The chosen valuations, in the order they were offered.
    fn selected(self, s: Strategy) -> Vec<(u64, Vec<u64>, Vec<u32>)> {
        if s != Strategy::Max {
            return self.kept;
        }
        let keys: Vec<(Vec<u64>, &[u64])> = self.kept.iter().map(|(st, d, _)| (with_start(*st, d), &d[..])).collect();
        let dominated = |i: usize| {
            keys.iter().enumerate().any(|(j, (kw, dw))| {
                j != i && subset(&keys[i].0, kw) && subset(keys[i].1, dw) && (keys[i].0 != *kw || keys[i].1 != *dw)
            })
        };
        let keep: Vec<bool> = (0..keys.len()).map(|i| !dominated(i)).collect();
        self.kept.into_iter().zip(keep).filter_map(|(v, k)| k.then_some(v)).collect()
    }
}

/// `K(V) = D(V) ∪ {start}` (docs/language.md#s3-6), ascending.
fn with_start(start: u64, d: &[u64]) -> Vec<u64> {
    let mut k = d.to_vec();
    if let Err(i) = k.binary_search(&start) {
        k.insert(i, start);
    }
    k
}

/// Whether ascending `a` is a subset of ascending `b`.
fn subset(a: &[u64], b: &[u64]) -> bool {
    let mut j = 0;
    a.iter().all(|x| {
        while j < b.len() && b[j] < *x {
            j += 1;
        }
        j < b.len() && b[j] == *x
    })
}

/// How valuation `a` compares with `b` under NEXT's or LAST's order of the pairs
/// `(K, D)` (docs/language.md#s3-6): `Greater` when `a` is preferred.
fn compare_pairs(s: Strategy, a: (u64, &[u64]), b: (u64, &[u64])) -> Ordering {
    let (ka, kb) = (with_start(a.0, a.1), with_start(b.0, b.1));
    match compare_sets(s, &ka, &kb) {
        Ordering::Equal => compare_sets(s, a.1, b.1),
        o => o,
    }
}

/// `A <next B` iff `min(A Δ B) ∈ B`; `A <last B` iff `max(A Δ B) ∈ B`. `Greater` when
/// `a` is the larger (preferred) set.
fn compare_sets(s: Strategy, a: &[u64], b: &[u64]) -> Ordering {
    // The elements of the symmetric difference, with the side they are on.
    let mut diff: Option<(u64, bool)> = None; // (element, in a), the min (NEXT) or max (LAST)
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let (x, in_a) = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                continue;
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                (x, true)
            }
            (Some(_), Some(&y)) => {
                j += 1;
                (y, false)
            }
            (Some(&x), None) => {
                i += 1;
                (x, true)
            }
            (None, Some(&y)) => {
                j += 1;
                (y, false)
            }
            (None, None) => unreachable!(),
        };
        diff = Some((x, in_a));
        if s == Strategy::Next {
            break; // the first difference is the minimum
        }
    }
    match diff {
        None => Ordering::Equal,
        Some((_, true)) => Ordering::Greater,
        Some((_, false)) => Ordering::Less,
    }
}
