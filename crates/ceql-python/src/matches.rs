//! The `ceql.Match` class: one complex event.
//!
//! The complex events of one call share a single columnar buffer; a `Match` is a
//! reference to that buffer plus an index, so creating millions of them costs one
//! small object each and no copy of their positions.

use ceql_engine::{MatchBuffer, Value};
use pyo3::exceptions::{PyKeyError, PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::Arc;

/// The output of one call: complex events and where their data comes from.
struct Shared {
    buf: MatchBuffer,
    source: Option<Py<PyAny>>,
    /// Per match: the deadline of a trailing absence (nanoseconds), if it ended by one.
    deadlines: Option<Vec<i64>>,
    /// With captures on: the variable names of each capture label.
    names: Option<Arc<Vec<Vec<String>>>>,
    /// The names of the query's measures (docs/language.md#s3-5a), in order.
    measure_names: Arc<Vec<String>>,
}

/// A complex event: interval `[start, end]` in input positions and the positions of
/// its events. `events` fetches their data from the input it came from.
#[pyclass(frozen, module = "ceql", name = "Match")]
pub struct Match {
    shared: Arc<Shared>,
    index: usize,
}

impl Match {
    fn get(&self) -> ceql_engine::MatchRef<'_> {
        self.shared.buf.get(self.index)
    }

    /// The label names, or the error of a match without captures.
    fn names(&self) -> PyResult<&[Vec<String>]> {
        self.shared.names.as_deref().map(Vec::as_slice).ok_or_else(|| {
            PyValueError::new_err("this match has no captures: run the query with captures=True to get them")
        })
    }

    /// (variable, its positions), variables in order of their first position.
    fn capture_pairs(&self) -> PyResult<Vec<(&str, Vec<u64>)>> {
        let names = self.names()?;
        let m = self.get();
        let mut pairs: Vec<(&str, Vec<u64>)> = Vec::new();
        for (&p, &l) in m.positions.iter().zip(m.labels) {
            // A label the query does not have can only come from a damaged snapshot
            // that passed its checks: an error, not a panic.
            let vars = names.get(l as usize).ok_or_else(|| {
                PyValueError::new_err(format!("the match's capture label {l} is not one of the query's"))
            })?;
            for name in vars {
                match pairs.iter_mut().find(|(n, _)| n == name) {
                    Some((_, ps)) => ps.push(p),
                    None => pairs.push((name, vec![p])),
                }
            }
        }
        Ok(pairs)
    }
}

#[pymethods]
impl Match {
    #[new]
    #[pyo3(signature = (start, end, positions, source=None))]
    fn new(start: u64, end: u64, positions: Vec<u64>, source: Option<Py<PyAny>>) -> Self {
        let mut buf = MatchBuffer::new();
        buf.push(start, end, &positions);
        let shared = Shared { buf, source, deadlines: None, names: None, measure_names: Arc::default() };
        Match { shared: Arc::new(shared), index: 0 }
    }

    /// First position of the interval.
    #[getter]
    fn start(&self) -> u64 {
        self.get().start
    }

    /// For a query ending with `ABSENT(...) FOR d`: the deadline that ended the match
    /// (the time stamp of its last event plus `d`, nanoseconds since the epoch, as the
    /// window's time stamps); `None` for other queries.
    #[getter]
    fn deadline(&self) -> Option<i64> {
        self.shared.deadlines.as_ref().and_then(|d| d.get(self.index).copied())
    }

    /// Last position of the interval (the event at which the match was reported).
    #[getter]
    fn end(&self) -> u64 {
        self.get().end
    }

    /// Positions of the events of the complex event, ascending.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.get().positions)
    }

    /// The data of those events, in position order.
    #[getter]
    fn events(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match &self.shared.source {
            Some(src) => {
                Ok(src.bind(py).call_method1("events_at", (PyList::new(py, self.get().positions)?,))?.unbind())
            }
            None => Err(pyo3::exceptions::PyValueError::new_err("this match has no event source")),
        }
    }

    /// With captures on (`captures=True`): which positions each variable
    /// captured, `{variable: (positions, ascending)}`, variables in order of their
    /// first position. Variables written `T`, `S>T` or `AS x` in the query, after
    /// projection; a variable that captured nothing is absent. A `ValueError`
    /// without captures.
    #[getter]
    fn captures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, ps) in self.capture_pairs()? {
            d.set_item(name, PyTuple::new(py, ps)?)?;
        }
        Ok(d)
    }

    /// The measures of the `SELECT` list (docs/language.md#s3-5a), `{name: value}` in
    /// its order: `None` for NULL, `int`, `float`, `str` or `bool`; a time stamp is
    /// its `int` nanoseconds since the epoch. Empty for a query without measures.
    #[getter]
    fn measures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, v) in self.shared.measure_names.iter().zip(self.get().measures) {
            d.set_item(name, value_to_py(py, v)?)?;
        }
        Ok(d)
    }

    /// With captures on: for each position (parallel to `positions`), the names
    /// of the variables that captured it. A `ValueError` without captures.
    #[getter]
    fn variables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let names = self.names()?;
        let items: Vec<Bound<'py, PyTuple>> =
            self.get().labels.iter().map(|&l| PyTuple::new(py, &names[l as usize])).collect::<PyResult<_>>()?;
        PyTuple::new(py, items)
    }

    /// With captures on: the data of the events variable `name` captured, in
    /// position order (empty if it captured none in this match). A `KeyError` for
    /// a name that is not a variable the output reports.
    fn events_of(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let names = self.names()?;
        if !names.iter().flatten().any(|n| n == name) {
            return Err(PyKeyError::new_err(format!("`{name}` is not a variable of this query's output")));
        }
        let positions = self.capture_pairs()?.into_iter().find(|(n, _)| *n == name).map_or_else(Vec::new, |(_, p)| p);
        match &self.shared.source {
            Some(src) => Ok(src.bind(py).call_method1("events_at", (PyList::new(py, positions)?,))?.unbind()),
            None => Err(PyValueError::new_err("this match has no event source")),
        }
    }

    /// `Match(start=.., end=.., positions=(..))`, with the `captures` and
    /// `measures` dicts as Python prints them (their own `repr`).
    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.borrow();
        let m = this.get();
        let ps: Vec<String> = m.positions.iter().map(u64::to_string).collect();
        let tail = if ps.len() == 1 { "," } else { "" };
        let mut text = format!("Match(start={}, end={}, positions=({}{tail})", m.start, m.end, ps.join(", "));
        if this.capture_pairs().is_ok() {
            text.push_str(&format!(", captures={}", slf.getattr("captures")?.repr()?));
        }
        if !this.shared.measure_names.is_empty() {
            text.push_str(&format!(", measures={}", slf.getattr("measures")?.repr()?));
        }
        text.push(')');
        Ok(text)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        match other.cast::<Match>() {
            Ok(o) => self.get() == o.get().get(),
            Err(_) => false,
        }
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let m = self.get();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (m.start, m.end, m.positions, m.labels).hash(&mut h);
        h.finish()
    }

    fn __len__(&self) -> usize {
        self.get().positions.len()
    }
}

/// Builds the Python list of `Match` objects for the complex events in `buf`
/// (which is taken, leaving an empty buffer behind).
/// `names`: the variable names of each capture label, with captures on;
/// `measure_names`: the query's measures.
pub fn to_match_list<'py>(
    py: Python<'py>,
    buf: &mut MatchBuffer,
    source: Option<&Py<PyAny>>,
    deadlines: Option<Vec<i64>>,
    names: Option<&Arc<Vec<Vec<String>>>>,
    measure_names: &Arc<Vec<String>>,
) -> PyResult<Bound<'py, PyList>> {
    let n = buf.len();
    let shared = Arc::new(Shared {
        buf: std::mem::take(buf),
        source: source.map(|s| s.clone_ref(py)),
        deadlines,
        names: names.cloned(),
        measure_names: measure_names.clone(),
    });
    // The list is made at its size and filled in place: millions of matches under
    // a memory limit must give a MemoryError, and `PyList::new` panics when the
    // list cannot be allocated, as a collected `Vec` aborts the process.
    let len = pyo3::ffi::Py_ssize_t::try_from(n).map_err(|_| PyMemoryError::new_err("too many matches for a list"))?;
    // SAFETY: PyList_New returns a new reference or NULL with an exception set.
    let list = unsafe { pyo3::ffi::PyList_New(len) };
    if list.is_null() {
        return Err(PyErr::take(py).unwrap_or_else(|| PyMemoryError::new_err("cannot allocate the list of matches")));
    }
    // SAFETY: `list` is a new, non-NULL reference to a list.
    let list = unsafe { Bound::from_owned_ptr(py, list).cast_into_unchecked::<PyList>() };
    for index in 0..n {
        let m = Bound::new(py, Match { shared: shared.clone(), index })?;
        // SAFETY: index < len; PyList_SetItem steals the reference (also on error).
        // If a later item fails, the list is dropped with NULL slots, which it allows.
        if unsafe { pyo3::ffi::PyList_SetItem(list.as_ptr(), index as pyo3::ffi::Py_ssize_t, m.into_ptr()) } != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    Ok(list)
}

/// A measure's value in Python: `None`, `bool`, `int`, `float`, `str`; a time stamp
/// as its `int` nanoseconds.
fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) | Value::Timestamp(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => pyo3::types::PyString::new(py, s).into_any(),
    })
}
