//! `ceql._ceql.NativeQuery`: a compiled query.

use crate::errors::{compile_error, internal_error, panic_message};
use ceql_engine::analyze::WindowPlan;
use ceql_engine::{CompileOptions, CompiledQuery};
use ceql_syntax::ast::ConsumePolicy;
use pyo3::prelude::*;
use pyo3::types::PyDict;
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
                let loc = d.location(&self.inner.text);
                (
                    d.code.to_string(),
                    d.render(&self.inner.text, "query"),
                    loc.line,
                    loc.column,
                    loc.end_column,
                    d.message.clone(),
                )
            })
            .collect()
    }

    /// Facts about the compiled automaton and clauses.
    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let q = &self.inner;
        let d = PyDict::new(py);
        d.set_item("states", q.cea.num_states)?;
        d.set_item("transitions", q.cea.num_transitions())?;
        d.set_item("predicates", q.preds.iter().map(Vec::len).sum::<usize>())?;
        d.set_item("attributes", q.attributes.clone())?;
        d.set_item("strategy", q.plan.strategy.keyword())?;
        let (kind, n, attr) = match &q.plan.window {
            WindowPlan::Unbounded => ("unbounded", 0, None),
            WindowPlan::Events(n) => ("events", *n, None),
            WindowPlan::Duration(ns) => ("duration", *ns, None),
            WindowPlan::Attribute { n, attr } => ("attribute", *n, Some(attr.clone())),
        };
        d.set_item("window", kind)?;
        d.set_item("window_n", n)?;
        d.set_item("window_attr", attr)?;
        d.set_item("partition_by", q.plan.partition_by.clone())?;
        d.set_item(
            "consume",
            match q.plan.consume {
                ConsumePolicy::None => "NONE",
                ConsumePolicy::Any => "ANY",
                ConsumePolicy::Partition => "PARTITION",
            },
        )?;
        d.set_item("limit", q.plan.limit)?;
        d.set_item("time_based", q.plan.window.is_time_based())?;
        d.set_item("partitioned", q.is_partitioned())?;
        d.set_item("event_types", q.plan.schema.type_names())?;
        d.set_item("declared", q.plan.schema.declared)?;
        d.set_item("fingerprint", q.fingerprint)?;
        Ok(d)
    }

    /// The query text.
    #[getter]
    fn text(&self) -> &str {
        &self.inner.text
    }
}
