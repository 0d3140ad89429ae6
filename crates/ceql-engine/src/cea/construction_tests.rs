//! The CEA construction of docs/language.md#s5-4: invariants C1–C3, trimming, projection
//! and comparison marks, predicate interning per type.

use crate::{CompileOptions, CompiledQuery};

fn q(text: &str) -> CompiledQuery {
    CompiledQuery::compile(text, None, CompileOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn check_invariants(c: &CompiledQuery) {
    let cea = &c.cea;
    for (p, trs) in cea.out.iter().enumerate() {
        for t in trs {
            assert_ne!(t.target, 0, "C1: no transition enters q0");
            assert!(t.target < cea.num_states as u32);
        }
        if cea.finals[p] {
            assert!(trs.is_empty(), "C3: final states have no outgoing transitions");
        }
    }
    assert!(!cea.finals[0], "C2: q0 is not final");
}

#[test]
fn sequence_of_three_has_four_states_and_two_skip_loops() {
    let c = q("SELECT * FROM S WHERE A ; B ; C");
    check_invariants(&c);
    assert_eq!(c.cea.num_states, 4);
    let loops =
        c.cea.out.iter().enumerate().flat_map(|(p, t)| t.iter().filter(move |t| t.target as usize == p)).count();
    assert_eq!(loops, 2);
}

#[test]
fn every_formula_shape_satisfies_the_invariants() {
    for f in [
        "A+",
        "A:+",
        "(A ; B)+",
        "A ; B:+ ; C",
        "A : NOT(B):+ : C",
        "NOT(B) ; C",
        "(A OR B) AS x ; C FILTER x[v > 1]",
        "A FILTER A[v > 1] OR A[v < -1]",
        "((A ; B)+ OR C:+) ; (A : B)+",
    ] {
        check_invariants(&q(&format!("SELECT * FROM S WHERE {f}")));
    }
}

#[test]
fn projection_marks_only_selected_variables() {
    let c = q("SELECT x FROM S WHERE A ; B AS x");
    let marked: Vec<bool> = c.cea.out.iter().flatten().filter(|t| !t.vars.is_empty()).map(|t| t.marked).collect();
    assert_eq!(marked.iter().filter(|m| **m).count(), 1);
    let none = q("SELECT NONE FROM S WHERE A ; B");
    assert!(none.cea.out.iter().flatten().all(|t| !t.marked));
    // Comparison marks: binding transitions and transitions leaving q0.
    assert!(none.cea.out[0].iter().all(|t| t.compared));
}

#[test]
fn equal_predicates_share_one_bit_per_type() {
    let c = q("SELECT * FROM S WHERE A AS x ; A AS y FILTER x[v > 1] AND y[v > 1] AND y[s = 'a']");
    let a = c.plan.schema.types_named("A")[0] as usize;
    assert_eq!(c.preds[a].len(), 2);
}

#[test]
fn unsatisfiable_parts_are_trimmed() {
    // C can never be reached after a final state; trimming leaves q0 and the A path.
    let c = q("SELECT * FROM S WHERE A");
    assert_eq!(c.cea.num_states, 2);
}

#[test]
fn absence_puts_a_negated_guard_on_the_skip_loop_of_its_gap() {
    // A ; ABSENT(B) ; C: the same states as A ; C, with the loop on C's initial state
    // guarded by ¬B instead of TRUE.
    let with = q("SELECT * FROM S WHERE A ; ABSENT(B) ; C");
    let without = q("SELECT * FROM S WHERE A ; C");
    check_invariants(&with);
    assert_eq!(with.cea.num_states, without.cea.num_states);
    assert_eq!(with.cea.num_transitions(), without.cea.num_transitions());
    let loops: Vec<_> =
        with.cea.out.iter().enumerate().flat_map(|(p, t)| t.iter().filter(move |t| t.target as usize == p)).collect();
    assert_eq!(loops.len(), 1);
    let guard = &with.cea.guards[loops[0].guard as usize];
    assert!(guard.negated);
    assert_eq!(guard.terms.len(), 1);
    assert_eq!(guard.terms[0].ty, with.plan.schema.types_named("B")[0]);
    assert!(loops[0].vars.is_empty() && !loops[0].marked);
}

#[test]
fn absences_in_one_gap_join_their_terms_and_filters_get_bits() {
    let c = q("SELECT * FROM S WHERE A ; ABSENT(B FILTER B[v > 1] OR B[v < -1]) ; ABSENT(C) ; A");
    check_invariants(&c);
    let negated: Vec<_> = c.cea.guards.iter().filter(|g| g.negated).collect();
    assert_eq!(negated.len(), 1);
    // two terms for the OR filter on B, one for C
    assert_eq!(negated[0].terms.len(), 3);
    let b = c.plan.schema.types_named("B")[0] as usize;
    assert_eq!(c.preds[b].len(), 2);
}

#[test]
fn nested_absences_satisfy_the_invariants() {
    for f in [
        "(A ; ABSENT(B) ; C)+",
        "(A ; ABSENT(B) ; C) OR D",
        "(A ; ABSENT(B) ; C) AS x ; D FILTER x[v > 1]",
        "A ; ABSENT(B) ; (C ; ABSENT(A) ; D)+ ; ABSENT(C) ; A",
        "(A ; ABSENT(B)) ; C",
    ] {
        check_invariants(&q(&format!("SELECT * FROM S WHERE {f}")));
    }
}

#[test]
fn conjunction_of_two_events_is_the_four_state_product() {
    // q0, A seen, B seen, both (docs/language.md#s5-4, product): A then B, or B then A,
    // with a TRUE loop on each half-way state, and no transition marking both at once.
    let c = q("SELECT * FROM S WHERE A AND B");
    check_invariants(&c);
    assert_eq!(c.cea.num_states, 4);
    assert_eq!(c.cea.num_transitions(), 6);
    let var = |t: &str| c.plan.variables.find(&crate::analyze::VarKind::Type(t.into())).unwrap();
    let (a, b) = (var("A"), var("B"));
    assert!(c.cea.out.iter().flatten().all(|t| !(t.vars.contains(a) && t.vars.contains(b))), "one event, one side");
}

#[test]
fn conjunction_of_n_events_has_2_to_the_n_states() {
    for (n, f) in [(3, "A AND B AND C"), (4, "A AND B AND C AND D"), (5, "A AND B AND C AND D AND E")] {
        let c = q(&format!("SELECT * FROM S WHERE {f}"));
        check_invariants(&c);
        assert_eq!(c.cea.num_states, 1 << n, "{f}");
    }
}

#[test]
fn conjunction_shapes_satisfy_the_invariants() {
    for f in [
        "(A AND B)+",
        "(A AND B):+",
        "A : (B AND C)",
        "(A AND B) : C",
        "(A ; B) AND (C ; D) AND E",
        "(A ; ABSENT(B) ; C) AND B",
        "NOT(B) AND C",
        "(A AND B+) ; C",
        "(A AS x AND A AS y) FILTER x[v > 1]",
        "(A OR B) AND (A FILTER A[v > 1] OR A[v < 0])",
    ] {
        check_invariants(&q(&format!("SELECT * FROM S WHERE {f}")));
    }
}

#[test]
fn a_term_and_a_not_of_its_type_conjoin_with_a_negative_literal() {
    // NOT(B FILTER B[v > 5]) AND B FILTER B[v > 1]: one B event may be both the non-(B[v>5])
    // of the left side and the B[v > 1] of the right one: B[v > 1 ∧ ¬(v > 5)].
    let c = q("SELECT * FROM S WHERE NOT(B FILTER B[v > 5]) AND B FILTER B[v > 1]");
    check_invariants(&c);
    let neg = c.cea.guards.iter().flat_map(|g| &g.terms).filter(|t| t.bits.iter().any(|&l| l & super::NEGATED != 0));
    assert!(neg.count() > 0, "{:?}", c.cea.guards);
}

/// docs/language.md#s3-4c: the iteration marker of a `+` whose body has a filter between
/// events binds exactly the transitions that start an iteration (from `q0` and from the
/// state after an iteration), never one inside the body; other queries have none.
#[test]
fn iteration_markers_bind_the_first_event_of_each_iteration() {
    use crate::analyze::VarKind;
    let c = q("SELECT * FROM S WHERE ((A AS a ; B AS b) FILTER b[v > a.v])+");
    check_invariants(&c);
    let vars = &c.plan.variables;
    let marker = (0..vars.len()).find(|&v| matches!(vars.kind(v), VarKind::Iteration(_))).expect("a marker");
    assert!(!vars.is_reported(marker));
    let a = vars.find(&VarKind::Alias("a".into())).unwrap();
    for t in c.cea.out.iter().flatten() {
        // Every A starts an iteration; no B does.
        assert_eq!(t.vars.contains(marker), t.vars.contains(a), "{t:?}");
    }
    for text in [
        "SELECT * FROM S WHERE (A AS a ; B AS b)+ FILTER b[v > a.v]",
        "SELECT * FROM S WHERE (A AS a ; B AS b FILTER b[v > 1])+",
    ] {
        let c = q(text);
        let vars = &c.plan.variables;
        assert!((0..vars.len()).all(|v| !matches!(vars.kind(v), VarKind::Iteration(_))), "{text}");
    }
}
