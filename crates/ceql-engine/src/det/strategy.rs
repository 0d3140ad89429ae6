//! Successors of det-states for each selection strategy (docs/language.md#s3-6, #s5-5).
//!
//! A det-state key is `P ‖ X`: `P` is a set of automaton states; `X` is what the
//! strategy's automaton construction adds ([FCEP] appendix C.3):
//!
//! | strategy   | `X`                                 | construction                         |
//! |------------|-------------------------------------|--------------------------------------|
//! | ALL, STRICT| nothing                             | subset construction (STRICT: on the CEA without `c = ∘` transitions) |
//! | NEXT, LAST | id of a total preorder `T` of states | (state, total preorder) automaton    |
//! | MAX        | state set `Q` of dominating runs    | (P, Q) pairs                         |
//!
//! All constructions are I/O-determinized on the fly: the successors of a
//! det-state on a class are split by output mark, so that the tECS stays
//! duplicate-free and Algorithm 1 runs unchanged.
//!
//! **The virtual run.** [FCEP] starts every run at position 0 with a `TRUE/∘` loop
//! on the initial state; here that loop is virtual: a det-state containing `q0`
//! (no other does, by C1) stands for the run that has not started yet. Its
//! successors are the runs that start at the current event (the marked and
//! unmarked parts of [`super::Succ`]) and the virtual run's own next det-state
//! ([`super::Succ::next_virtual`]). For ALL and STRICT it is always `{q0}`;
//! for NEXT/LAST it carries the preorder over all live runs, for MAX the states of
//! all live runs (every run dominates one that has marked nothing).

use super::preorder::Preorders;
use crate::bitset;
use crate::cea::{Cea, Transition};
use crate::schema::TypeId;

/// Strategy whose automaton the cache builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    /// Every match (ALL, ANY; STRICT after removing `c = ∘` transitions).
    All,
    /// Earliest-preferring (`<next`).
    Next,
    /// Latest-preferring (`<last`).
    Last,
    /// Maximal by inclusion.
    Max,
}

impl StrategyKind {
    /// Words of the strategy component `X` of a key.
    pub fn extra_words(self, words: usize) -> usize {
        match self {
            StrategyKind::All => 0,
            StrategyKind::Next | StrategyKind::Last => 1,
            StrategyKind::Max => words,
        }
    }
}

/// Scratch buffers reused by successor computations.
pub(crate) struct Scratch {
    words: usize,
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u64>,
    d: Vec<u64>,
    e: Vec<u64>,
    placed: Vec<u64>,
    /// Groups of the next preorder: where they come from, their states, and
    /// whether they tie with the group before (see `preorder.rs`).
    groups: Vec<(Group, Vec<u64>, bool)>,
    blocks: Vec<u64>,
    /// Output-marked successors per capture label (one label, 0, with captures off).
    marked: Vec<(u32, Vec<u64>)>,
}

/// The keys of the successors other than the output-marked ones, one per part of
/// [`super::Succ`] (an empty key: no such successor).
#[derive(Default)]
pub(crate) struct SuccessorKeys {
    /// [`super::Succ::unmarked`].
    pub unmarked: Vec<u64>,
    /// [`super::Succ::unmarked_other`] (MAX only).
    pub unmarked_other: Vec<u64>,
    /// [`super::Succ::next_virtual`] (the virtual det-state only).
    pub next_virtual: Vec<u64>,
}

impl SuccessorKeys {
    fn clear(&mut self) {
        self.unmarked.clear();
        self.unmarked_other.clear();
        self.next_virtual.clear();
    }
}

/// Where the runs of a block of the next preorder come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// Block `i` of the previous preorder, by transitions with this comparison mark.
    Block(usize, bool),
    /// Runs starting now, by transitions that bind variables (`true`) or not.
    Start(bool),
}

impl Scratch {
    pub(crate) fn new(words: usize) -> Self {
        let z = || vec![0u64; words];
        Scratch {
            words,
            a: z(),
            b: z(),
            c: z(),
            d: z(),
            e: z(),
            placed: z(),
            groups: Vec::new(),
            blocks: Vec::new(),
            marked: Vec::new(),
        }
    }

    /// Forgets the marked successors of the previous computation.
    fn clear_marked(&mut self) {
        self.marked.iter_mut().for_each(|(_, set)| clear(set));
    }

    /// Adds `target` to the marked successors of `label`.
    fn mark(&mut self, label: u32, target: usize) {
        let i = match self.marked.iter().position(|(l, _)| *l == label) {
            Some(i) => i,
            None => {
                self.marked.push((label, vec![0; self.words]));
                self.marked.len() - 1
            }
        };
        bitset::set(&mut self.marked[i].1, target);
    }

    /// Appends to `out` one key per label with marked successors: the successors
    /// minus `minus` (if any), followed by `tail`. Labels in ascending order.
    fn emit_marked(&mut self, out: &mut Vec<(u32, Vec<u64>)>, minus_set: Option<&[u64]>, tail: &[u64]) {
        self.marked.sort_unstable_by_key(|(l, _)| *l);
        for (label, set) in &mut self.marked {
            if let Some(m) = minus_set {
                minus(set, m);
            }
            if !bitset::is_empty(set) {
                let mut key = set.clone();
                key.extend_from_slice(tail);
                out.push((*label, key));
            }
        }
    }
}

/// The label a marked transition is split by: its capture label with captures
/// on, 0 (one marked successor) with captures off.
#[inline]
fn split_label(t: &Transition, split: bool) -> u32 {
    if split {
        t.label
    } else {
        0
    }
}

fn clear(v: &mut [u64]) {
    v.iter_mut().for_each(|w| *w = 0);
}

fn minus(a: &mut [u64], b: &[u64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x &= !y);
}

fn union(a: &mut [u64], b: &[u64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
}

/// The automaton read on one event class.
#[derive(Clone, Copy)]
pub(crate) struct OnClass<'a> {
    /// The automaton.
    pub cea: &'a Cea,
    /// The event's type.
    pub ty: TypeId,
    /// Its predicate bits.
    pub bits: &'a [u64],
}

impl<'a> OnClass<'a> {
    /// The transitions of `p` whose guard accepts the class.
    fn enabled(self, p: usize) -> impl Iterator<Item = &'a Transition> + 'a {
        let OnClass { cea, ty, bits } = self;
        cea.out[p].iter().filter(move |t| cea.guards[t.guard as usize].matches(ty, bits))
    }
}

/// Computes the successor keys of `key` on a class into `out` (the parts of
/// [`super::Succ`] other than the marked one) and the output-marked ones into
/// `marked`, one per label (`split`: by capture label, otherwise all under label
/// 0); an empty key means no successor.
///
/// With `split`, the runs of one det-state are partitioned by the variable sets
/// they capture; everything else (the preorder of NEXT/LAST, the domination set
/// of MAX) is computed from all runs, exactly as without it. So the union of
/// the split successors is the unsplit one, and a det-state of a split run
/// accepts iff some selected run captures with that run's labels: the selected
/// valuations of docs/language.md#s3-6 (see docs/language.md#s5-6).
#[allow(clippy::too_many_arguments)]
pub(crate) fn successors(
    on: OnClass<'_>,
    kind: StrategyKind,
    key: &[u64],
    preorders: &mut Preorders,
    s: &mut Scratch,
    out: &mut SuccessorKeys,
    marked: &mut Vec<(u32, Vec<u64>)>,
    split: bool,
) {
    let w = s.words;
    let p = &key[..w];
    let is_virtual = bitset::test(p, 0);
    out.clear();
    marked.clear();
    s.clear_marked();
    match kind {
        StrategyKind::All => {
            clear(&mut s.b);
            for q in bitset::iter(p) {
                for t in on.enabled(q) {
                    if t.marked {
                        s.mark(split_label(t, split), t.target as usize);
                    } else {
                        bitset::set(&mut s.b, t.target as usize);
                    }
                }
            }
            s.emit_marked(marked, None, &[]);
            if !bitset::is_empty(&s.b) {
                out.unmarked.extend_from_slice(&s.b);
            }
            if is_virtual {
                out.next_virtual.extend_from_slice(p);
            }
        }
        StrategyKind::Next | StrategyKind::Last => preorder_successors(on, kind, key, preorders, s, out, marked, split),
        StrategyKind::Max => max_successors(on, key, s, out, marked, split),
    }
}

/// NEXT/LAST: the next preorder `T'` is built by scanning the blocks of `T`
/// (NEXT: per block, comparison-marked successors, then unmarked; LAST: the marked
/// successors of every block, then the runs starting now, then every block's
/// unmarked successors). A state is placed once, by its most preferred run; only
/// transitions from that run's block, with that comparison mark, lead to it.
///
/// The runs starting now all have the key `K = {j}`; those that bind the event are
/// preferred to `NOT` starts only while the keys stay equal (docs/language.md#s3-6 compares `K`
/// first, then `D`). NEXT therefore keeps them as tied blocks, and scans a tie as
/// one block: the marked successors of all its blocks, then the unmarked ones.
/// (LAST needs no ties: it already emits all marked successors before any unmarked.)
#[allow(clippy::too_many_arguments)]
fn preorder_successors(
    on: OnClass<'_>,
    kind: StrategyKind,
    key: &[u64],
    preorders: &mut Preorders,
    s: &mut Scratch,
    out: &mut SuccessorKeys,
    marked: &mut Vec<(u32, Vec<u64>)>,
    split: bool,
) {
    let w = s.words;
    let p = &key[..w];
    let t = key[w] as u32;
    let blocks: Vec<u64> = preorders.blocks(t).to_vec();
    let nblocks = blocks.len() / w;
    // Tied blocks (runs of blocks joined by empty ones), as index ranges.
    let mut ties: Vec<Vec<usize>> = Vec::new();
    for i in 0..nblocks {
        if bitset::is_empty(&blocks[i * w..(i + 1) * w]) {
            continue;
        }
        let tied = i > 0 && bitset::is_empty(&blocks[(i - 1) * w..i * w]);
        match ties.last_mut() {
            Some(tie) if tied => tie.push(i),
            _ => ties.push(vec![i]),
        }
    }
    clear(&mut s.placed);
    s.groups.clear();
    // Groups pushed with the same `unit` tie with each other (NEXT only).
    let mut last_unit = usize::MAX;
    let mut push_group = |s: &mut Scratch, g: Group, unit: usize| {
        // Collect the targets of the group's transitions that are not placed yet.
        clear(&mut s.a);
        match g {
            Group::Block(i, cflag) => {
                for q in bitset::iter(&blocks[i * w..(i + 1) * w]) {
                    for tr in on.enabled(q).filter(|tr| tr.compared == cflag) {
                        bitset::set(&mut s.a, tr.target as usize);
                    }
                }
            }
            Group::Start(bound) => {
                for tr in on.enabled(0).filter(|tr| tr.vars.is_empty() != bound) {
                    bitset::set(&mut s.a, tr.target as usize);
                }
            }
        }
        let (a, placed) = (&mut s.a, &mut s.placed);
        minus(a, placed);
        if !bitset::is_empty(a) {
            union(placed, a);
            let tied = kind == StrategyKind::Next && unit == last_unit;
            last_unit = unit;
            s.groups.push((g, a.clone(), tied));
        }
    };
    match kind {
        StrategyKind::Next => {
            for (u, tie) in ties.iter().enumerate() {
                for cflag in [true, false] {
                    for &i in tie {
                        push_group(s, Group::Block(i, cflag), 2 * u + usize::from(!cflag));
                    }
                }
            }
            push_group(s, Group::Start(true), usize::MAX - 1);
            push_group(s, Group::Start(false), usize::MAX - 1);
        }
        _ => {
            for (u, i) in ties.iter().flatten().enumerate() {
                push_group(s, Group::Block(*i, true), u);
            }
            push_group(s, Group::Start(true), usize::MAX - 1);
            push_group(s, Group::Start(false), usize::MAX - 1);
            for (u, i) in ties.iter().flatten().enumerate() {
                push_group(s, Group::Block(*i, false), u);
            }
        }
    }
    s.blocks.clear();
    for (_, g, tied) in &s.groups {
        if *tied {
            s.blocks.extend(std::iter::repeat_n(0, w));
        }
        s.blocks.extend_from_slice(g);
    }
    let next_t = preorders.intern(&s.blocks) as u64;
    clear(&mut s.c);
    let is_virtual = bitset::test(p, 0);
    // Marked successors (label, state), added to `s.marked` after the scan.
    let mut pending: Vec<(u32, usize)> = Vec::new();
    for (g, targets, _) in &s.groups {
        match *g {
            Group::Block(i, cflag) if !is_virtual => {
                for q in bitset::iter(&blocks[i * w..(i + 1) * w]).filter(|&q| bitset::test(p, q)) {
                    for tr in on.enabled(q) {
                        if tr.compared == cflag && bitset::test(targets, tr.target as usize) {
                            if tr.marked {
                                pending.push((split_label(tr, split), tr.target as usize));
                            } else {
                                bitset::set(&mut s.c, tr.target as usize);
                            }
                        }
                    }
                }
            }
            Group::Start(bound) if is_virtual => {
                for tr in on.enabled(0).filter(|tr| tr.vars.is_empty() != bound) {
                    if bitset::test(targets, tr.target as usize) {
                        if tr.marked {
                            pending.push((split_label(tr, split), tr.target as usize));
                        } else {
                            bitset::set(&mut s.c, tr.target as usize);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for (label, target) in pending {
        s.mark(label, target);
    }
    s.emit_marked(marked, None, &[next_t]);
    if !bitset::is_empty(&s.c) {
        out.unmarked.extend_from_slice(&s.c);
        out.unmarked.push(next_t);
    }
    if is_virtual {
        out.next_virtual.extend_from_slice(p);
        out.next_virtual.push(next_t);
    }
}

/// MAX: the (P, Q) construction; `Q` holds the states of runs whose complex
/// events include the current one's (same end, `K ⊆ K'` and `D ⊆ D'`).
///
/// The parts of [`super::Succ`]: the output-marked successor, two output-unmarked
/// ones with different `Q`, and the next virtual det-state. At its start a run is compared-marked
/// whatever it binds, so the virtual run separates starts that bind variables
/// (`D ∋ j`) from `NOT` starts (`D ∌ j`), which the former dominate.
fn max_successors(
    on: OnClass<'_>,
    key: &[u64],
    s: &mut Scratch,
    out: &mut SuccessorKeys,
    marked: &mut Vec<(u32, Vec<u64>)>,
    split: bool,
) {
    let w = s.words;
    let (p, q) = (&key[..w], &key[w..2 * w]);
    // Successors of Q by comparison-marked (a) and unmarked (b) transitions.
    clear(&mut s.a);
    clear(&mut s.b);
    for x in bitset::iter(q) {
        for tr in on.enabled(x) {
            bitset::set(if tr.compared { &mut s.a } else { &mut s.b }, tr.target as usize);
        }
    }
    // Successors of P: compared & marked (c), compared & unmarked (d), not compared (e).
    // For the virtual run: binding & marked (c), binding & unmarked (d), NOT starts (e).
    clear(&mut s.c);
    clear(&mut s.d);
    clear(&mut s.e);
    let is_virtual = bitset::test(p, 0);
    let mut pending: Vec<(u32, usize)> = Vec::new();
    for x in bitset::iter(p) {
        for tr in on.enabled(x) {
            let first = if is_virtual { !tr.vars.is_empty() } else { tr.compared };
            let target = match (first, tr.marked) {
                (true, true) => {
                    pending.push((split_label(tr, split), tr.target as usize));
                    &mut s.c
                }
                (true, false) => &mut s.d,
                (false, _) => &mut s.e,
            };
            bitset::set(target, tr.target as usize);
        }
    }
    let emit = |out: &mut Vec<u64>, pset: &[u64], dominated_by: &[u64]| {
        let mut pset = pset.to_vec();
        minus(&mut pset, dominated_by);
        if !bitset::is_empty(&pset) {
            out.extend_from_slice(&pset);
            out.extend_from_slice(dominated_by);
        }
    };
    // Comparison-marked successors: (δ•(P) ∖ δ•(Q), δ•(Q)), split by output mark
    // (and the marked ones by label).
    for (label, target) in pending {
        s.mark(label, target);
    }
    let dominating = s.a.clone();
    s.emit_marked(marked, Some(&dominating), &dominating);
    emit(&mut out.unmarked, &s.d, &s.a);
    if is_virtual {
        // NOT starts are dominated by the binding starts of the same event.
        let mut q_not = s.a.clone();
        union(&mut q_not, &s.c);
        union(&mut q_not, &s.d);
        emit(&mut out.unmarked_other, &s.e, &q_not);
        // The virtual run loops on q0; every live run dominates it.
        let mut q_all = s.a.clone();
        union(&mut q_all, &s.b);
        union(&mut q_all, &s.c);
        union(&mut q_all, &s.d);
        union(&mut q_all, &s.e);
        out.next_virtual.extend_from_slice(p);
        out.next_virtual.extend_from_slice(&q_all);
    } else {
        // Q'' = δ•(Q) ∪ δ∘(Q) ∪ δ•(P).
        let mut q2 = s.a.clone();
        union(&mut q2, &s.b);
        union(&mut q2, &s.c);
        union(&mut q2, &s.d);
        emit(&mut out.unmarked_other, &s.e, &q2);
    }
}

/// Whether det-state `key` accepts: its runs end in a final state and, for the
/// strategies, are selected (NEXT/LAST: in the most preferred block holding a final
/// state; MAX: no dominating run ends in a final state).
pub(crate) fn is_final(cea: &Cea, kind: StrategyKind, words: usize, key: &[u64], preorders: &Preorders) -> bool {
    let p = &key[..words];
    let final_in = |set: &[u64]| bitset::iter(set).any(|q| cea.finals[q]);
    match kind {
        StrategyKind::All => final_in(p),
        StrategyKind::Max => final_in(p) && !final_in(&key[words..2 * words]),
        StrategyKind::Next | StrategyKind::Last => {
            let blocks = preorders.blocks(key[words] as u32);
            let Some(best) = blocks.chunks(words).find(|b| final_in(b)) else { return false };
            bitset::iter(p).any(|q| cea.finals[q] && bitset::test(best, q))
        }
    }
}
