//! The det-states an evaluation has materialised (reference §5.6): the cache's
//! counters as text ([`Runtime::explain_cache`]) and the det-states with their
//! cached transitions as DOT ([`Runtime::det_states_dot`]).

use super::labels::{bare, type_label};
use crate::bitset;
use crate::det::{ClassId, DetCache, DetId, StrategyKind, OTHER_TYPE};
use crate::query::CompiledQuery;
use crate::runtime::Runtime;
use std::fmt::Write;

/// How a det-state reaches a successor on a class (the parts of `det::Succ`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Move {
    /// By output-marking transitions: the event joins the complex event.
    Marked,
    /// By transitions without the output mark.
    Unmarked,
    /// The virtual det-state's own next det-state (the strategy's view of the runs).
    Next,
}

/// One materialised det-state.
pub(super) struct DetNode {
    /// [`DetId::index`].
    pub id: usize,
    /// `{q1, q3}`, and the strategy's component (`NEXT`/`LAST` ranks, `MAX` dominators).
    pub label: String,
    pub accepting: bool,
}

/// The cached transitions from `source` to `target` by one kind of move, with the
/// classes that take them.
pub(super) struct DetEdge {
    /// [`DetId::index`] of both ends.
    pub source: usize,
    pub target: usize,
    pub kind: Move,
    pub classes: Vec<String>,
}

/// The materialised part of the determinized automaton.
pub(super) struct DetView {
    pub nodes: Vec<DetNode>,
    pub edges: Vec<DetEdge>,
    pub uncached: bool,
}

impl Runtime {
    /// The determinization cache of this evaluation (reference §5.6): det-states
    /// interned now and built since the start, event classes met, lookups answered
    /// from the cache (hits) or computed (misses), cache clears, and the mode
    /// (`cached`, or `uncached` once the thrashing guard gave up caching), with the
    /// budget. Reads counters only; the evaluation is not affected.
    pub fn explain_cache(&self) -> String {
        let cache = &self.state.cache;
        let stats = cache.stats();
        let config = cache.config();
        let lookups = stats.hits + stats.misses;
        let rate = if lookups == 0 { 0.0 } else { 100.0 * stats.hits as f64 / lookups as f64 };
        let mut out = String::new();
        let _ = writeln!(out, "Determinization cache (reference §5.6)");
        let _ = writeln!(out, "  events        {}", self.state.position);
        let _ = writeln!(
            out,
            "  det-states    {} interned now, {} built since the start",
            cache.num_states(),
            stats.det_states_created
        );
        let _ = writeln!(out, "  classes       {} event classes met since the last clear", cache.classes.len());
        let _ = writeln!(
            out,
            "  lookups       {} hits, {} misses ({rate:.1}% answered from the cache)",
            stats.hits, stats.misses
        );
        let _ = writeln!(out, "  clears        {}", stats.clears);
        let mode =
            if stats.uncached { "uncached (too many clears: successors are computed at every use)" } else { "cached" };
        let _ = writeln!(out, "  mode          {mode}");
        let _ = writeln!(
            out,
            "  budget        {} det-states, {}; {} in use",
            config.max_det_states,
            bytes(config.max_cache_bytes),
            bytes(cache.memory_bytes())
        );
        out
    }

    /// The det-states materialised so far, in Graphviz DOT: one node `dN` per
    /// det-state (its set of automaton states, and the strategy's ranking for
    /// `NEXT`/`LAST` or dominating states for `MAX`; accepting ones doubly
    /// outlined; `d0` is the virtual det-state of the run that has not started),
    /// and one edge per cached successor, labelled with the event classes that lead
    /// there (`SELL: name = 'MSFT'`: a SELL event for which, of the predicates of
    /// SELL, exactly `name = 'MSFT'` is TRUE). Solid edges are output-marked successors,
    /// dashed ones unmarked, dotted ones the virtual det-state's own next one.
    pub fn det_states_dot(&self) -> String {
        super::dot::det_states(&det_view(&self.config.query, &self.state.cache))
    }
}

fn det_view(q: &CompiledQuery, cache: &DetCache) -> DetView {
    let n = cache.num_states();
    let nodes = (0..n)
        .map(|i| {
            let d = DetId::from_index(i);
            DetNode { id: i, label: det_label(cache, d), accepting: cache.is_final(d) }
        })
        .collect();
    let mut edges: Vec<DetEdge> = Vec::new();
    let uncached = cache.stats().uncached;
    if !uncached {
        for d in (0..n).map(DetId::from_index) {
            for c in (0..cache.classes.len()).map(ClassId::from_index) {
                let Some(succ) = cache.lookup(d, c) else { continue };
                // With captures on, the marked part is a list: one target per label.
                let marked: Vec<DetId> = match (succ.has_marked(), cache.captures()) {
                    (false, _) => Vec::new(),
                    (true, false) => vec![succ.marked()],
                    (true, true) => cache.marked_list(succ.marked_list()).iter().map(|&(_, t)| t).collect(),
                };
                let moves = marked
                    .into_iter()
                    .map(|t| (t, Move::Marked))
                    .chain([succ.unmarked(), succ.unmarked_other()].map(|t| (t, Move::Unmarked)))
                    .chain([(succ.next_virtual(), Move::Next)]);
                for (target, kind) in moves {
                    if target.is_dead() {
                        continue;
                    }
                    let (source, target) = (d.index(), target.index());
                    let class = class_label(q, cache, c);
                    match edges.iter_mut().find(|e| e.source == source && e.target == target && e.kind == kind) {
                        Some(e) => e.classes.push(class),
                        None => edges.push(DetEdge { source, target, kind, classes: vec![class] }),
                    }
                }
            }
        }
    }
    DetView { nodes, edges, uncached }
}

/// `{q1, q3}` plus the strategy's component of the key.
fn det_label(cache: &DetCache, d: DetId) -> String {
    let set = |words: &[u64]| {
        let states: Vec<String> = bitset::iter(words).map(|q| format!("q{q}")).collect();
        format!("{{{}}}", states.join(", "))
    };
    let portable = cache.export(d);
    let mut label = set(&portable.states);
    let words = portable.states.len().max(1);
    match cache.kind() {
        StrategyKind::All => {}
        StrategyKind::Next | StrategyKind::Last => {
            let blocks: Vec<String> = portable.extra.chunks(words).map(set).collect();
            if !blocks.is_empty() {
                let _ = write!(label, "\nrank {}", blocks.join(" > "));
            }
        }
        StrategyKind::Max => {
            if !bitset::is_empty(&portable.extra) {
                let _ = write!(label, "\ndominated by {}", set(&portable.extra));
            }
        }
    }
    if d == DetId::INITIAL {
        label = format!("{label}\n(not started)");
    }
    label
}

/// An event class: its type and the predicates of the type that are TRUE for it
/// (`SELL: name = 'MSFT'`); the others are FALSE or NULL (`SELL: none`).
fn class_label(q: &CompiledQuery, cache: &DetCache, c: ClassId) -> String {
    let (ty, bits) = cache.classes.get(c);
    if ty == OTHER_TYPE {
        return "another type".to_string();
    }
    let texts = &q.pred_texts[ty as usize];
    let name = type_label(q, ty);
    if texts.is_empty() {
        return name;
    }
    let true_ones: Vec<&str> =
        texts.iter().enumerate().filter(|&(b, _)| bitset::test(bits, b)).map(|(_, t)| bare(t)).collect();
    if true_ones.is_empty() {
        format!("{name}: none")
    } else {
        format!("{name}: {}", true_ones.join(", "))
    }
}

/// Bytes in the largest binary unit that keeps a readable number (`64 MiB`).
fn bytes(n: usize) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
