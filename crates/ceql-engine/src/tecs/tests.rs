//! Direct tests of the tECS: union gadgets, union-lists and enumeration with the
//! window threshold.

use crate::enumerate::Enumerator;
use crate::output::MatchBuffer;
use crate::tecs::{prune, Arena, Item, NodeKind};
use std::collections::BTreeSet;

fn enumerate(arena: &Arena, root: Item, end: u64, tau: i64) -> BTreeSet<(u64, Vec<u64>)> {
    let mut out = MatchBuffer::new();
    let n = Enumerator::default().enumerate::<_, false>(arena, root, end, tau, u64::MAX, &mut out);
    let set: BTreeSet<(u64, Vec<u64>)> = out.iter().map(|m| (m.start, m.positions.to_vec())).collect();
    assert_eq!(set.len() as u64, n, "duplicate-free enumeration");
    set
}

#[test]
fn union_gadgets_keep_every_open_complex_event() {
    let mut a = Arena::new();
    // Four runs that all started at position 3 (max 3), extended differently.
    let b = Item { node: a.bottom(3, 3), max: 3 };
    let leaves: Vec<Item> = (4..8).map(|p| Item { node: a.output(p, b.node, b.max), max: 3 }).collect();
    // (a) and (b): union of non-union nodes.
    let u01 = a.union(leaves[0], leaves[1]);
    let u23 = a.union(leaves[2], leaves[3]);
    assert_eq!(u01.node.kind(), NodeKind::Union);
    // (c)/(d): both union nodes.
    let all = a.union(u01, u23);
    assert!(all.node.is_safe());
    let got = enumerate(&a, all, 9, i64::MIN);
    let want: BTreeSet<_> = (4..8).map(|p| (3, vec![p])).collect();
    assert_eq!(got, want);
}

#[test]
fn union_lists_merge_in_decreasing_max_and_respect_the_window() {
    let mut a = Arena::new();
    let bottoms: Vec<Item> = (0..5).map(|i| Item { node: a.bottom(i, i as i64), max: i as i64 }).collect();
    // A list headed by the newest start, then older ones in strictly decreasing max.
    let head = Item { node: a.output(10, bottoms[4].node, 4), max: 4 };
    let mut ul = vec![head];
    for b in bottoms[..4].iter().rev() {
        let n = Item { node: a.output(10, b.node, b.max), max: b.max };
        a.ulist_insert(&mut ul, n);
    }
    assert_eq!(ul.iter().map(|i| i.max).collect::<Vec<_>>(), vec![4, 3, 2, 1, 0]);
    // Inserting a node with an existing max unions it in place.
    let extra = Item { node: a.output(11, bottoms[2].node, 2), max: 2 };
    a.ulist_insert(&mut ul, extra);
    assert_eq!(ul.len(), 5);
    let merged = a.ulist_merge(&ul);
    let all = enumerate(&a, merged, 12, i64::MIN);
    assert_eq!(all.len(), 6);
    // τ = 2: only starts 2, 3, 4 are in the window.
    let windowed = enumerate(&a, merged, 12, 2);
    assert_eq!(windowed.iter().map(|c| c.0).collect::<BTreeSet<_>>(), [2, 3, 4].into_iter().collect());
    assert_eq!(windowed.len(), 4);
    // prune drops the expired tail, and the whole list once the head expires.
    let mut p = ul.clone();
    assert!(prune(&mut p, 2));
    assert_eq!(p.iter().map(|i| i.max).collect::<Vec<_>>(), vec![4, 3, 2]);
    assert!(!prune(&mut p, 5));
}

#[test]
fn expired_chunks_are_freed_and_live_ones_kept() {
    let mut a = Arena::new();
    let mut last = None;
    for w in 0..20_000i64 {
        a.set_coordinate(w);
        last = Some(a.bottom(w as u64, w));
        a.expire(w - 100);
    }
    assert!(a.live_nodes() <= 2 * crate::tecs::CHUNK_NODES as u64);
    assert_eq!(a.get(last.unwrap()).a, 19_999);
}

#[test]
fn a_begin_node_is_a_bottom_with_its_own_position_marked() {
    let mut a = Arena::new();
    let begin = Item { node: a.begin(5, 5), max: 5 };
    assert_eq!(begin.node.kind(), NodeKind::Begin);
    assert!(begin.node.is_safe());
    let two = Item { node: a.output(8, begin.node, 5), max: 5 };
    let fused = enumerate(&a, two, 9, i64::MIN);
    // The same complex event as extend(extend(new-bottom(5), 5), 8).
    let b = a.bottom(5, 5);
    let first = a.output(5, b, 5);
    let unfused = Item { node: a.output(8, first, 5), max: 5 };
    assert_eq!(fused, enumerate(&a, unfused, 9, i64::MIN));
    assert_eq!(fused, [(5, vec![5, 8])].into_iter().collect());
    // Begin nodes union like any other non-union node.
    let b2 = a.bottom(5, 5);
    let other = Item { node: a.output(7, b2, 5), max: 5 };
    let both = a.union(begin, other);
    assert_eq!(enumerate(&a, both, 9, i64::MIN), [(5, vec![5]), (5, vec![7])].into_iter().collect());
}

#[test]
fn a_union_whose_right_child_was_reclaimed_skips_it() {
    let mut a = Arena::new();
    // An old start in the first chunk, then enough nodes to seal that chunk.
    a.set_coordinate(0);
    let old = Item { node: a.begin(0, 0), max: 0 };
    for w in 1..=crate::tecs::CHUNK_NODES as i64 {
        a.set_coordinate(w);
        a.bottom(w as u64, w);
    }
    let w = 10 * crate::tecs::CHUNK_NODES as i64;
    a.set_coordinate(w);
    let new = Item { node: a.begin(w as u64, w), max: w };
    let ul = vec![new, old];
    let merged = a.ulist_merge(&ul);
    // τ above every node of the first chunk: it is freed, and the union's right
    // child (the old start) with it.
    a.expire(w - 1);
    assert_eq!(a.live_max(old.node), i64::MIN);
    assert_eq!(a.live_max(new.node), w);
    assert_eq!(enumerate(&a, merged, w as u64 + 1, w - 1), [(w as u64, vec![w as u64])].into_iter().collect());
    // Two union nodes with reclaimed right children still union (gadgets c, d).
    let b = a.bottom(w as u64, w);
    let second = Item { node: a.output(w as u64 + 1, b, w), max: w };
    let m2 = a.ulist_merge(&[second, old]);
    let both = a.union(merged, m2);
    assert!(both.node.is_safe());
    let want = [(w as u64, vec![w as u64]), (w as u64, vec![w as u64 + 1])].into_iter().collect();
    assert_eq!(enumerate(&a, both, w as u64 + 2, w - 1), want);
}

#[test]
fn restored_nodes_must_form_a_dag_over_issued_positions() {
    let mut a = Arena::new();
    let b = a.bottom(3, 3);
    let o = a.output(4, b, 3);
    let o5 = a.output(5, b, 3);
    let u = a.union(Item { node: o, max: 3 }, Item { node: o5, max: 3 }).node;
    let below = |limit: u64| move |w: u64| w < limit;
    assert!(a.well_formed([u, o, b], below(6)));
    assert!(!a.well_formed([u], below(5)), "position 5 was not issued");
    // A reference to a node not allocated yet, and a node whose child is itself.
    let ahead = crate::tecs::NodeRef::new(a.ids().end, NodeKind::Output, 0, 0);
    assert!(!a.well_formed([ahead], below(6)));
    let own = a.output(6, b, 3);
    let looped = a.output(7, own, 3);
    let mut nodes = a.export().1;
    let at = (looped.id() - a.ids().start) as usize;
    nodes[at].b = looped.0;
    let forged = Arena::import(a.ids().start, &nodes, 0);
    assert!(!forged.well_formed([looped], below(8)), "a cycle is refused, not followed");
}
