//! Trailing absence with a deadline, `ψ ; ABSENT(β) FOR d` (docs/language.md#s3-3b).
//!
//! The automaton is ψ's. Its complex events ending at `j` are not emitted at `j`: they are
//! enumerated there (strategy, window, projection and LIMIT already applied) and wait, per
//! partition key, in one queue ordered by deadline `t_j + d` (accepted time stamps never
//! decrease, so appending keeps the order). An event of the partition that satisfies `β`
//! cancels every entry the partition has waiting: they all ended before it, and their
//! deadlines are at or after its time stamp, since due entries are fired first. An entry is
//! fired (emitted) at the first event, of any partition, whose time stamp is after its
//! deadline, or when the caller advances the watermark past it or closes the deadlines.
//!
//! Cancelling is O(1): each key has a generation; an entry of an older generation is
//! dropped when it reaches the front. Memory is bounded by the events of the last `d`.

use super::Runtime;
use crate::cea::Guard;
use crate::output::{MatchBuffer, Position};
use crate::schema::TypeId;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// The trailing absence of a query: `β` and `d`.
#[derive(Clone, Debug)]
pub(crate) struct Deadline {
    /// The absent event's condition (positive: the event satisfies `β`).
    pub guard: Guard,
    /// `d` in nanoseconds.
    pub nanos: i64,
}

/// One complex event waiting for its deadline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Waiting {
    start: u64,
    end: u64,
    positions: Vec<u64>,
    /// With captures on: the capture label of each position (else empty).
    labels: Vec<u32>,
    /// Its deadline, `ts(t_end) + d`.
    deadline: i64,
}

/// The complex events of one partition that ended at one position.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Pending {
    deadline: i64,
    key: Vec<u8>,
    generation: u64,
    /// The runtime's horizon when they ended: none of their positions is below it.
    horizon: u64,
    matches: Vec<Waiting>,
}

/// The waiting complex events of an evaluation (part of its state and of snapshots).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Deadlines {
    queue: VecDeque<Pending>,
    /// Per partition key with live entries: its generation and how many live entries it has.
    live: HashMap<Vec<u8>, (u64, u64)>,
    next_generation: u64,
    /// Complex events whose deadline passed outside a push (watermark, close), until
    /// [`Runtime::take_fired`] or the next push hands them over.
    ready: Vec<Waiting>,
    /// With [`Runtime::record_deadlines`]: the deadlines of the complex events handed
    /// over since the last [`Runtime::take_emitted_deadlines`], in output order (not
    /// part of snapshots: it describes output already handed over).
    #[serde(skip)]
    emitted: Option<Vec<i64>>,
}

impl Deadlines {
    /// Lowest position a waiting complex event can contain.
    pub(crate) fn horizon(&self) -> Option<u64> {
        let queued = self.queue.front().map(|p| p.horizon);
        let ready = self.ready.iter().map(|m| m.start).min();
        match (queued, ready) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The earliest deadline still waiting (cancelled entries included: conservative).
    pub(crate) fn next(&self) -> Option<i64> {
        self.queue.front().map(|p| p.deadline)
    }

    /// Nothing waits and nothing is ready.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.ready.is_empty()
    }

    /// Drops every entry of `key` (an event satisfying `β` arrived in its partition).
    fn cancel(&mut self, key: &[u8]) {
        self.live.remove(key);
    }

    /// Moves the live entries with a deadline before `bound` (all with `None`) into `sink`.
    fn fire(&mut self, bound: Option<i64>, mut sink: impl FnMut(Waiting)) {
        while let Some(front) = self.queue.front() {
            if bound.is_some_and(|b| front.deadline >= b) {
                break;
            }
            let p = self.queue.pop_front().expect("front exists");
            let Some(live) = self.live.get_mut(&p.key) else { continue };
            if live.0 != p.generation {
                continue;
            }
            live.1 -= 1;
            if live.1 == 0 {
                self.live.remove(&p.key);
            }
            p.matches.into_iter().for_each(&mut sink);
        }
    }
}

/// Appends `m` to `out`, recording its deadline if asked to.
fn emit<P: Position>(out: &mut MatchBuffer<P>, emitted: &mut Option<Vec<i64>>, m: &Waiting) {
    let positions: Vec<P> = m.positions.iter().map(|&p| P::narrow(p)).collect();
    if m.labels.is_empty() {
        out.push(P::narrow(m.start), P::narrow(m.end), &positions);
    } else {
        out.push_labelled(P::narrow(m.start), P::narrow(m.end), &positions, &m.labels);
    }
    if let Some(e) = emitted {
        e.push(m.deadline);
    }
}

impl Runtime {
    /// The deadline work of an accepted or unkeyed event at time `w`, before the
    /// automaton reads it: hands over ready complex events, fires those whose deadline
    /// is before `w`, and, if the event has a partition key (`keyed`) and satisfies `β`
    /// (its predicate bits are the first `words` of the scratch bits), cancels the
    /// partition's waiting ones.
    pub(super) fn deadline_event<P: Position>(
        &mut self,
        ty: Option<TypeId>,
        words: usize,
        w: i64,
        out: &mut MatchBuffer<P>,
    ) {
        self.take_fired(out);
        let mut n = 0;
        let dl = &mut self.state.deadlines;
        let mut emitted = dl.emitted.take();
        dl.fire(Some(w), |m| {
            emit(out, &mut emitted, &m);
            n += 1;
        });
        dl.emitted = emitted;
        self.state.stats.matches += n;
        let Some(ty) = ty else { return };
        let Some(d) = &self.config.deadline else { return };
        if d.guard.matches(ty, &self.scratch.bits[..words]) {
            self.state.deadlines.cancel(&self.scratch.key_buf);
        }
    }

    /// OUTPUT for a query with a trailing absence: the complex events of the final
    /// det-states of `next` (at `position`, time `w`) wait for their deadline instead
    /// of being emitted. Returns whether there was any.
    pub(super) fn defer_outputs<const CAP: bool>(
        &mut self,
        next: &[super::Entry],
        position: u64,
        w: i64,
        tau: i64,
    ) -> bool {
        let mut buf = std::mem::take(&mut self.scratch.deferred);
        buf.clear();
        let any = self.emit_outputs::<u64, CAP>(next, position, tau, &mut buf);
        if !buf.is_empty() {
            let nanos = self.config.deadline.as_ref().map_or(0, |d| d.nanos);
            let horizon = self.window_horizon();
            let dl = &mut self.state.deadlines;
            let key = self.scratch.key_buf.clone();
            let generation = match dl.live.get_mut(&key) {
                Some(live) => {
                    live.1 += 1;
                    live.0
                }
                None => {
                    dl.next_generation += 1;
                    dl.live.insert(key.clone(), (dl.next_generation, 1));
                    dl.next_generation
                }
            };
            let deadline = w.saturating_add(nanos);
            let matches = buf
                .iter()
                .map(|m| Waiting {
                    start: m.start,
                    end: m.end,
                    positions: m.positions.to_vec(),
                    labels: m.labels.to_vec(),
                    deadline,
                })
                .collect();
            dl.queue.push_back(Pending { deadline, key, generation, horizon, matches });
        }
        self.scratch.deferred = buf;
        any
    }

    /// Hands over the complex events whose deadline passed when the watermark was
    /// advanced ([`Runtime::advance_watermark`]) or the deadlines were closed
    /// ([`Runtime::close_deadlines`]), appending them to `out`. Pushes do it themselves.
    pub fn take_fired<P: Position>(&mut self, out: &mut MatchBuffer<P>) {
        let dl = &mut self.state.deadlines;
        for m in std::mem::take(&mut dl.ready) {
            emit(out, &mut dl.emitted, &m);
        }
    }

    /// Starts (or stops) recording the deadline of every complex event handed over, for
    /// [`Runtime::take_emitted_deadlines`] (a caller that shows each match's deadline).
    pub fn record_deadlines(&mut self, on: bool) {
        self.state.deadlines.emitted = on.then(Vec::new);
    }

    /// The deadlines (time stamp + `d`, nanoseconds) of the complex events handed over
    /// since the last call, in the order they were appended to the output buffers;
    /// empty unless [`Runtime::record_deadlines`] is on.
    pub fn take_emitted_deadlines(&mut self) -> Vec<i64> {
        self.state.deadlines.emitted.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Whether the query ends with a trailing `ABSENT(...) FOR d`.
    pub fn has_deadline(&self) -> bool {
        self.config.deadline.is_some()
    }

    /// Fires the waiting complex events whose deadline is before `w` (into the ready
    /// list that [`Runtime::take_fired`] hands over).
    pub(super) fn fire_before(&mut self, w: i64) {
        let dl = &mut self.state.deadlines;
        let mut n = 0;
        let mut ready = std::mem::take(&mut dl.ready);
        dl.fire(Some(w), |m| {
            ready.push(m);
            n += 1;
        });
        self.state.deadlines.ready = ready;
        self.state.stats.matches += n;
    }

    /// Ends the input for the trailing absence: every complex event still waiting is
    /// fired, as if time had passed all deadlines with no further event (docs/language.md#s3-3b);
    /// [`Runtime::take_fired`] hands them over. No effect without a trailing absence.
    pub fn close_deadlines(&mut self) {
        let dl = &mut self.state.deadlines;
        let mut n = 0;
        let mut ready = std::mem::take(&mut dl.ready);
        dl.fire(None, |m| {
            ready.push(m);
            n += 1;
        });
        self.state.deadlines.ready = ready;
        self.state.stats.matches += n;
    }

    /// Complex events waiting for their deadline (cancelled ones not yet dropped included).
    pub fn waiting_deadlines(&self) -> usize {
        self.state.deadlines.queue.iter().map(|p| p.matches.len()).sum()
    }
}
