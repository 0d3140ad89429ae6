//! What a user of the engine may know about a compiled query without depending on
//! its internals: the size of its automaton, its clauses, and the engine's answer to
//! the one question that distribution layers (Spark) ask: can the query be
//! evaluated on each partition key's events apart?

use crate::analyze::WindowPlan;
use crate::query::CompiledQuery;
use ceql_syntax::ast::{ConsumePolicy, Strategy};

/// Facts about a compiled query ([`CompiledQuery::facts`]). A snapshot of the
/// query's clauses and automaton, owned, so that bindings convert it without
/// reading the compiled query's fields.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct QueryFacts {
    /// States of the complex event automaton (docs/language.md#s5-4).
    pub states: usize,
    /// Transitions of the automaton.
    pub transitions: usize,
    /// Distinct predicates over all event types (each event is evaluated once
    /// against those of its type).
    pub predicates: usize,
    /// Attribute names the evaluation reads.
    pub attributes: Vec<String>,
    /// The selection strategy (`SELECT ALL | ANY | NEXT | LAST | MAX | STRICT`).
    pub strategy: Strategy,
    /// The `WITHIN` clause.
    pub window: WindowPlan,
    /// The `PARTITION BY` groups, each a list of attribute names.
    pub partition_by: Vec<Vec<String>>,
    /// The `CONSUME BY` policy.
    pub consume: ConsumePolicy,
    /// `LIMIT n` (complex events per end position), if given.
    pub limit: Option<u64>,
    /// Whether the window reads time stamps or attribute values (late events possible).
    pub time_based: bool,
    /// Whether the query has `PARTITION BY`.
    pub partitioned: bool,
    /// Whether the query's result over a stream is the union of its results over
    /// the events of each partition key (in stream order, positions kept). True
    /// for a partitioned or routed query (`PARTITION BY`, or equalities routed by
    /// key: `routed_by`) unless its window counts positions of the whole stream
    /// (`WITHIN n EVENTS`, docs/language.md#s3-7), a match resets every partition
    /// (`CONSUME BY ANY`, docs/language.md#s3-10), or it ends with a trailing absence, whose
    /// deadlines are passed by events of any partition (docs/language.md#s3-3b).
    /// Distribution layers split such a query by key: by its `PARTITION BY` values
    /// and its routing key together.
    pub key_independent: bool,
    /// Equalities between variables routed by key (docs/language.md#s3-4b): for each event
    /// type with a routing key, `(type, key attribute)`; empty when the query is not
    /// routed. A routed query's result is the union of its results over the events of
    /// each routing key under the conditions of `key_independent` (window, consumption,
    /// trailing absence), so a distribution layer may split the input by these
    /// attributes (the values normalised as that section says: `1` and `1.0` together).
    pub routed_by: Vec<(String, String)>,
    /// With `CREATE STREAM` declarations and `PARTITION BY`: for each declared event
    /// type (as `routed_by` names it), the attribute each group reads, the first of
    /// the group that the type declares (docs/language.md#s3-8), `None` when it
    /// declares none (its events have no key). Empty without declarations, where
    /// an event takes the first attribute it has with a value. A distribution layer
    /// that splits by key must key each type's rows as the engine does.
    pub declared_keys: Vec<(String, Vec<Option<String>>)>,
    /// The deadline `d` of a trailing `ABSENT(...) FOR d`, in nanoseconds
    /// (docs/language.md#s3-3b): its matches are reported when time passes their deadline.
    pub trailing_absence: Option<i64>,
    /// The event type names the query knows, declared or used.
    pub event_types: Vec<String>,
    /// The event type names whose events can change the result over an input in
    /// time order, when the others cannot (docs/language.md#s5-7): a distribution
    /// layer may drop events of every other type before it moves them. Plain type
    /// names, without their stream. `None` when an event of any type can, or may:
    /// contiguity (`:`, `STRICT`), `NOT(...)` (a run starts on or takes an event of
    /// any other type), a window that counts positions (`WITHIN n EVENTS`) or reads
    /// an attribute of every event (`WITHIN n [a]`), `LIMIT n` (which complex events
    /// it keeps follows an order that other events change), a trailing absence (any
    /// event passes its deadlines), or an absence tested per valuation (not
    /// analysed: reported `None` to be safe). With `CREATE STREAM` declarations the
    /// types the `FROM` streams declare are kept too, since an event of one is
    /// checked against its declaration.
    pub relevant_types: Option<Vec<String>>,
    /// Whether the types were declared (`CREATE STREAM`), which makes the checks of
    /// docs/language.md#s4 strict.
    pub declared: bool,
    /// Stable hash of the query text, schema and options (checked by snapshots).
    pub fingerprint: u64,
}

impl CompiledQuery {
    /// [`QueryFacts::relevant_types`].
    fn relevant_types(&self) -> Option<Vec<String>> {
        let plan = &self.plan;
        let window_ok = matches!(plan.window, WindowPlan::Unbounded | WindowPlan::Duration(_));
        // Under `LIMIT n` which `n` complex events are kept follows the enumeration
        // order, which the table's order decides; that order can change without the
        // dropped events (a det-state loses its final states on any event).
        if !window_ok
            || plan.limit.is_some()
            || plan.trailing.is_some()
            || !plan.gaps.is_empty()
            || !self.cea.unnamed_types_inert()
        {
            return None;
        }
        let schema = &plan.schema;
        let mut names = self.named_type_names();
        if schema.declared {
            names.extend(schema.types.iter().map(|t| t.name.as_str()));
        }
        Some(names.into_iter().map(str::to_owned).collect())
    }

    /// The plain names of the event types some guard of the automaton names.
    pub(crate) fn named_type_names(&self) -> std::collections::BTreeSet<&str> {
        let types = &self.plan.schema.types;
        self.cea.named_types().into_iter().filter_map(|t| types.get(t as usize)).map(|t| t.name.as_str()).collect()
    }

    /// The facts of this query (see [`QueryFacts`]).
    pub fn facts(&self) -> QueryFacts {
        let plan = &self.plan;
        // `PARTITION BY` as written; a routed query keys its substreams too (`routed_by`).
        let partitioned = !plan.partition_by.is_empty();
        QueryFacts {
            states: self.cea.num_states,
            transitions: self.cea.num_transitions(),
            predicates: self.preds.iter().map(Vec::len).sum(),
            attributes: self.attributes.clone(),
            strategy: plan.strategy,
            window: plan.window.clone(),
            partition_by: plan.partition_by.clone(),
            consume: plan.consume,
            limit: plan.limit,
            time_based: plan.window.is_time_based(),
            partitioned,
            key_independent: (partitioned || plan.routing.is_some())
                && !matches!(plan.window, WindowPlan::Events(_))
                && plan.consume != ConsumePolicy::Any
                && plan.trailing.is_none(),
            routed_by: plan.routing.as_ref().map_or_else(Vec::new, |r| {
                r.key_attr
                    .iter()
                    .enumerate()
                    .filter_map(|(t, a)| a.as_ref().map(|a| (plan.schema.type_display(t as u32), a.clone())))
                    .collect()
            }),
            declared_keys: if plan.schema.declared && partitioned {
                (0..plan.schema.types.len())
                    .map(|t| {
                        let td = &plan.schema.types[t];
                        let attrs = plan
                            .partition_by
                            .iter()
                            .map(|g| g.iter().find(|a| td.attr_type(a).is_some()).cloned())
                            .collect();
                        (plan.schema.type_display(t as u32), attrs)
                    })
                    .collect()
            } else {
                Vec::new()
            },
            trailing_absence: plan.trailing.as_ref().map(|(_, nanos)| *nanos),
            event_types: plan.schema.type_names().into_iter().map(str::to_owned).collect(),
            relevant_types: self.relevant_types(),
            declared: plan.schema.declared,
            fingerprint: self.fingerprint,
        }
    }
}
