//! Conversions for explain and pictures: the automaton of a query as Python lists of
//! dicts. The methods (`NativeQuery.explain`, `to_dot`, `normalized_formula`,
//! `automaton`; `NativeRuntime.explain_cache`, `det_states_dot`) are one-liners in the
//! classes' `#[pymethods]` blocks, which PyO3 wants in one place per class; the
//! engine's `explain` module writes the texts.

use ceql_engine::CompiledQuery;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// `(states, transitions)`: lists of dicts with the fields of
/// [`ceql_engine::StateView`] and [`ceql_engine::TransitionView`] (`final` for
/// `accepting`, plus each transition's `label`).
pub fn automaton<'py>(py: Python<'py>, q: &CompiledQuery) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    let view = q.automaton_view();
    let states = PyList::empty(py);
    for s in &view.states {
        let d = PyDict::new(py);
        d.set_item("id", s.id)?;
        d.set_item("initial", s.initial)?;
        d.set_item("final", s.accepting)?;
        d.set_item("origin", &s.origin)?;
        states.append(d)?;
    }
    let transitions = PyList::empty(py);
    for t in &view.transitions {
        let d = PyDict::new(py);
        d.set_item("source", t.source)?;
        d.set_item("target", t.target)?;
        d.set_item("reads", &t.reads)?;
        d.set_item("variables", &t.variables)?;
        d.set_item("captures", t.captures)?;
        d.set_item("output", t.output)?;
        d.set_item("label", t.label())?;
        transitions.append(d)?;
    }
    Ok((states, transitions))
}
