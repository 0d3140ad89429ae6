//! `ceql._ceql.NativeQuery`: a compiled query.

use crate::errors::{compile_error, internal_error, panic_message};
use ceql_engine::{CompileOptions, CompiledQuery, WindowPlan};
use ceql_syntax::ast::ConsumePolicy;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// A compiled CEQL query (immutable, shareable between evaluations).
#[pyclass(frozen, module = "ceql._ceql")]
pub struct NativeQuery {
    pub inner: Arc<CompiledQuery>,
}

#[pymethods]
impl NativeQuery {
    /// Compiles `text`. The GIL is released while the engine compiles, so other
    /// Python threads run during a long compile.
    #[new]
    #[pyo3(signature = (text, schema=None, compat_ignore_strategy=false))]
    fn new(py: Python<'_>, text: &str, schema: Option<&str>, compat_ignore_strategy: bool) -> PyResult<Self> {
        let options = CompileOptions { compat_ignore_strategy };
        let compiled = py.detach(|| catch_unwind(AssertUnwindSafe(|| CompiledQuery::compile(text, schema, options))));
        match compiled {
            Ok(Ok(q)) => Ok(NativeQuery { inner: Arc::new(q) }),
            Ok(Err(e)) => Err(compile_error(py, &e)),
            Err(payload) => Err(internal_error(py, &panic_message(payload.as_ref()))),
        }
    }

    /// Warnings as (code, rendered, line, column, end_column, message).
    fn warnings(&self) -> Vec<(String, String, usize, usize, usize, String)> {
        self.inner
            .warnings()
            .iter()
            .map(|d| {
                let loc = d.location(self.inner.text());
                (
                    d.code.to_string(),
                    d.render(self.inner.text(), "query"),
                    loc.line,
                    loc.column,
                    loc.end_column,
                    d.message.clone(),
                )
            })
            .collect()
    }

    /// Facts about the compiled automaton and clauses ([`ceql_engine::QueryFacts`]).
    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let f = self.inner.facts();
        let d = PyDict::new(py);
        d.set_item("states", f.states)?;
        d.set_item("transitions", f.transitions)?;
        d.set_item("predicates", f.predicates)?;
        d.set_item("attributes", f.attributes)?;
        d.set_item("strategy", f.strategy.keyword())?;
        let (kind, n, attr) = match f.window {
            WindowPlan::Unbounded => ("unbounded", 0, None),
            WindowPlan::Events(n) => ("events", n, None),
            WindowPlan::Duration(ns) => ("duration", ns, None),
            WindowPlan::Attribute { n, attr } => ("attribute", n, Some(attr)),
        };
        d.set_item("window", kind)?;
        d.set_item("window_n", n)?;
        d.set_item("window_attr", attr)?;
        d.set_item("partition_by", f.partition_by)?;
        d.set_item("declared_keys", f.declared_keys)?;
        d.set_item(
            "consume",
            match f.consume {
                ConsumePolicy::None => "NONE",
                ConsumePolicy::Any => "ANY",
                ConsumePolicy::Partition => "PARTITION",
            },
        )?;
        d.set_item("limit", f.limit)?;
        d.set_item("time_based", f.time_based)?;
        d.set_item("trailing_absence", f.trailing_absence)?;
        d.set_item("partitioned", f.partitioned)?;
        d.set_item("key_independent", f.key_independent)?;
        d.set_item("routed_by", f.routed_by)?;
        d.set_item("event_types", f.event_types)?;
        d.set_item("relevant_types", f.relevant_types)?;
        d.set_item("declared", f.declared)?;
        d.set_item("string_attributes", self.inner.string_attributes())?;
        d.set_item("time_attributes", self.inner.time_attributes())?;
        d.set_item("fingerprint", f.fingerprint)?;
        Ok(d)
    }

    /// What the compiler made of the query, as text (`CompiledQuery::explain`).
    fn explain(&self) -> String {
        self.inner.explain()
    }

    /// The automaton in Graphviz DOT (`CompiledQuery::to_dot`).
    fn to_dot(&self) -> String {
        self.inner.to_dot()
    }

    /// The formula after filter push-down (`CompiledQuery::normalized_formula`).
    fn normalized_formula(&self) -> String {
        self.inner.normalized_formula()
    }

    /// The automaton as `(states, transitions)`, lists of dicts (see `explain.rs`).
    fn automaton<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        crate::explain::automaton(py, &self.inner)
    }

    /// The names of the measures of the `SELECT` list, in order (docs/language.md#s3-5a).
    fn measure_names(&self) -> Vec<String> {
        self.inner.measure_names()
    }

    /// The query text.
    #[getter]
    fn text(&self) -> &str {
        self.inner.text()
    }
}
