//! `ceql._ceql.NativeRuntime`: one evaluation over an unbounded input.

use crate::arrow::stream_of;
use crate::arrow_out::ArrowBatch;
use crate::convert::to_value;
use crate::errors::{event_error, guarded, internal_error};
use crate::matches::to_match_list;
use crate::query::NativeQuery;
use arrow_array::{RecordBatch, RecordBatchReader};
use ceql_engine::{EventError, Fate, LatePolicy, MatchBuffer, Position, Runtime, RuntimeOptions, Value, ValueRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use std::sync::Arc;

/// A stateful evaluator.
#[pyclass(module = "ceql._ceql")]
pub struct NativeRuntime {
    rt: Runtime,
    out: MatchBuffer,
    /// The output of `push_arrow_columnar` with 32-bit positions.
    out32: MatchBuffer<u32>,
    values: Vec<Value>,
    /// Set when a panic left the runtime in an unknown state.
    poisoned: bool,
    /// With captures on: the variable names of each capture label.
    names: Option<Arc<Vec<Vec<String>>>>,
    /// The names of the query's measures (docs/language.md#s3-5a).
    measure_names: Arc<Vec<String>>,
    /// The measure columns of `push_arrow_delayed`, typed from the first Arrow data it
    /// read, so that every batch of one stream has the same schema.
    delayed_fields: Option<Vec<arrow_schema::Field>>,
    /// The measure columns of the last Arrow output (either path), for the matches of a
    /// trailing absence handed over by `take_fired_arrow`: the same types.
    last_fields: Option<Vec<arrow_schema::Field>>,
}

impl NativeRuntime {
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        if self.poisoned {
            return Err(internal_error(py, "this stream failed earlier with an internal error and cannot continue"));
        }
        Ok(())
    }

    /// Refuses to go on after an interrupted event (its state is half updated): the
    /// pushes are refused by the engine, this refuses the rest (flush, deadlines,
    /// snapshot). The matches of earlier events stay readable.
    fn usable(&self) -> PyResult<()> {
        if self.rt.interrupted() {
            return Err(PyValueError::new_err(crate::errors::INTERRUPTED));
        }
        Ok(())
    }

    /// Runs `f`; a panic poisons the runtime.
    fn run<T>(&mut self, py: Python<'_>, f: impl FnOnce(&mut Self) -> PyResult<T>) -> PyResult<T> {
        self.check(py)?;
        let mut poisoned = true;
        let r = guarded(py, || {
            let r = f(self);
            poisoned = false;
            r
        });
        self.poisoned |= poisoned;
        r
    }

    /// The complex events of `out` as `Match` objects (emptying it), with the deadline of
    /// each when the query ends with a trailing absence (every match then ended by one).
    fn matches<'py>(&mut self, py: Python<'py>, source: Option<&Py<PyAny>>) -> PyResult<Bound<'py, PyList>> {
        let deadlines = self.rt.take_emitted_deadlines();
        let deadlines = (self.rt.has_deadline() && deadlines.len() == self.out.len()).then_some(deadlines);
        to_match_list(py, &mut self.out, source, deadlines, self.names.as_ref(), &self.measure_names)
    }

    /// Pushes one mapping; with a reorder buffer, under `tag`.
    fn push_one(&mut self, py: Python<'_>, event: &Bound<'_, PyAny>, tag: u64) -> PyResult<()> {
        let position = self.rt.next_position();
        let err = |field: &str, msg: String| event_error(py, &EventError::new(position, field, None, msg));
        let get = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            if let Ok(d) = event.cast::<PyDict>() {
                d.get_item(key)
            } else {
                match event.get_item(key) {
                    Ok(v) => Ok(Some(v)),
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => Ok(None),
                    Err(e) => Err(e),
                }
            }
        };
        // Not subscriptable: not an event. Anything else a mapping raises (an
        // interrupt, its own failure) is re-raised as it is.
        let tf = self.rt.options().type_field.as_str();
        let ty_obj = get(tf).map_err(|e| {
            if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
                err(tf, format!("an event must be a mapping with a `{tf}` key"))
            } else {
                e
            }
        })?;
        let ty_obj = ty_obj.ok_or_else(|| {
            // A key that looks like the type (`event_type`): say how to read it.
            let like =
                (tf == ceql_engine::DEFAULT_TYPE_FIELD).then(|| event.cast::<PyDict>().ok()).flatten().and_then(|d| {
                    d.keys()
                        .iter()
                        .filter_map(|k| k.extract::<String>().ok())
                        .find(|k| ceql_engine::looks_like_type_field(k))
                });
            match like {
                Some(k) => err(
                    tf,
                    format!(
                        "the event has no `type` (it has `{k}`: give type_field='{k}', or rename that key to `type`)"
                    ),
                ),
                None if tf == ceql_engine::DEFAULT_TYPE_FIELD => err(tf, "the event has no `type`".into()),
                None => err(tf, format!("the event has no `{tf}` (the type field)")),
            }
        })?;
        let ty_str = ty_obj.cast::<PyString>().map_err(|_| err(tf, format!("`{tf}` must be a string")))?;
        let ty = ty_str.to_cow().map_err(|e| err(tf, format!("`{tf}` is not valid text: {e}")))?;
        let stream_obj = get("stream")?;
        let stream = match &stream_obj {
            Some(s) if !s.is_none() => {
                let s = s.cast::<PyString>().map_err(|_| err("stream", "`stream` must be a string".into()))?;
                Some(s.to_cow().map_err(|e| err("stream", format!("`stream` is not valid text: {e}")))?)
            }
            _ => None,
        };
        self.values.clear();
        let mut absent = Vec::new();
        for (i, name) in self.rt.attribute_names().iter().enumerate() {
            let value = if ceql_engine::is_reserved_field(name) { None } else { get(name)? };
            match value {
                None => {
                    absent.push(i);
                    self.values.push(Value::Null);
                }
                Some(v) => self.values.push(
                    to_value(&v)?
                        .map_err(|m| event_error(py, &EventError::new(position, name.clone(), Some(&ty), m)))?,
                ),
            }
        }
        let mut refs: Vec<ValueRef<'_>> = self.values.iter().map(Value::as_ref).collect();
        for i in absent {
            refs[i] = ValueRef::Absent;
        }
        self.rt.push_delayed(stream.as_deref(), &ty, &refs, tag, &mut self.out).map_err(|e| event_error(py, &e))
    }
}

#[pymethods]
impl NativeRuntime {
    #[new]
    #[pyo3(signature = (query, time_field=None, time_unit_nanos=1, late_drop=false, max_cache_bytes=None, max_det_states=None, max_state_bytes=None, max_delay=None, captures=false, type_field=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        query: &NativeQuery,
        time_field: Option<String>,
        time_unit_nanos: i64,
        late_drop: bool,
        max_cache_bytes: Option<usize>,
        max_det_states: Option<usize>,
        max_state_bytes: Option<usize>,
        max_delay: Option<u64>,
        captures: bool,
        type_field: Option<String>,
    ) -> PyResult<Self> {
        if captures && !query.inner.supports_captures() {
            return Err(PyValueError::new_err("this query has too many distinct variable sets to report captures"));
        }
        let mut options = RuntimeOptions {
            type_field: type_field.unwrap_or_else(|| ceql_engine::DEFAULT_TYPE_FIELD.to_string()),
            time_field,
            time_unit_nanos,
            late_time_stamps: if late_drop { LatePolicy::Drop } else { LatePolicy::Error },
            max_state_bytes,
            max_delay,
            captures,
            ..RuntimeOptions::default()
        };
        if let Some(b) = max_cache_bytes {
            options.cache.max_cache_bytes = b;
        }
        if let Some(s) = max_det_states {
            options.cache.max_det_states = s;
        }
        let mut rt = Runtime::new(query.inner.clone(), options);
        rt.check_reorder_options().map_err(PyValueError::new_err)?;
        rt.record_deadlines(rt.has_deadline());
        rt.set_interrupt_check(Some(crate::errors::signal_check()));
        Ok(NativeRuntime {
            names: captures.then(|| Arc::new(query.inner.capture_names())),
            measure_names: Arc::new(query.inner.measure_names()),
            delayed_fields: None,
            last_fields: None,
            rt,
            out: MatchBuffer::new(),
            out32: MatchBuffer::empty(),
            values: Vec::new(),
            poisoned: false,
        })
    }

    /// Whether this evaluation reports captures.
    #[getter]
    fn captures(&self) -> bool {
        self.names.is_some()
    }

    /// The field read as the event type (`type` unless `type_field=` named another).
    #[getter]
    fn type_field(&self) -> String {
        self.rt.options().type_field.clone()
    }

    /// Attribute names read from each event.
    fn attribute_names(&self) -> Vec<String> {
        self.rt.attribute_names().to_vec()
    }

    /// Position of the next event.
    fn next_position(&self) -> u64 {
        self.rt.next_position()
    }

    /// Lowest position a future match can contain.
    fn horizon(&self) -> u64 {
        self.rt.horizon()
    }

    /// Lowest position a match the automaton can still report can contain (those
    /// waiting for a deadline aside: see `take_deferred_positions`).
    fn window_horizon(&self) -> u64 {
        self.rt.window_horizon()
    }

    /// Whether the query ends with a trailing `ABSENT(...) FOR d`.
    fn has_deadline(&self) -> bool {
        self.rt.has_deadline()
    }

    /// Starts (or stops) recording the positions of the complex events that go to
    /// wait for their deadline (a `Stream` keeps their events aside).
    fn record_deferred_positions(&mut self, on: bool) {
        self.rt.record_deferred_positions(on);
    }

    /// The positions of every complex event waiting for its deadline (a superset: cancelled
    /// ones not yet dropped included) or fired and not handed over, their start and end
    /// included, sorted, without repeats.
    fn waiting_positions(&self) -> Vec<u64> {
        self.rt.waiting_positions()
    }

    /// The positions of the complex events that went to wait for their deadline since
    /// the last call (their start and end included), sorted, without repeats.
    fn take_deferred_positions(&mut self) -> Vec<u64> {
        let mut p = self.rt.take_deferred_positions();
        p.sort_unstable();
        p.dedup();
        p
    }

    /// Pushes every mapping of the iterable `events`; returns the matches. With a
    /// reorder buffer the events get the tags `first_tag`, `first_tag + 1`, ...
    #[pyo3(signature = (events, source=None, first_tag=0))]
    fn push_events<'py>(
        &mut self,
        py: Python<'py>,
        events: &Bound<'py, PyAny>,
        source: Option<Py<PyAny>>,
        first_tag: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        self.run(py, |this| {
            this.out.clear();
            for (i, ev) in events.try_iter()?.enumerate() {
                this.push_one(py, &ev?, first_tag + i as u64)?;
            }
            this.matches(py, source.as_ref())
        })
    }

    /// Whether the evaluation has a reorder buffer (`max_delay`).
    fn reorders(&self) -> bool {
        self.rt.reorders()
    }

    /// What became of the tagged events since the last call: `(tag, released)`
    /// pairs in order; released events got consecutive positions.
    fn take_fates(&mut self) -> Vec<(u64, bool)> {
        let fate = |f: Fate| match f {
            Fate::Released(t) => (t, true),
            Fate::Dropped(t) => (t, false),
        };
        self.rt.take_fates().into_iter().map(fate).collect()
    }

    /// Tags of the events the reorder buffer holds, in release order.
    fn held_tags(&self) -> Vec<u64> {
        self.rt.held_tags()
    }

    /// Pushes the rows of an Arrow-compatible object (or none) through the reorder
    /// buffer, row `i` under the tag `first_tag + i` and the tie-breaker `ties[i]`,
    /// then raises the buffer's watermark to `watermark_ns` if given; returns the
    /// matches of the rows released as an Arrow batch (as `push_arrow_columnar`).
    #[pyo3(signature = (data, first_tag, ties=None, watermark_ns=None))]
    fn push_arrow_delayed(
        &mut self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        first_tag: u64,
        ties: Option<Vec<Vec<u8>>>,
        watermark_ns: Option<i64>,
    ) -> PyResult<ArrowBatch> {
        self.run(py, |this| {
            let mut out = MatchBuffer::new();
            let ties = ties.unwrap_or_default();
            if let Some(data) = data {
                let mut offset = 0usize;
                let reader = stream_of(data)?;
                if this.delayed_fields.is_none() {
                    this.delayed_fields = Some(this.rt.query().measure_fields(Some(&reader.schema())));
                }
                for batch in reader {
                    let batch =
                        batch.map_err(|e| PyValueError::new_err(format!("cannot read the Arrow stream: {e}")))?;
                    let n = batch.num_rows();
                    let tied = ties.get(offset..offset + n).unwrap_or(&[]);
                    this.rt
                        .push_batch_delayed(&batch, first_tag + offset as u64, tied, &mut out)
                        .map_err(|e| event_error(py, &e))?;
                    offset += n;
                }
            }
            if let Some(w) = watermark_ns {
                this.rt.advance_delayed(w, &mut out).map_err(|e| event_error(py, &e))?;
            }
            let fields = this.delayed_fields.clone().unwrap_or_else(|| this.rt.query().measure_fields(None));
            this.last_fields = Some(fields.clone());
            let batch = out.into_record_batch_with_measures(0, this.names.as_deref().map(Vec::as_slice), &fields);
            Ok(ArrowBatch::new(batch.map_err(PyValueError::new_err)?))
        })
    }

    /// Releases every held event; returns the matches.
    #[pyo3(signature = (source=None))]
    fn flush<'py>(&mut self, py: Python<'py>, source: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyList>> {
        self.usable()?;
        self.run(py, |this| {
            this.out.clear();
            this.rt.flush_delayed(&mut this.out).map_err(|e| event_error(py, &e))?;
            this.matches(py, source.as_ref())
        })
    }

    /// Pushes every row of an Arrow-compatible object (`__arrow_c_stream__`).
    #[pyo3(signature = (data, source=None))]
    fn push_arrow<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        source: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.run(py, |this| {
            this.out.clear();
            push_arrow_rows(py, &mut this.rt, data, &mut this.out)?;
            this.matches(py, source.as_ref())
        })
    }

    /// The matches a push left behind when it failed part-way (those that ended
    /// before the bad event), as for a successful push; empties the buffer.
    #[pyo3(signature = (source=None))]
    fn take_matches<'py>(&mut self, py: Python<'py>, source: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyList>> {
        self.run(py, |this| this.matches(py, source.as_ref()))
    }

    /// Pushes an Arrow-compatible object; returns the matches as an Arrow batch
    /// (`match_id`, `start`, `end`, `positions`), numbered from `first_id`, with
    /// 32-bit positions when `narrow` (an event beyond 2^32 - 1 is then an error).
    /// `whole`: the batch is the whole output of a one-shot evaluation, rather than
    /// one of a series of batches (whose buffers are presized from the last one).
    fn push_arrow_columnar(
        &mut self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        first_id: u64,
        narrow: bool,
        whole: bool,
    ) -> PyResult<ArrowBatch> {
        self.run(py, |this| {
            let _ = this.rt.take_emitted_deadlines(); // the Arrow output has no deadline column
            let names = this.names.clone();
            let names = names.as_deref().map(Vec::as_slice);
            let (batch, fields) = if narrow {
                push_into_batch(py, &mut this.rt, data, &mut this.out32, first_id, whole, names)?
            } else {
                push_into_batch(py, &mut this.rt, data, &mut this.out, first_id, whole, names)?
            };
            this.last_fields = Some(fields);
            Ok(batch)
        })
    }

    /// Counters and sizes.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.rt.statistics();
        let d = PyDict::new(py);
        d.set_item("events", s.runtime.events)?;
        d.set_item("accepted", s.runtime.accepted)?;
        d.set_item("matches", s.runtime.matches)?;
        d.set_item("late_dropped", s.runtime.late)?;
        d.set_item("no_key", s.runtime.no_key)?;
        d.set_item("skipped_streams", s.runtime.skipped)?;
        d.set_item("partitions", s.partitions)?;
        d.set_item("partitions_created", s.runtime.partitions_created)?;
        d.set_item("det_states", s.det_states)?;
        d.set_item("det_states_created", s.cache.det_states_created)?;
        d.set_item("cache_hits", s.cache.hits)?;
        d.set_item("cache_misses", s.cache.misses)?;
        d.set_item("cache_clears", s.cache.clears)?;
        d.set_item("cache_mode", if s.cache.uncached { "uncached" } else { "cached" })?;
        d.set_item("cache_bytes", s.cache_bytes)?;
        d.set_item("live_nodes", s.live_nodes)?;
        d.set_item("arena_bytes", s.arena_bytes)?;
        if let Some(r) = s.reorder {
            d.set_item("late_dropped", s.runtime.late + r.late)?;
            d.set_item("reorder_held", r.held)?;
            d.set_item("reorder_max_held", r.max_held)?;
            d.set_item("reorder_released", r.released)?;
            d.set_item("reorder_reordered", r.reordered)?;
            d.set_item("reorder_late", r.late)?;
        }
        Ok(d)
    }

    /// The determinization cache's counters as text (`Runtime::explain_cache`).
    fn explain_cache(&self) -> String {
        self.rt.explain_cache()
    }

    /// The materialised det-states in Graphviz DOT (`Runtime::det_states_dot`).
    fn det_states_dot(&self) -> String {
        self.rt.det_states_dot()
    }

    /// Declares that no event earlier than `time` (same unit as the time field)
    /// will arrive; expired state is released. With a reorder buffer, the held
    /// events at or before `time` are evaluated and their matches returned. The
    /// matches of a trailing absence whose deadline is before `time` are returned
    /// with `take=True`; otherwise they stay ready and the next push emits them
    /// first (so a caller that ignores the result loses nothing).
    #[pyo3(signature = (time, source=None, take=false))]
    fn advance_watermark<'py>(
        &mut self,
        py: Python<'py>,
        time: &Bound<'py, PyAny>,
        source: Option<Py<PyAny>>,
        take: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        self.usable()?;
        let v = to_value(time)?.map_err(PyValueError::new_err)?;
        let w = if self.rt.reorders() {
            reorder_time(v.as_ref(), self.rt.options().time_unit_nanos)?
        } else {
            self.rt.time_coordinate(v.as_ref()).map_err(PyValueError::new_err)?
        };
        self.run(py, |this| {
            this.out.clear();
            this.rt.advance_delayed(w, &mut this.out).map_err(|e| event_error(py, &e))?;
            if take {
                this.rt.take_fired(&mut this.out);
            }
            this.matches(py, source.as_ref())
        })
    }

    /// Fires every match of a trailing absence still waiting for its deadline (the
    /// input is over) and returns them.
    #[pyo3(signature = (source=None))]
    fn close_deadlines<'py>(&mut self, py: Python<'py>, source: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyList>> {
        self.usable()?;
        self.run(py, |this| {
            this.rt.close_deadlines();
            this.out.clear();
            this.rt.take_fired(&mut this.out);
            this.matches(py, source.as_ref())
        })
    }

    /// Hands over, as an Arrow batch (the columns of `push_arrow_columnar`, numbered
    /// from `first_id`, with 32-bit positions when `narrow`), the matches of a
    /// trailing absence whose deadline a watermark passed (`advance_watermark`,
    /// `push_arrow_delayed`'s `watermark_ns`), and with `close=True` also every match
    /// still waiting (the input is over). Without it those matches would wait for the
    /// next push: the Spark glue, which builds its output from Arrow columns, needs
    /// them at the watermark that fired them, and `run_arrow(close_deadlines=True)`
    /// at the end of its input.
    #[pyo3(signature = (close=false, first_id=0, narrow=false))]
    fn take_fired_arrow(&mut self, py: Python<'_>, close: bool, first_id: u64, narrow: bool) -> PyResult<ArrowBatch> {
        self.run(py, |this| {
            if close {
                this.rt.close_deadlines();
            }
            let names = this.names.clone();
            let fields = this.last_fields.as_deref();
            let batch = if narrow {
                fired_batch::<u32>(&mut this.rt, first_id, names.as_deref().map(Vec::as_slice), fields)
            } else {
                fired_batch::<u64>(&mut this.rt, first_id, names.as_deref().map(Vec::as_slice), fields)
            };
            let _ = this.rt.take_emitted_deadlines(); // the Arrow output has no deadline column
            Ok(ArrowBatch::new(batch.map_err(PyValueError::new_err)?))
        })
    }

    /// Matches of a trailing absence waiting for their deadline.
    fn waiting_deadlines(&self) -> usize {
        self.rt.waiting_deadlines()
    }

    /// Earliest window coordinate at which a partition's partial matches all
    /// expire (`None` if nothing expires by time).
    fn next_deadline(&self) -> Option<i64> {
        self.rt.next_deadline()
    }

    /// Units of the time field per window coordinate unit.
    fn time_scale(&self) -> i64 {
        self.rt.time_scale()
    }

    /// True when no partial match or strategy state is left.
    fn is_idle(&self) -> bool {
        self.rt.is_idle()
    }

    /// Versioned binary snapshot of the evaluation state.
    fn snapshot<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.usable()?;
        let bytes = self.run(py, |this| Ok(this.rt.snapshot()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Rebuilds an evaluation of `query` from `snapshot()` bytes.
    #[staticmethod]
    fn restore(py: Python<'_>, query: &NativeQuery, data: &[u8]) -> PyResult<NativeRuntime> {
        guarded(py, || {
            let mut rt =
                Runtime::restore(query.inner.clone(), data).map_err(|e| PyValueError::new_err(e.to_string()))?;
            rt.record_deadlines(rt.has_deadline());
            rt.set_interrupt_check(Some(crate::errors::signal_check()));
            Ok(NativeRuntime {
                names: rt.options().captures.then(|| Arc::new(query.inner.capture_names())),
                measure_names: Arc::new(query.inner.measure_names()),
                delayed_fields: None,
                last_fields: None,
                rt,
                out: MatchBuffer::new(),
                out32: MatchBuffer::empty(),
                values: Vec::new(),
                poisoned: false,
            })
        })
    }
}

/// Pushes every row of an Arrow-compatible object into `rt`, appending the
/// complex events to `out`.
/// Returns the input's Arrow schema (which types the measure columns).
fn push_arrow_rows<P: Position>(
    py: Python<'_>,
    rt: &mut Runtime,
    data: &Bound<'_, PyAny>,
    out: &mut MatchBuffer<P>,
) -> PyResult<arrow_schema::SchemaRef> {
    if rt.reorders() {
        // The reorder buffer owns its events: ceql.Stream hands them over as rows.
        return Err(PyValueError::new_err("a stream with max_delay reads Arrow data as rows (internal)"));
    }
    let reader = stream_of(data)?;
    let schema = reader.schema();
    for batch in reader {
        let batch = batch.map_err(|e| PyValueError::new_err(format!("cannot read the Arrow stream: {e}")))?;
        rt.push_batch(&batch, out).map_err(|e| event_error(py, &e))?;
    }
    Ok(schema)
}

/// Pushes `data` and returns its complex events as one Arrow batch: into a fresh
/// buffer made for a whole output, or into `kept`, which is left presized for the
/// next batch. With `names` (captures on), the batch has a `variables` column too.
/// Also returns the measure columns the batch was typed with.
fn push_into_batch<P: Position>(
    py: Python<'_>,
    rt: &mut Runtime,
    data: &Bound<'_, PyAny>,
    kept: &mut MatchBuffer<P>,
    first_id: u64,
    whole: bool,
    names: Option<&[Vec<String>]>,
) -> PyResult<(ArrowBatch, Vec<arrow_schema::Field>)> {
    let (out, schema) = if whole {
        let mut out = MatchBuffer::for_whole_output();
        let schema = push_arrow_rows(py, rt, data, &mut out)?;
        (out, schema)
    } else {
        kept.clear();
        let schema = push_arrow_rows(py, rt, data, kept)?;
        (kept.take_presized(), schema)
    };
    let fields = rt.query().measure_fields(Some(&schema));
    let batch = out.into_record_batch_with_measures(first_id, names, &fields).map_err(PyValueError::new_err)?;
    Ok((ArrowBatch::new(batch), fields))
}

/// The matches of a trailing absence that are ready, as an Arrow batch, with their
/// measure columns typed as `fields` (those of the runtime's last Arrow output), or,
/// before any, from the query and the values (a caller with a fixed schema casts them).
fn fired_batch<P: Position>(
    rt: &mut Runtime,
    first_id: u64,
    names: Option<&[Vec<String>]>,
    fields: Option<&[arrow_schema::Field]>,
) -> Result<RecordBatch, String> {
    let mut out = MatchBuffer::<P>::empty();
    rt.take_fired(&mut out);
    let fields = match fields {
        Some(f) => f.to_vec(),
        None => out.measure_fields_from_values(rt.query().measure_fields(None)),
    };
    out.into_record_batch_with_measures(first_id, names, &fields)
}

/// A watermark for the reorder buffer in nanoseconds: a number in the time field's
/// unit, or a time stamp.
fn reorder_time(v: ValueRef<'_>, unit_nanos: i64) -> PyResult<i64> {
    let out_of_range = || PyValueError::new_err("the watermark does not fit in 64-bit nanoseconds");
    match v {
        ValueRef::Int(i) => i.checked_mul(unit_nanos).ok_or_else(out_of_range),
        // Rounded as an event's time stamp is (docs/language.md#s1-4).
        ValueRef::Float(f) if f.is_finite() => ceql_engine::float_nanos(f, unit_nanos).ok_or_else(out_of_range),
        ValueRef::Timestamp(ns) => Ok(ns),
        _ => Err(PyValueError::new_err("a watermark is a number (in the time field's unit) or a time stamp")),
    }
}
