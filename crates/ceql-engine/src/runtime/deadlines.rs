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
//! Cancelling is O(1) per group: each key has a generation; an entry of an older
//! generation is dropped when it reaches the front, and the front is kept live (dead
//! groups there are dropped at once), so that the horizon and the next deadline are
//! those of a complex event that still waits. Memory is bounded by the complex events
//! ending in the last `d`.

use super::Runtime;
use crate::cea::Guard;
use crate::output::{MatchBuffer, Position};
use crate::schema::TypeId;
use crate::value::Value;
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

/// One complex event waiting for its deadline, as snapshots store it (see [`Wire`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Waiting {
    start: u64,
    end: u64,
    positions: Vec<u64>,
    /// With captures on: the capture label of each position (else empty).
    labels: Vec<u32>,
    /// Its deadline, `ts(t_end) + d`.
    deadline: i64,
}

/// The complex events of one partition that ended at one position, as snapshots store them.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct WirePending {
    deadline: i64,
    key: Vec<u8>,
    generation: u64,
    horizon: u64,
    matches: Vec<Waiting>,
}

/// The snapshot form of [`Deadlines`]: one owned record per group and per complex event.
/// It is the layout snapshots had before the queue was made flat, so the snapshot
/// format (a positional postcard payload) did not change.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Wire {
    queue: VecDeque<WirePending>,
    live: HashMap<Vec<u8>, (u64, u64)>,
    next_generation: u64,
    ready: Vec<Waiting>,
}

/// The complex events of one partition that ended at one position: a group of the queue.
/// Its key bytes, complex events, positions and labels are the next ones of the flat
/// queues of [`Deadlines`].
#[derive(Clone, Copy, Debug)]
struct Group {
    deadline: i64,
    generation: u64,
    /// The runtime's horizon when they ended: none of their positions is below it.
    horizon: u64,
    key_len: u32,
    matches: u32,
}

/// One complex event in the flat queues: its positions (and labels, with captures on)
/// are the next `len` entries of the position (and label) queue, its measures the next
/// `measures` values of the measure queue (docs/language.md#s3-5a; computed when it was
/// deferred, from the values of the window then).
#[derive(Clone, Copy, Debug)]
struct Head {
    start: u64,
    end: u64,
    deadline: i64,
    len: u32,
    /// Measure values (the query's measure count, or 0).
    measures: u16,
    labelled: bool,
}

/// Complex events stored end to end (the queue's, and the ready list's).
#[derive(Clone, Debug, Default)]
struct Flat {
    heads: VecDeque<Head>,
    positions: VecDeque<u64>,
    labels: VecDeque<u32>,
    measures: VecDeque<Value>,
}

/// A complex event popped from a [`Flat`]: its head, positions and labels (its measures
/// stay at the front of the measure queue until [`Flat::drop_measures`] or their move:
/// most queries have none, and passing an empty drain cost every pop, callgrind).
type Sink<'s> = &'s mut dyn FnMut(&Head, &mut dyn Iterator<Item = u64>, &mut dyn Iterator<Item = u32>);

impl Flat {
    fn push(&mut self, start: u64, end: u64, deadline: i64, positions: &[u64], labels: &[u32], measures: &[Value]) {
        let len = u32::try_from(positions.len()).expect("a complex event has fewer than 2^32 positions");
        let width = u16::try_from(measures.len()).expect("a query has fewer than 2^16 measures");
        self.heads.push_back(Head { start, end, deadline, len, measures: width, labelled: !labels.is_empty() });
        self.positions.extend(positions);
        self.labels.extend(labels);
        // Most queries have no measures: no call for an empty slice.
        if !measures.is_empty() {
            self.measures.extend(measures.iter().cloned());
        }
    }

    /// Whether the complex events are whole and name what the stream has: each
    /// head's positions and labels are there, its positions (start and end
    /// included) were issued (`< issued`) and are not below `horizon`, and its labels
    /// are below `labels` (a restored snapshot's check; see [`Deadlines::well_formed`]).
    fn well_formed(&self, issued: u64, horizon: u64, labels: u32) -> bool {
        let n: usize = self.heads.iter().map(|h| h.len as usize).sum();
        let labelled: usize = self.heads.iter().filter(|h| h.labelled).map(|h| h.len as usize).sum();
        let measured: usize = self.heads.iter().map(|h| h.measures as usize).sum();
        let seen = |p: &u64| (horizon..issued).contains(p);
        n == self.positions.len()
            && labelled == self.labels.len()
            && measured == self.measures.len()
            && self.heads.iter().all(|h| seen(&h.start) && seen(&h.end) && h.start <= h.end)
            && self.positions.iter().all(seen)
            && self.labels.iter().all(|&l| l < labels)
    }

    /// Removes the first complex event, handing it to `sink`; returns its head. Its
    /// measures are then the first `head.measures` of the measure queue: the caller
    /// takes them ([`Flat::take_measures`]) or drops them ([`Flat::drop_measures`]).
    fn pop(&mut self, sink: Sink<'_>) -> Head {
        let h = self.heads.pop_front().expect("a head per complex event");
        let n = h.len as usize;
        let labels = if h.labelled { n } else { 0 };
        sink(&h, &mut self.positions.drain(..n), &mut self.labels.drain(..labels));
        h
    }

    /// Removes and drops the first complex event, measures included.
    fn discard(&mut self) {
        let h = self.pop(&mut |_, _, _| {});
        self.drop_measures(&h);
    }

    /// Drops the measures of the complex event `h` just popped.
    #[inline]
    fn drop_measures(&mut self, h: &Head) {
        if h.measures > 0 {
            self.measures.drain(..h.measures as usize);
        }
    }

    /// The measures of the complex event `h` just popped, taken out.
    fn take_measures(&mut self, h: &Head) -> std::collections::vec_deque::Drain<'_, Value> {
        self.measures.drain(..h.measures as usize)
    }

    /// Moves the first complex event to the back of `other`.
    fn move_first_to(&mut self, other: &mut Flat) {
        let h = self.pop(&mut |h, ps, ls| {
            other.heads.push_back(*h);
            other.positions.extend(ps);
            other.labels.extend(ls);
        });
        if h.measures > 0 {
            other.measures.extend(self.take_measures(&h));
        }
    }

    /// Complex event `i`, owned, whose positions and labels start at `offsets` (advanced
    /// past them): for snapshots only.
    fn owned(&self, i: usize, offsets: &mut (usize, usize)) -> Waiting {
        let h = &self.heads[i];
        let n = h.len as usize;
        let positions = self.positions.range(offsets.0..offsets.0 + n).copied().collect();
        offsets.0 += n;
        let labels = if h.labelled {
            let l = self.labels.range(offsets.1..offsets.1 + n).copied().collect();
            offsets.1 += n;
            l
        } else {
            Vec::new()
        };
        Waiting { start: h.start, end: h.end, positions, labels, deadline: h.deadline }
    }

    fn push_owned(&mut self, m: &Waiting) {
        self.push(m.start, m.end, m.deadline, &m.positions, &m.labels, &[]);
    }

    /// Gives each complex event `width` of `values`, in order (a snapshot's measures,
    /// stored apart from [`Wire`]); false if they do not match the complex events.
    fn set_measures(&mut self, width: u16, values: &mut std::vec::IntoIter<Value>) -> bool {
        if width == 0 {
            return true;
        }
        for h in &mut self.heads {
            h.measures = width;
            for _ in 0..width {
                match values.next() {
                    Some(v) => self.measures.push_back(v),
                    None => return false,
                }
            }
        }
        true
    }
}

/// Per partition key: the generation of its entries, how many live groups (and complex
/// events) it has, and the last time it was used (a deadline it deferred, or a
/// cancelling event's time).
#[derive(Clone, Copy, Debug)]
struct Live {
    generation: u64,
    groups: u64,
    matches: u64,
    touched: i64,
}

/// The waiting complex events of an evaluation (part of its state and of snapshots).
///
/// Everything is first in, first out (groups are appended in deadline order and fired from
/// the front), so the groups, their key bytes, complex events, positions and labels live in
/// flat queues whose room is reused: deferring and firing a complex event allocates nothing
/// once the queues have grown to the window's size. A key keeps its entry in `live` while
/// it has no group (`groups == 0`), so that a partition that matches again does not
/// allocate its key again. Such an idle key is dropped once it has not been used for the
/// window plus `d` (`Deadlines::defer`'s `keep`), in a sweep that runs when `live` has
/// doubled since the last one (amortised O(1) per key): `live` holds at most twice the keys
/// used in the last window plus `d`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(from = "Wire", into = "Wire")]
pub(crate) struct Deadlines {
    groups: VecDeque<Group>,
    keys: VecDeque<u8>,
    queue: Flat,
    live: HashMap<Vec<u8>, Live>,
    /// Size of `live` beyond which the next new key sweeps the idle keys.
    sweep_at: usize,
    next_generation: u64,
    /// Complex events whose deadline passed outside a push (watermark, close), until
    /// [`Runtime::take_fired`] or the next push hands them over.
    ready: Flat,
    /// With [`Runtime::record_deadlines`]: the deadlines of the complex events handed
    /// over since the last [`Runtime::take_emitted_deadlines`], in output order (not
    /// part of snapshots: it describes output already handed over).
    emitted: Option<Vec<i64>>,
    /// With [`Runtime::record_deferred_positions`]: the positions of the complex events
    /// deferred since the last [`Runtime::take_deferred_positions`] (not part of
    /// snapshots: a caller that keeps event data copies them as they come).
    deferred: Option<Vec<u64>>,
    /// The key of the group being fired (reused).
    key_scratch: Vec<u8>,
    /// Complex events of live groups: those still waiting for their deadline.
    waiting: u64,
    /// Bytes of the keys of `live` (kept up to date, so that the budget reads it in O(1)).
    key_bytes: usize,
}

/// Size of `live` below which idle keys are never swept.
const KEYS_KEPT: usize = 64;

impl Deadlines {
    /// The measures of the waiting complex events, then of the ready ones, in order:
    /// snapshots store them after the rest of the state (format 10), so that [`Wire`],
    /// and with it a format 9 snapshot, stays as it was.
    pub(crate) fn measure_values(&self) -> Vec<Value> {
        self.queue.measures.iter().chain(&self.ready.measures).cloned().collect()
    }

    /// Gives the complex events of a restored snapshot their measures, `width` each (the
    /// query's measure count); false if `values` are not exactly theirs.
    pub(crate) fn restore_measures(&mut self, width: usize, values: Vec<Value>) -> bool {
        let Ok(width) = u16::try_from(width) else { return false };
        let mut it = values.into_iter();
        self.queue.set_measures(width, &mut it) && self.ready.set_measures(width, &mut it) && it.next().is_none()
    }

    /// Lowest position a waiting complex event can contain.
    pub(crate) fn horizon(&self) -> Option<u64> {
        let queued = self.groups.front().map(|p| p.horizon);
        let ready = self.ready.heads.iter().map(|m| m.start).min();
        match (queued, ready) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether restored (snapshot) state is consistent: every group's key bytes and
    /// complex events are there, and those complex events pass [`Flat`]'s check with
    /// positions `< issued`, none below its group's horizon (nor, for the ready
    /// ones, below `horizon`), and labels `< labels`.
    pub(crate) fn well_formed(&self, issued: u64, horizon: u64, labels: u32) -> bool {
        let keys: usize = self.groups.iter().map(|g| g.key_len as usize).sum();
        let matches: usize = self.groups.iter().map(|g| g.matches as usize).sum();
        let lowest = self.groups.iter().map(|g| g.horizon).min().unwrap_or(horizon);
        keys == self.keys.len()
            && matches == self.queue.heads.len()
            && self.queue.well_formed(issued, lowest, labels)
            && self.ready.well_formed(issued, horizon, labels)
    }

    /// The earliest deadline still waiting (the front group is live).
    pub(crate) fn next(&self) -> Option<i64> {
        self.groups.front().map(|p| p.deadline)
    }

    /// Nothing waits and nothing is ready.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.ready.heads.is_empty()
    }

    /// Drops every entry of `key` (an event satisfying `β` arrived in its partition at time
    /// `w`): its groups in the queue have an older generation from now on.
    fn cancel(&mut self, key: &[u8], w: i64) {
        if let Some(live) = self.live.get_mut(key) {
            if live.groups > 0 {
                self.next_generation += 1;
                live.generation = self.next_generation;
                live.groups = 0;
                self.waiting -= live.matches;
                live.matches = 0;
                live.touched = w;
                self.drop_dead_front();
            }
        }
    }

    /// Whether the group at the front of the queue (`g`, whose key is the front of
    /// `keys`) is live: its key's generation is still its own. Leaves its key in
    /// `key_scratch`.
    fn front_is_live(&mut self, g: &Group) -> bool {
        self.key_scratch.clear();
        self.key_scratch.extend(self.keys.range(..g.key_len as usize));
        matches!(self.live.get(&self.key_scratch[..]), Some(l) if l.generation == g.generation && l.groups > 0)
    }

    /// Drops the cancelled groups at the front of the queue, so that the front is a
    /// group that still waits (each group is dropped once: O(1) amortised).
    fn drop_dead_front(&mut self) {
        while let Some(g) = self.groups.front().copied() {
            if self.front_is_live(&g) {
                return;
            }
            self.groups.pop_front();
            self.keys.drain(..g.key_len as usize);
            for _ in 0..g.matches {
                self.queue.discard();
            }
        }
    }

    /// Approximate heap bytes of the waiting complex events, their groups and keys,
    /// and the ready ones (what the state budget counts).
    pub(crate) fn memory_bytes(&self) -> usize {
        let flat = |f: &Flat| {
            f.heads.capacity() * std::mem::size_of::<Head>()
                + f.positions.capacity() * 8
                + f.labels.capacity() * 4
                + f.measures.capacity() * std::mem::size_of::<Value>()
        };
        let keys = self.key_bytes + self.live.capacity() * (std::mem::size_of::<(Vec<u8>, Live)>() + 8);
        self.groups.capacity() * std::mem::size_of::<Group>()
            + self.keys.capacity()
            + flat(&self.queue)
            + flat(&self.ready)
            + keys
    }

    /// Complex events still waiting for their deadline.
    pub(crate) fn waiting(&self) -> u64 {
        self.waiting
    }

    /// Appends a group for `key` (its complex events are then appended with [`Flat::push`]).
    /// A new key first sweeps the keys idle since before `deadline - keep`, if `live` has
    /// doubled since the last sweep.
    fn defer(&mut self, key: &[u8], deadline: i64, horizon: u64, matches: u32, keep: i64) {
        let generation = match self.live.get_mut(key) {
            Some(live) => {
                live.groups += 1;
                live.matches += u64::from(matches);
                live.touched = deadline;
                live.generation
            }
            None => {
                if self.live.len() >= self.sweep_at.max(KEYS_KEPT) {
                    let oldest = deadline.saturating_sub(keep);
                    self.live.retain(|_, l| l.groups > 0 || l.touched >= oldest);
                    self.sweep_at = 2 * self.live.len();
                    self.key_bytes = self.live.keys().map(Vec::len).sum();
                }
                self.next_generation += 1;
                let live = Live {
                    generation: self.next_generation,
                    groups: 1,
                    matches: u64::from(matches),
                    touched: deadline,
                };
                self.live.insert(key.to_vec(), live);
                self.key_bytes += key.len();
                self.next_generation
            }
        };
        let key_len = u32::try_from(key.len()).expect("a partition key is shorter than 4 GiB");
        self.keys.extend(key);
        self.groups.push_back(Group { deadline, generation, horizon, key_len, matches });
        self.waiting += u64::from(matches);
    }

    /// Removes the groups with a deadline before `bound` (all with `None`) from the queue:
    /// `take` removes each complex event of a live group from the front of the queue (into
    /// the output or the ready list); those of cancelled groups are dropped. Returns how
    /// many were taken.
    fn fire(&mut self, bound: Option<i64>, mut take: impl FnMut(&mut Flat, &mut Flat, &mut Option<Vec<i64>>)) -> u64 {
        let mut n = 0;
        while let Some(g) = self.groups.front().copied() {
            if bound.is_some_and(|b| g.deadline >= b) {
                break;
            }
            self.groups.pop_front();
            self.key_scratch.clear();
            self.key_scratch.extend(self.keys.drain(..g.key_len as usize));
            let live = match self.live.get_mut(&self.key_scratch[..]) {
                Some(l) if l.generation == g.generation && l.groups > 0 => {
                    l.groups -= 1;
                    l.matches -= u64::from(g.matches);
                    self.waiting -= u64::from(g.matches);
                    true
                }
                _ => false,
            };
            for _ in 0..g.matches {
                if live {
                    take(&mut self.queue, &mut self.ready, &mut self.emitted);
                    n += 1;
                } else {
                    self.queue.discard();
                }
            }
        }
        self.drop_dead_front();
        n
    }
}

impl From<Wire> for Deadlines {
    fn from(w: Wire) -> Deadlines {
        let mut d = Deadlines { next_generation: w.next_generation, ..Deadlines::default() };
        for p in &w.queue {
            let key_len = u32::try_from(p.key.len()).expect("a partition key is shorter than 4 GiB");
            let matches = u32::try_from(p.matches.len()).expect("fewer than 2^32 complex events per position");
            d.keys.extend(&p.key);
            d.groups.push_back(Group {
                deadline: p.deadline,
                generation: p.generation,
                horizon: p.horizon,
                key_len,
                matches,
            });
            p.matches.iter().for_each(|m| d.queue.push_owned(m));
        }
        // A restored key's last use is unknown: it is swept once it is idle.
        let live = |(k, (generation, groups))| (k, Live { generation, groups, matches: 0, touched: i64::MIN });
        d.live = w.live.into_iter().map(live).collect();
        d.key_bytes = d.live.keys().map(Vec::len).sum();
        // The waiting counts: the complex events of the groups of each key's generation.
        for p in &w.queue {
            if let Some(l) = d.live.get_mut(&p.key).filter(|l| l.generation == p.generation && l.groups > 0) {
                l.matches += p.matches.len() as u64;
                d.waiting += p.matches.len() as u64;
            }
        }
        w.ready.iter().for_each(|m| d.ready.push_owned(m));
        d.drop_dead_front();
        d
    }
}

impl From<Deadlines> for Wire {
    fn from(d: Deadlines) -> Wire {
        let (mut key_at, mut head_at, mut offsets) = (0usize, 0usize, (0usize, 0usize));
        let mut queue = VecDeque::with_capacity(d.groups.len());
        for g in &d.groups {
            let key = d.keys.range(key_at..key_at + g.key_len as usize).copied().collect();
            key_at += g.key_len as usize;
            let matches = (head_at..head_at + g.matches as usize).map(|i| d.queue.owned(i, &mut offsets)).collect();
            head_at += g.matches as usize;
            queue.push_back(WirePending {
                deadline: g.deadline,
                key,
                generation: g.generation,
                horizon: g.horizon,
                matches,
            });
        }
        let mut offsets = (0, 0);
        let ready = (0..d.ready.heads.len()).map(|i| d.ready.owned(i, &mut offsets)).collect();
        // Idle keys are an allocation cache, not state: the snapshot keeps the keys with groups.
        let live =
            d.live.into_iter().filter(|(_, l)| l.groups > 0).map(|(k, l)| (k, (l.generation, l.groups))).collect();
        Wire { queue, live, next_generation: d.next_generation, ready }
    }
}

/// Positions of a complex event up to this length are narrowed on the stack when it is
/// handed over (longer ones in a vector).
const STACK_POSITIONS: usize = 32;

/// Removes the first complex event of `flat` and appends it to `out`, with its measures.
#[inline]
fn emit_first<P: Position>(flat: &mut Flat, out: &mut MatchBuffer<P>, emitted: &mut Option<Vec<i64>>) {
    let h = flat.pop(&mut |h, ps, ls| emit(out, emitted, h, ps, ls));
    if h.measures > 0 {
        let values: Vec<Value> = flat.take_measures(&h).collect();
        out.push_measures(&values);
    }
}

/// Appends a fired complex event to `out`, recording its deadline if asked to.
fn emit<P: Position>(
    out: &mut MatchBuffer<P>,
    emitted: &mut Option<Vec<i64>>,
    h: &Head,
    ps: &mut dyn Iterator<Item = u64>,
    ls: &mut dyn Iterator<Item = u32>,
) {
    let n = h.len as usize;
    let (start, end) = (P::narrow(h.start), P::narrow(h.end));
    if n <= STACK_POSITIONS {
        let mut positions = [P::default(); STACK_POSITIONS];
        positions.iter_mut().zip(ps).for_each(|(slot, p)| *slot = P::narrow(p));
        if h.labelled {
            let mut labels = [0u32; STACK_POSITIONS];
            labels.iter_mut().zip(ls).for_each(|(slot, l)| *slot = l);
            out.push_labelled(start, end, &positions[..n], &labels[..n]);
        } else {
            out.push(start, end, &positions[..n]);
        }
    } else {
        let positions: Vec<P> = ps.map(P::narrow).collect();
        if h.labelled {
            let labels: Vec<u32> = ls.collect();
            out.push_labelled(start, end, &positions, &labels);
        } else {
            out.push(start, end, &positions);
        }
    }
    if let Some(e) = emitted {
        e.push(h.deadline);
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
        let n = self.state.deadlines.fire(Some(w), |queue, _, emitted| {
            emit_first(queue, out, emitted);
        });
        self.state.stats.matches += n;
        let Some(ty) = ty else { return };
        let Some(d) = &self.config.deadline else { return };
        if d.guard.matches(ty, &self.scratch.bits[..words]) {
            self.state.deadlines.cancel(&self.scratch.key_buf, w);
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
        let mut buf = self.scratch.deferred.take().unwrap_or_default();
        buf.clear();
        let any = self.emit_outputs::<u64, CAP>(next, position, tau, &mut buf);
        // An interrupted event's complex events are not all of them: none waits.
        if !buf.is_empty() && !self.interrupt.hit {
            let nanos = self.config.deadline.as_ref().map_or(0, |d| d.nanos);
            let horizon = self.window_horizon();
            let deadline = w.saturating_add(nanos);
            let matches = u32::try_from(buf.len()).expect("fewer than 2^32 complex events per position");
            // Idle keys are kept for the window plus `d` (the window is a duration: E0304).
            let keep = self.config.query.plan.window.epsilon().unwrap_or(0).saturating_add(nanos);
            let dl = &mut self.state.deadlines;
            dl.defer(&self.scratch.key_buf, deadline, horizon, matches, keep);
            for m in buf.iter() {
                dl.queue.push(m.start, m.end, deadline, m.positions, m.labels, m.measures);
                if let Some(d) = &mut dl.deferred {
                    // The interval's ends too: a projection or a leading NOT(...) can
                    // leave them out of the positions, and outputs read their times.
                    d.extend_from_slice(m.positions);
                    d.extend([m.start, m.end]);
                }
            }
        }
        self.scratch.deferred = Some(buf);
        any
    }

    /// Hands over the complex events whose deadline passed when the watermark was
    /// advanced ([`Runtime::advance_watermark`]) or the deadlines were closed
    /// ([`Runtime::close_deadlines`]), appending them to `out`. Pushes do it themselves.
    pub fn take_fired<P: Position>(&mut self, out: &mut MatchBuffer<P>) {
        let Deadlines { ready, emitted, .. } = &mut self.state.deadlines;
        while !ready.heads.is_empty() {
            emit_first(ready, out, emitted);
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

    /// Starts (or stops) recording the positions of the complex events that go to wait
    /// for their deadline, for [`Runtime::take_deferred_positions`]: a caller that
    /// keeps the events of the window (trimmed at [`Runtime::window_horizon`]) keeps
    /// those events aside until [`Runtime::horizon`] passes them, instead of every
    /// event of the last `d`.
    pub fn record_deferred_positions(&mut self, on: bool) {
        self.state.deadlines.deferred = on.then(Vec::new);
    }

    /// The positions of the complex events deferred to their deadline since the last
    /// call, their start and end included, in no particular order (with repeats); empty
    /// unless [`Runtime::record_deferred_positions`] is on.
    pub fn take_deferred_positions(&mut self) -> Vec<u64> {
        self.state.deadlines.deferred.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The positions of every complex event in the deadline queue (cancelled ones not
    /// yet dropped included: a superset) or fired and not handed over, their start and
    /// end included, sorted and without repeats: for a caller that starts keeping their
    /// events aside on state taken before it did.
    pub fn waiting_positions(&self) -> Vec<u64> {
        let dl = &self.state.deadlines;
        let mut out: Vec<u64> = dl.queue.positions.iter().chain(dl.ready.positions.iter()).copied().collect();
        out.extend(dl.queue.heads.iter().chain(dl.ready.heads.iter()).flat_map(|h| [h.start, h.end]));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether the query ends with a trailing `ABSENT(...) FOR d`.
    pub fn has_deadline(&self) -> bool {
        self.config.deadline.is_some()
    }

    /// Fires the waiting complex events whose deadline is before `w` (into the ready
    /// list that [`Runtime::take_fired`] hands over).
    pub(super) fn fire_before(&mut self, w: i64) {
        self.state.stats.matches += self.state.deadlines.fire(Some(w), |queue, ready, _| queue.move_first_to(ready));
    }

    /// Ends the input for the trailing absence: every complex event still waiting is
    /// fired, as if time had passed all deadlines with no further event (docs/language.md#s3-3b);
    /// [`Runtime::take_fired`] hands them over. No effect without a trailing absence.
    pub fn close_deadlines(&mut self) {
        self.state.stats.matches += self.state.deadlines.fire(None, |queue, ready, _| queue.move_first_to(ready));
    }

    /// Complex events waiting for their deadline (not those a cancelling event dropped).
    pub fn waiting_deadlines(&self) -> usize {
        self.state.deadlines.waiting() as usize
    }
}
