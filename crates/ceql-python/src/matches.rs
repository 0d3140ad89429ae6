//! The `ceql.Match` class: one complex event.

use ceql_engine::MatchBuffer;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A complex event: interval `[start, end]` in input positions and the positions of
/// its events. `events` fetches their data from the input it came from.
#[pyclass(frozen, module = "ceql", name = "Match")]
pub struct Match {
    start: u64,
    end: u64,
    positions: Vec<u64>,
    source: Option<Py<PyAny>>,
}

#[pymethods]
impl Match {
    #[new]
    #[pyo3(signature = (start, end, positions, source=None))]
    fn new(start: u64, end: u64, positions: Vec<u64>, source: Option<Py<PyAny>>) -> Self {
        Match { start, end, positions, source }
    }

    /// First position of the interval.
    #[getter]
    fn start(&self) -> u64 {
        self.start
    }

    /// Last position of the interval (the event at which the match was reported).
    #[getter]
    fn end(&self) -> u64 {
        self.end
    }

    /// Positions of the events of the complex event, ascending.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.positions)
    }

    /// The data of those events, in position order.
    #[getter]
    fn events(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.source {
            Some(src) => Ok(src.bind(py).call_method1("events_at", (self.positions.clone(),))?.unbind()),
            None => Err(pyo3::exceptions::PyValueError::new_err("this match has no event source")),
        }
    }

    fn __repr__(&self) -> String {
        let ps: Vec<String> = self.positions.iter().map(u64::to_string).collect();
        let tail = if ps.len() == 1 { "," } else { "" };
        format!("Match(start={}, end={}, positions=({}{tail}))", self.start, self.end, ps.join(", "))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<Match>() {
            Ok(o) => {
                let o = o.get();
                (self.start, self.end, &self.positions) == (o.start, o.end, &o.positions)
            }
            Err(_) => false,
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.start, self.end, &self.positions).hash(&mut h);
        h.finish()
    }

    fn __len__(&self) -> usize {
        self.positions.len()
    }
}

/// Converts a buffer of complex events into `Match` objects tied to `source`.
pub fn to_matches(py: Python<'_>, buf: &MatchBuffer, source: Option<&Py<PyAny>>) -> Vec<Match> {
    buf.iter()
        .map(|m| Match {
            start: m.start,
            end: m.end,
            positions: m.positions.to_vec(),
            source: source.map(|s| s.clone_ref(py)),
        })
        .collect()
}
