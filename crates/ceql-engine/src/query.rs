//! Compilation pipeline (docs/language.md#s5): text → AST → checks → CEA with the
//! predicates interned per type. A [`CompiledQuery`] is immutable and can be shared
//! by any number of evaluations ([`crate::Runtime`]).

use crate::analyze::validate_declarations;
use crate::analyze::{analyze, CheckOptions, Plan, Projection, WindowPlan};
use crate::cea::{build_cea, Cea};
use crate::det::StrategyKind;
use crate::error::CompileError;
use crate::predicate::{AttrSlot, PredIr};
use crate::residual::ResidualPlan;
use crate::schema::TypeId;
use crate::value::AttrType;
use ceql_syntax::ast::Strategy;
use ceql_syntax::{Diagnostic, Span};
use std::sync::Arc;

/// Options of [`CompiledQuery::compile`].
#[derive(Clone, Copy, Debug, Default)]
pub struct CompileOptions {
    /// Evaluate `NEXT/LAST/MAX/STRICT` as `ALL` (warning `W0404`), like CORE C++.
    pub compat_ignore_strategy: bool,
}

/// How the key of one `PARTITION BY` group is read for events of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// Declared schema: this slot (declared with this type).
    Declared(AttrSlot, AttrType),
    /// Declared schema: the type declares none of the group's attributes (no key).
    Missing,
    /// Open schema: the first of these slots the event has a non-NULL value for.
    FirstPresent(Vec<AttrSlot>),
    /// The routing key of an equality between variables (docs/language.md#s3-4b): this
    /// slot's value, normalised so that equal keys are exactly the values `=` finds equal.
    Routed(AttrSlot),
}

/// A compiled query.
#[derive(Clone, Debug)]
pub struct CompiledQuery {
    /// The query text as given.
    pub(crate) text: String,
    /// The schema text, if one was given separately.
    pub(crate) schema_text: Option<String>,
    /// Checked and resolved query.
    pub(crate) plan: Plan,
    /// Its automaton.
    pub(crate) cea: Arc<Cea>,
    /// `preds[t]`: the predicates of type `t`, in bit order.
    pub(crate) preds: Vec<Vec<PredIr>>,
    /// `pred_texts[t][b]`: the text of predicate bit `b` of type `t` (for `explain`).
    pub(crate) pred_texts: Vec<Vec<String>>,
    /// Attribute names the evaluation reads, indexed by slot.
    pub(crate) attributes: Vec<String>,
    /// Per type: its declared attributes and their slots (validated on ingestion).
    pub(crate) declared_reads: Vec<Vec<(AttrSlot, AttrType)>>,
    /// Per type, per `PARTITION BY` group: where the key comes from. The last entry
    /// is for events of types the query does not name.
    pub(crate) keys: Vec<Vec<KeySource>>,
    /// Slot of the `WITHIN n [a]` attribute.
    pub(crate) window_slot: Option<AttrSlot>,
    /// Per type: slot of its `primary_time` attribute.
    pub(crate) primary_time: Vec<Option<AttrSlot>>,
    /// Stable hash of the query text, schema and options (checked by snapshots).
    pub(crate) fingerprint: u64,
    /// Which strategy automaton the determinizer builds.
    pub(crate) strategy: StrategyKind,
    /// Remove repeated complex events at each position (MAX with a projection:
    /// incomparable maximal valuations may project to the same complex event).
    pub(crate) dedupe_output: bool,
    /// Capture labels of the output-marking transitions (docs/language.md#s3-2a),
    /// as the user sees them (after the projection).
    pub(crate) labels: crate::cea::CaptureLabels,
    /// Filters between events, tested per valuation (docs/design/correlation.md, section 3.2);
    /// the automaton then labels every variable (captures on internally).
    pub(crate) residual: Option<Arc<ResidualPlan>>,
}

impl CompiledQuery {
    /// Compiles `text` (optionally preceded by `CREATE STREAM` declarations) against
    /// the declarations in `schema`, if any.
    ///
    /// The passes are recursive over the syntax tree, whose size is bounded by
    /// [`ceql_syntax::MAX_DEPTH`] and [`ceql_syntax::MAX_NESTING`]; they run on a
    /// thread of their own with `COMPILE_STACK_BYTES` of stack, so that compiling
    /// is as safe on a 256 KiB Python or Spark thread as on the main thread.
    ///
    /// If the system refuses the compile thread (an address-space limit such as
    /// `ulimit -v` close to the process's size), the result is `E0103` rather than
    /// compiling on the caller's stack, which may be too small for the query.
    pub fn compile(text: &str, schema: Option<&str>, options: CompileOptions) -> Result<CompiledQuery, CompileError> {
        on_compile_stack(move || Self::compile_here(text, schema, options)).unwrap_or_else(|e| {
            let message = format!(
                "no room to compile: the system refused the compile thread's {} MiB of stack ({e}); \
                 raise the process's address-space limit (ulimit -v)",
                COMPILE_STACK_BYTES >> 20
            );
            Err(CompileError::new(Diagnostic::error("E0103", message, Span::new(0, 0)), text, "query"))
        })
    }

    fn compile_here(text: &str, schema: Option<&str>, options: CompileOptions) -> Result<CompiledQuery, CompileError> {
        let parsed = ceql_syntax::parse_query_text(text).map_err(|d| CompileError::new(d, text, "query"))?;
        let mut decls = Vec::new();
        if let Some(s) = schema {
            decls = ceql_syntax::parse_schema(s).map_err(|d| CompileError::new(d, s, "schema"))?;
            // Errors inside the schema text are reported against it.
            validate_declarations(&decls).map_err(|d| CompileError::new(d, s, "schema"))?;
        }
        decls.extend(parsed.streams.iter().cloned());
        let opts = CheckOptions { compat_ignore_strategy: options.compat_ignore_strategy };
        let plan = analyze(&parsed.query, &decls, opts).map_err(|d| CompileError::new(d, text, "query"))?;
        // With residual filters (docs/design/correlation.md, section 3.2) the automaton marks and
        // labels every variable, and the output is projected after the test.
        let residual_query = plan.needs_valuations();
        let built = if residual_query {
            build_cea(&Plan { projection: Projection::All, ..plan.clone() })
        } else {
            build_cea(&plan)
        };
        let (mut cea, mut table) = built.map_err(|d| CompileError::new(d, text, "query"))?;
        let strategy = match plan.strategy {
            // Chosen among the passing valuations at output (docs/language.md#s3-6a).
            _ if plan.selects_after_test() => StrategyKind::All,
            Strategy::All | Strategy::Any => StrategyKind::All,
            Strategy::Strict => {
                // STRICT ([FCEP] C.3.1, two-copy product): with runs starting at
                // every position, a contiguous run is one that never takes a
                // comparison-unmarked transition after its start.
                for trs in &mut cea.out {
                    trs.retain(|t| t.compared);
                }
                StrategyKind::All
            }
            Strategy::Next => StrategyKind::Next,
            Strategy::Last => StrategyKind::Last,
            Strategy::Max => StrategyKind::Max,
        };
        let (labels, residual) = if residual_query {
            let internal = crate::cea::assign_labels(&mut cea, &Projection::All, &plan.variables);
            let (user, to_user) = internal.project(&plan.projection, &plan.variables);
            let r = ResidualPlan::new(&plan, &mut table, &internal, to_user)
                .map_err(|d| CompileError::new(d, text, "query"))?;
            (user, Some(Arc::new(r)))
        } else {
            (crate::cea::assign_labels(&mut cea, &plan.projection, &plan.variables), None)
        };
        let schema_def = &plan.schema;
        // Attribute layout: predicate attributes, then partition keys and the window.
        let keys: Vec<Vec<KeySource>> = schema_def
            .types
            .iter()
            .map(|td| {
                plan.partition_by
                    .iter()
                    .map(|group| {
                        if schema_def.declared {
                            group
                                .iter()
                                .find_map(|a| td.attr_type(a).map(|ty| KeySource::Declared(table.slot(a), ty)))
                                .unwrap_or(KeySource::Missing)
                        } else {
                            KeySource::FirstPresent(group.iter().map(|a| table.slot(a)).collect())
                        }
                    })
                    .collect()
            })
            .collect();
        // Types the query does not name: keyed by present attributes without a
        // declaration (they still belong to a substream and can break `:`), never
        // keyed with one.
        let other_keys = plan
            .partition_by
            .iter()
            .map(|group| {
                if schema_def.declared {
                    KeySource::Missing
                } else {
                    KeySource::FirstPresent(group.iter().map(|a| table.slot(a)).collect())
                }
            })
            .collect();
        let mut keys = keys;
        keys.push(other_keys);
        // A routed query (docs/language.md#s3-4b): the routing key comes first, so that
        // the first byte of a partition's key is the kind of its routed value.
        if let Some(routing) = &plan.routing {
            for (t, sources) in keys.iter_mut().enumerate() {
                let attr = routing.key_attr.get(t).and_then(Option::as_ref);
                let source = match attr {
                    Some(a) if !schema_def.declared || schema_def.types[t].attr_type(a).is_some() => {
                        KeySource::Routed(table.slot(a))
                    }
                    _ => KeySource::Missing,
                };
                sources.insert(0, source);
            }
        }
        let window_slot = match &plan.window {
            WindowPlan::Attribute { attr, .. } => Some(table.slot(attr)),
            _ => None,
        };
        let primary_time: Vec<Option<AttrSlot>> =
            schema_def.types.iter().map(|td| td.primary_time.map(|i| table.slot(&td.attrs[i].0))).collect();
        // With declarations every declared attribute is read, so that a value of
        // the wrong type rejects the event (docs/language.md#s1-2) even if no filter uses it.
        for td in &schema_def.types {
            for (name, _) in &td.attrs {
                table.slot(name);
            }
        }
        let declared_reads = schema_def
            .types
            .iter()
            .map(|td| {
                td.attrs
                    .iter()
                    .filter_map(|(n, ty)| table.attributes.iter().position(|a| a == n).map(|s| (s as AttrSlot, *ty)))
                    .collect()
            })
            .collect();
        let dedupe_output =
            strategy == StrategyKind::Max && !matches!(plan.projection, crate::analyze::Projection::All);
        Ok(CompiledQuery {
            text: text.to_string(),
            schema_text: schema.map(str::to_string),
            fingerprint: fingerprint(text, schema.unwrap_or(""), options),
            plan,
            cea: Arc::new(cea),
            pred_texts: table.texts(),
            preds: std::mem::take(&mut table.per_type),
            attributes: table.attributes,
            declared_reads,
            keys,
            window_slot,
            primary_time,
            dedupe_output,
            strategy,
            labels,
            residual,
        })
    }

    /// The query text as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The schema text, if one was given separately.
    pub fn schema_text(&self) -> Option<&str> {
        self.schema_text.as_deref()
    }

    /// The attributes declared `string` by every event type that declares them: a
    /// reader that types columns itself (a CSV reader, which takes `01234` for the
    /// number 1234) reads these as text, as the declarations say.
    pub fn string_attributes(&self) -> Vec<&str> {
        let mut kinds: Vec<Option<bool>> = vec![None; self.attributes.len()];
        for &(slot, ty) in self.declared_reads.iter().flatten() {
            let k = &mut kinds[slot as usize];
            *k = Some(k.unwrap_or(true) && ty == crate::value::AttrType::String);
        }
        self.attributes.iter().zip(kinds).filter(|(_, k)| *k == Some(true)).map(|(a, _)| a.as_str()).collect()
    }

    /// The attributes some event type declares `primary_time`: a reader that gets
    /// time stamps as ISO 8601 text (a CSV, JSON lines) converts these, as it does
    /// the time field it is given.
    pub fn time_attributes(&self) -> Vec<&str> {
        let mut time = vec![false; self.attributes.len()];
        for &(slot, ty) in self.declared_reads.iter().flatten() {
            time[slot as usize] |= ty == crate::value::AttrType::PrimaryTime;
        }
        self.attributes.iter().zip(time).filter(|(_, t)| *t).map(|(a, _)| a.as_str()).collect()
    }

    /// Warnings collected by the checks.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.plan.warnings
    }

    /// Number of predicates of each type.
    pub(crate) fn preds_per_type(&self) -> Vec<usize> {
        self.preds.iter().map(Vec::len).collect()
    }

    /// Whether the evaluation keys its substreams: the query has `PARTITION BY`, or
    /// routes equalities between variables (docs/language.md#s3-4b).
    pub(crate) fn is_partitioned(&self) -> bool {
        !self.plan.partition_by.is_empty() || self.plan.routing.is_some()
    }

    /// Key sources of events of type `ty` (`OTHER_TYPE` included).
    pub(crate) fn key_sources(&self, ty: TypeId) -> &[KeySource] {
        let i = if ty == crate::det::OTHER_TYPE { self.keys.len() - 1 } else { ty as usize };
        &self.keys[i]
    }

    /// The capture labels: for each label id, the names of the variables it
    /// captures (written as in the query: `T`, `S>T` or an `AS` name), ascending
    /// by variable id. Label 0 is the empty set. Positions of a captures-on output
    /// carry these ids ([`MatchBuffer::labels`](crate::MatchBuffer::labels)).
    pub fn capture_names(&self) -> Vec<Vec<String>> {
        (0..self.labels.len() as u32)
            .map(|l| self.labels.vars(l).iter().map(|&v| self.variable_name(v)).collect())
            .collect()
    }

    /// Whether the query can be evaluated with captures on: its capture labels
    /// fit in a node's position word (always, short of tens of thousands of
    /// distinct variable sets).
    pub fn supports_captures(&self) -> bool {
        self.labels.len() <= crate::cea::MAX_LABELS
    }

    /// The name variable `v` is written with.
    pub(crate) fn variable_name(&self, v: crate::analyze::VarId) -> String {
        use crate::analyze::VarKind;
        match self.plan.variables.kind(v) {
            VarKind::Type(name) | VarKind::Alias(name) => name.clone(),
            VarKind::Qualified(s, name) => format!("{}>{name}", self.plan.schema.streams[*s as usize].name),
            // Never reported (docs/language.md#s3-4c); named for completeness.
            VarKind::Iteration(i) => format!("+{i}"),
        }
    }

    /// Display name of a type.
    pub(crate) fn type_name(&self, t: TypeId) -> String {
        self.plan.schema.type_display(t)
    }
}

/// Stack of the thread that compiles a query: enough for the recursive passes over
/// the deepest syntax tree the parser accepts, in debug builds too. It is address
/// space, not memory: pages are only touched as deep as a query actually goes.
pub const COMPILE_STACK_BYTES: usize = 64 << 20;

/// Runs `f` on a fresh thread with [`COMPILE_STACK_BYTES`] of stack (panics are
/// passed on), or says why no such thread could be started. `f` never runs on the
/// caller's thread: its stack may be 256 KiB (Python and Spark threads).
fn on_compile_stack<T: Send>(f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("ceql-compile".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn_scoped(scope, f)?;
        Ok(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

/// FNV-1a over the inputs that determine the automaton.
fn fingerprint(text: &str, schema: &str, options: CompileOptions) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in text.bytes().chain([0u8]).chain(schema.bytes()).chain([options.compat_ignore_strategy as u8]) {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}
