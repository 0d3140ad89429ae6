//! The memory budget of one evaluation (hardening): what it covers, how it is
//! enforced, and the errors that say which part of the query outgrew it.
//!
//! * The **determinization cache** (`max_det_states`, `max_cache_bytes`) covers
//!   every interned det-state, including those that partial matches are in. When it
//!   is full it is cleared and rebuilt from the det-states in use; if those alone
//!   exceed it, no clear can help (the runs are in too many combinations of
//!   automaton states at once, an exponential determinization), and the event is
//!   refused with a memory error naming the constructs whose states vary.
//! * The **state budget** (`max_state_bytes`, default: half of the memory the
//!   process may use, see [`crate::memory::default_state_budget`]) covers the
//!   cache, the tECS arena and the partitions. [`Runtime::push`] checks it before
//!   each event and [`Runtime::push_batch`] every [`BUDGET_CHECK_ROWS`] rows (a
//!   batch can overshoot it by what that many events add); the fast path
//!   [`Runtime::push_target`] leaves it to its caller, so that the per-event work
//!   of the engine does not grow.

use super::Runtime;
use crate::det::DetId;
use crate::error::EventError;

/// Rows of an Arrow batch between two checks of the state budget.
pub(crate) const BUDGET_CHECK_ROWS: usize = 4096;

impl Runtime {
    /// Clears the determinization cache, keeping the det-states that partitions
    /// still use (their ids are remapped). Fails when those alone exceed the budget.
    pub(super) fn clear_cache(&mut self) -> Result<(), EventError> {
        let epoch = self.state.reset_epoch;
        let mut live = Vec::new();
        for p in self.state.partitions.iter_mut() {
            if p.epoch < epoch {
                // Lazily consumed: drop it now instead of keeping its states.
                self.scratch.pool.extend(p.table.drain(..).map(|e| e.ul));
                p.epoch = epoch;
                p.virtual_det = DetId::INITIAL;
            }
            live.push(p.virtual_det);
            live.extend(p.table.iter().map(|e| e.det));
        }
        let remap = self.state.cache.clear(live, self.state.position);
        let mut kept = Vec::new();
        for p in self.state.partitions.iter_mut() {
            p.virtual_det = remap[p.virtual_det.index()];
            for e in &mut p.table {
                e.det = remap[e.det.index()];
                kept.push(e.det);
            }
            p.dets = super::partition::dets_of(&p.table);
        }
        self.scratch.slot_of.clear();
        self.scratch.stamp_of.clear();
        if self.state.cache.exhausted() {
            kept.sort_unstable();
            kept.dedup();
            return Err(EventError::state_memory(self.state.position, self.exploding_message(&kept)));
        }
        Ok(())
    }

    /// Why the det-states in use (`live`) do not fit the cache: the constructs whose
    /// automaton states occur in some of them but not all.
    fn exploding_message(&self, live: &[DetId]) -> String {
        let config = *self.state.cache.config();
        let freq = self.state.cache.state_frequencies(live);
        let cea = self.state.cache.cea();
        let text = &self.config.query.text;
        // States that tell det-states apart, most balanced first.
        let mut varying: Vec<(usize, usize)> = (1..cea.num_states)
            .filter(|&q| freq[q] > 0 && freq[q] < live.len())
            .map(|q| (freq[q].min(live.len() - freq[q]), q))
            .collect();
        varying.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut constructs: Vec<String> = Vec::new();
        for (_, q) in varying {
            let span = cea.state_spans[q];
            let loc = ceql_syntax::span::locate(text, span);
            let snippet: String =
                text.get(span.start..span.end).unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" ");
            let snippet = if snippet.chars().count() > 40 {
                format!("{}…", snippet.chars().take(40).collect::<String>())
            } else {
                snippet
            };
            let item = format!("`{snippet}` at {}:{}", loc.line, loc.column);
            if !constructs.contains(&item) {
                constructs.push(item);
            }
            if constructs.len() == 3 {
                break;
            }
        }
        let which = if constructs.is_empty() {
            String::new()
        } else {
            format!(" They differ in the states of {}.", constructs.join(", "))
        };
        // The cache keeps its start det-state beside those of the partial matches.
        let (kept, bytes) = (self.state.cache.num_states(), self.state.cache.memory_bytes());
        let over = if kept > config.max_det_states { format!("{kept} det-states") } else { format!("{bytes} bytes") };
        let combinations = if live.len() == 1 { "combination" } else { "combinations" };
        let bound = if self.config.facts.epsilon.is_some() {
            "shorten the window, add CONSUME BY"
        } else {
            "bound the runs with WITHIN or CONSUME BY"
        };
        format!(
            "the partial matches are in {} different {combinations} of automaton states at once (det-states); \
             with its start state the determinization cache must keep {over}, more than it holds (max_det_states = \
             {}, max_cache_bytes = {} bytes).{which} Raise max_det_states / max_cache_bytes, {bound}, or make the \
             pattern less ambiguous.",
            live.len(),
            config.max_det_states,
            config.max_cache_bytes,
        )
    }

    /// Errors when the state (cache, tECS arena, partitions) exceeds
    /// `max_state_bytes`; the message names the part that dominates. Costs a few
    /// dozen instructions: call it between batches of events, not per event.
    pub fn check_state_budget(&self) -> Result<(), EventError> {
        // Every push path checks the budget first: an interrupted evaluation (whose
        // state is half updated) is refused there too.
        if self.interrupt.hit {
            return Err(Self::interrupted_error(self.state.position));
        }
        // The values kept for filters between events live as long as the tECS nodes
        // (the window): they count with the arena.
        let (arena, cache, parts) = (
            self.state.arena.memory_bytes() + self.state.values.memory_bytes(),
            self.state.cache.memory_bytes(),
            self.state.partitions.memory_bytes(),
        );
        let held = self.state.reorder.as_ref().map_or(0, |b| b.memory_bytes());
        // Only a trailing absence has waiting complex events (this runs per event of
        // the mapping path: keep the other queries' check as short as it was).
        let waiting = if self.config.deadline.is_some() { self.state.deadlines.memory_bytes() } else { 0 };
        let total = arena + cache + parts + held + waiting;
        if total <= self.config.state_budget {
            return Ok(());
        }
        let mib = human_bytes;
        let why = if waiting >= arena && waiting >= cache && waiting >= parts && waiting >= held {
            format!(
                "{} complex events waiting for the deadline of the trailing ABSENT(...) FOR d hold {}; they wait for \
                 d: shorten it, or raise max_state_bytes",
                self.state.deadlines.waiting(),
                mib(waiting)
            )
        } else if held >= arena && held >= cache && held >= parts {
            super::reorder::over_budget_message(self, held)
        } else if parts >= arena && parts >= cache {
            let evicted = self.state.partitions.evicted_count();
            let kept = if evicted > 0 {
                format!(
                    " {evicted} of them only keep the {} strategy state of runs that left the window \
                     (the strategy is applied before the window); a match under CONSUME BY releases it (under CONSUME BY \
                     ANY, every key's), and the ALL strategy keeps none.",
                    self.config.query.plan.strategy.keyword()
                )
            } else {
                String::new()
            };
            let remedy = if self.config.facts.epsilon.is_some() {
                "More keys are active within the window than the budget holds: raise max_state_bytes, or shorten \
                 the window"
            } else {
                "Without WITHIN every key stays: add WITHIN, or CONSUME BY"
            };
            format!(
                "{} partitions (PARTITION BY keys) hold {}.{kept} {remedy}",
                self.state.partitions.len(),
                mib(parts)
            )
        } else if arena >= cache {
            let remedy = if self.config.facts.epsilon.is_some() {
                "they live as long as the window: shorten it, or add CONSUME BY"
            } else {
                "without WITHIN they live until they die or are consumed: add WITHIN or CONSUME BY"
            };
            format!("the partial matches (tECS) hold {}; {remedy}", mib(arena))
        } else {
            format!("the determinization cache holds {}; lower max_cache_bytes", mib(cache))
        };
        // Rounded, the two sizes can read the same ("97 KiB exceeds 97 KiB"): then in bytes.
        let (used, budget) = (mib(total), mib(self.config.state_budget));
        let (used, budget) = if used == budget {
            (format!("{total} bytes"), format!("{} bytes", self.config.state_budget))
        } else {
            (used, budget)
        };
        Err(EventError::state_memory(
            self.state.position,
            format!("the evaluation's state ({used}) exceeds max_state_bytes = {budget}: {why}"),
        ))
    }
}

/// A size for a message: bytes below 1 KiB, KiB below 1 MiB, MiB (with one
/// decimal below 10 MiB unless whole) above, so that small budgets do not read as "0 MiB".
fn human_bytes(b: usize) -> String {
    match b {
        0..1024 => format!("{b} bytes"),
        1024..1_048_576 => format!("{} KiB", b >> 10),
        1_048_576..10_485_760 if b % 1_048_576 != 0 => format!("{:.1} MiB", b as f64 / 1_048_576.0),
        _ => format!("{} MiB", b >> 20),
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn small_sizes_do_not_read_as_zero_mib() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(300 << 10), "300 KiB");
        assert_eq!(human_bytes(1 << 20), "1 MiB");
        assert_eq!(human_bytes(3 << 19), "1.5 MiB");
        assert_eq!(human_bytes(8 << 20), "8 MiB");
        assert_eq!(human_bytes(512 << 20), "512 MiB");
    }
}
