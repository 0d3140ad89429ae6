//! ON_EVENT, EXEC_TRANS and OUTPUT of reference §6.5 (Algorithm 1 of [CORE]).
//!
//! Per event the work is O(|T| · (cost(δ) + |T|)) for the event's partition only:
//! constant in the length of the stream and the size of the window.

use super::partition::Entry;
use super::Runtime;
use crate::det::{ClassId, DetId, DEAD, INITIAL};
use crate::output::MatchBuffer;
use crate::tecs::{check_invariants, new_ulist, prune, Item, UnionList};
use ceql_syntax::ast::ConsumePolicy;

impl Runtime {
    /// Processes an accepted event of class `class` at `position` with coordinate `w`
    /// in the partition whose key is in `self.key_buf`.
    pub(super) fn on_event(&mut self, class: ClassId, position: u64, w: i64, out: &mut MatchBuffer) {
        let pid = self.partitions.get_or_create(&self.key_buf, self.reset_epoch);
        let part = self.partitions.get_mut(pid);
        if part.epoch < self.reset_epoch {
            // Lazy CONSUME BY ANY: the partition was reset by an earlier output.
            self.pool.extend(part.table.drain(..).map(|e| e.ul));
            part.epoch = self.reset_epoch;
        }
        let mut table = std::mem::take(&mut part.table);
        let tau = self.threshold(w);
        self.arena.set_coordinate(w);
        self.begin_table();
        let mut next = std::mem::take(&mut self.next_table);
        let prev_len = table.len();

        // The run that starts at this event is executed first: its max, w(j), is
        // the largest, which keeps the heads of T' in non-increasing order.
        let (m, u) = self.cache.step(INITIAL, class);
        if m != DEAD || u != DEAD {
            let bottom = Item { node: self.arena.bottom(position, w), max: w };
            let ul = new_ulist(bottom, &mut self.pool);
            self.exec_trans(&mut next, m, u, ul, position);
        }
        for Entry { det, mut ul } in table.drain(..) {
            if !prune(&mut ul, tau) {
                self.pool.push(ul);
                continue;
            }
            let (m, u) = self.cache.step(det, class);
            self.exec_trans(&mut next, m, u, ul, position);
        }
        debug_assert!(
            next.windows(2).all(|p| p[0].ul[0].max >= p[1].ul[0].max),
            "processing order: heads of T are non-increasing"
        );
        debug_assert!(next.iter().all(|e| check_invariants(&e.ul) && e.ul.len() <= prev_len + 2));

        // OUTPUT: complex events of final det-states whose start is in the window.
        let mut any = false;
        let mut budget = self.query.plan.limit.unwrap_or(u64::MAX);
        for e in &next {
            if !self.cache.is_final(e.det) || e.ul[0].max < tau {
                continue;
            }
            any = true;
            if !self.options.enumerate {
                break;
            }
            for &item in &e.ul {
                if budget == 0 {
                    break;
                }
                budget -= self.enumerator.enumerate(&self.arena, item, position, tau, budget, out);
            }
        }

        // CONSUME BY (§3.10): tested on O_j before LIMIT.
        let reset = any && self.query.consume() != ConsumePolicy::None;
        if reset {
            self.pool.extend(next.drain(..).map(|e| e.ul));
            if self.query.consume() == ConsumePolicy::Any || !self.partitions.keyed() {
                self.reset_epoch += 1;
            }
        }
        let part = self.partitions.get_mut(pid);
        part.table = next;
        part.epoch = self.reset_epoch;
        self.next_table = table;
        self.partitions.touch(pid, w);
        if self.partitions.get_mut(pid).table.is_empty() {
            self.partitions.remove(pid, &mut self.pool);
        }
    }

    /// EXEC_TRANS: moves the union-list `ul` of a det-state along `(m, u) = δ(p, c)`.
    #[inline]
    fn exec_trans(&mut self, next: &mut Vec<Entry>, m: DetId, u: DetId, ul: UnionList, position: u64) {
        let u_index = if u != DEAD { self.index_of(u) } else { None };
        if m == DEAD && u_index.is_none() {
            if u == DEAD {
                self.pool.push(ul);
            } else {
                // Only a non-marking successor not yet in T': reuse the list as is.
                self.set_index(u, next.len());
                next.push(Entry { det: u, ul });
            }
            return;
        }
        let merged = self.arena.ulist_merge(&ul);
        if m != DEAD {
            let node = self.arena.output(position, merged.node, merged.max);
            self.add(next, m, Item { node, max: merged.max });
        }
        match (u, u_index) {
            (DEAD, _) => self.pool.push(ul),
            (_, Some(i)) => {
                self.arena.ulist_insert(&mut next[i].ul, merged);
                self.pool.push(ul);
            }
            (_, None) => {
                self.set_index(u, next.len());
                next.push(Entry { det: u, ul });
            }
        }
    }

    /// ADD: inserts a non-union node under det-state `q` of `T'`.
    #[inline]
    fn add(&mut self, next: &mut Vec<Entry>, q: DetId, n: Item) {
        match self.index_of(q) {
            Some(i) => self.arena.ulist_insert(&mut next[i].ul, n),
            None => {
                self.set_index(q, next.len());
                let ul = new_ulist(n, &mut self.pool);
                next.push(Entry { det: q, ul });
            }
        }
    }

    /// Starts a new `T'`: invalidates every index of the previous one in O(1).
    fn begin_table(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.stamp_of.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
    }

    #[inline]
    fn index_of(&self, d: DetId) -> Option<usize> {
        let d = d as usize;
        (d < self.stamp_of.len() && self.stamp_of[d] == self.stamp).then(|| self.slot_of[d] as usize)
    }

    #[inline]
    fn set_index(&mut self, d: DetId, i: usize) {
        let d = d as usize;
        if d >= self.stamp_of.len() {
            let n = (d + 1).max(self.stamp_of.len() * 2);
            self.stamp_of.resize(n, 0);
            self.slot_of.resize(n, 0);
        }
        self.stamp_of[d] = self.stamp;
        self.slot_of[d] = i as u32;
    }
}
