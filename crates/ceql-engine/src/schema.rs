//! The event model a query runs against (docs/language.md#s1): the streams of its `FROM`
//! clause and their event types `S>T`, each with its attributes.
//!
//! A schema is either *declared* (`CREATE STREAM`) or *open* (docs/language.md#s1-1a): without a
//! declaration every `FROM` stream accepts every event type the query names, and
//! attribute types come from the input at run time.

use crate::value::AttrType;
use std::collections::HashMap;

/// Index of a stream of the query's `FROM` clause.
pub type StreamId = u32;
/// Index of an event type `S>T` (a pair of a `FROM` stream and a type name).
pub type TypeId = u32;

/// A `FROM` stream.
#[derive(Clone, Debug)]
pub struct StreamDef {
    /// Stream name (empty for the implicit stream of a query without `FROM`).
    pub name: String,
}

/// An event type `S>T`.
#[derive(Clone, Debug)]
pub struct TypeDef {
    /// The stream `S`.
    pub stream: StreamId,
    /// The type name `T`.
    pub name: String,
    /// Declared attributes (empty for an open schema).
    pub attrs: Vec<(String, AttrType)>,
    /// Index into `attrs` of the `primary_time` attribute, if declared.
    pub primary_time: Option<usize>,
}

impl TypeDef {
    /// The declared type of attribute `name`.
    pub fn attr_type(&self, name: &str) -> Option<AttrType> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, t)| *t)
    }
}

/// Streams and event types visible to one query.
#[derive(Clone, Debug)]
pub struct Schema {
    /// True when built from `CREATE STREAM` declarations.
    pub declared: bool,
    /// `FROM` streams, in `FROM` order.
    pub streams: Vec<StreamDef>,
    /// Every `S>T` of those streams.
    pub types: Vec<TypeDef>,
    by_name: HashMap<String, Vec<TypeId>>,
}

impl Schema {
    /// Builds a schema from its streams; `types[i].stream` must index `streams`.
    pub fn new(declared: bool, streams: Vec<StreamDef>, types: Vec<TypeDef>) -> Self {
        let mut by_name: HashMap<String, Vec<TypeId>> = HashMap::new();
        for (i, t) in types.iter().enumerate() {
            by_name.entry(t.name.clone()).or_default().push(i as TypeId);
        }
        Schema { declared, streams, types, by_name }
    }

    /// All `S>T` with type name `name`, over every `FROM` stream.
    pub fn types_named(&self, name: &str) -> &[TypeId] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// The stream with this name.
    pub fn stream_id(&self, name: &str) -> Option<StreamId> {
        self.streams.iter().position(|s| s.name == name).map(|i| i as StreamId)
    }

    /// The event type `stream>name`.
    pub fn type_id(&self, stream: StreamId, name: &str) -> Option<TypeId> {
        self.types_named(name).iter().copied().find(|&t| self.types[t as usize].stream == stream)
    }

    /// Display name `S>T` (or `T` for the implicit stream).
    pub fn type_display(&self, t: TypeId) -> String {
        let td = &self.types[t as usize];
        let s = &self.streams[td.stream as usize].name;
        if s.is_empty() {
            td.name.clone()
        } else {
            format!("{s}>{}", td.name)
        }
    }

    /// Sorted, de-duplicated type names of the schema (for messages).
    pub fn type_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}
