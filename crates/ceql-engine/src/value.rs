//! Attribute values as the engine sees them.

use std::fmt;

/// A borrowed attribute value of one event.
///
/// `Absent` and `Null` both read as NULL in predicates (docs/language.md#s1-2). They differ
/// only for `PARTITION BY` key groups, where the first attribute *present* in the
/// event is the key (docs/language.md#s1-1a: "declared" reads "present in the event").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueRef<'a> {
    /// The event does not carry the attribute.
    Absent,
    /// The attribute is present but NULL (`None` in Python).
    Null,
    /// Boolean.
    Bool(bool),
    /// 64-bit signed integer.
    Int(i64),
    /// IEEE-754 double.
    Float(f64),
    /// UTF-8 string.
    Str(&'a str),
    /// A time stamp in nanoseconds since the epoch (Arrow/pandas timestamp, Python datetime).
    Timestamp(i64),
}

impl ValueRef<'_> {
    /// True for `Absent` and `Null`.
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, ValueRef::Absent | ValueRef::Null)
    }

    /// The runtime type of the value, `None` when NULL.
    pub fn value_type(&self) -> Option<ValueType> {
        Some(match self {
            ValueRef::Absent | ValueRef::Null => return None,
            ValueRef::Bool(_) => ValueType::Bool,
            ValueRef::Int(_) => ValueType::Int,
            ValueRef::Float(_) => ValueType::Float,
            ValueRef::Str(_) => ValueType::Str,
            ValueRef::Timestamp(_) => ValueType::Timestamp,
        })
    }

    /// Copies the value into an owned [`Value`].
    pub fn to_owned_value(&self) -> Value {
        match *self {
            ValueRef::Absent | ValueRef::Null => Value::Null,
            ValueRef::Bool(b) => Value::Bool(b),
            ValueRef::Int(i) => Value::Int(i),
            ValueRef::Float(f) => Value::Float(f),
            ValueRef::Str(s) => Value::Str(s.into()),
            ValueRef::Timestamp(t) => Value::Timestamp(t),
        }
    }
}

/// An owned attribute value (literals, computed values).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    /// NULL.
    Null,
    /// Boolean.
    Bool(bool),
    /// Integer.
    Int(i64),
    /// Double.
    Float(f64),
    /// String.
    Str(Box<str>),
    /// Nanosecond time stamp.
    Timestamp(i64),
}

impl Value {
    /// Borrows the value.
    #[inline]
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Bool(b) => ValueRef::Bool(*b),
            Value::Int(i) => ValueRef::Int(*i),
            Value::Float(f) => ValueRef::Float(*f),
            Value::Str(s) => ValueRef::Str(s),
            Value::Timestamp(t) => ValueRef::Timestamp(*t),
        }
    }
}

/// Runtime value types, used in type-error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// Boolean.
    Bool,
    /// Integer.
    Int,
    /// Double.
    Float,
    /// String.
    Str,
    /// Time stamp.
    Timestamp,
}

impl ValueType {
    /// Whether the type takes part in arithmetic and ordering comparisons.
    pub fn is_numeric(self) -> bool {
        matches!(self, ValueType::Int | ValueType::Float | ValueType::Timestamp)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueType::Bool => "boolean",
            ValueType::Int => "int",
            ValueType::Float => "double",
            ValueType::Str => "string",
            ValueType::Timestamp => "timestamp",
        })
    }
}

/// Declared attribute types of `CREATE STREAM` (docs/language.md#s1-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum AttrType {
    /// `int`, `long`, `integer`.
    Int,
    /// `double`, `float`.
    Double,
    /// `string`, `str`.
    String,
    /// `boolean`, `bool`.
    Boolean,
    /// `primary_time`: the event's time stamp in nanoseconds.
    PrimaryTime,
}

impl AttrType {
    /// Parses a declared type name (case-sensitive, as in CORE C++).
    pub fn from_decl(name: &str) -> Option<AttrType> {
        Some(match name {
            "int" | "long" | "integer" => AttrType::Int,
            "double" | "float" => AttrType::Double,
            "string" | "str" => AttrType::String,
            "boolean" | "bool" => AttrType::Boolean,
            "primary_time" => AttrType::PrimaryTime,
            _ => return None,
        })
    }

    /// Static kind used by the type checker.
    pub fn kind(self) -> TypeKind {
        match self {
            AttrType::Int | AttrType::PrimaryTime => TypeKind::Int,
            AttrType::Double => TypeKind::Float,
            AttrType::String => TypeKind::Str,
            AttrType::Boolean => TypeKind::Bool,
        }
    }
}

impl fmt::Display for AttrType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AttrType::Int => "int",
            AttrType::Double => "double",
            AttrType::String => "string",
            AttrType::Boolean => "boolean",
            AttrType::PrimaryTime => "primary_time",
        })
    }
}

/// What the static type checker knows about an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeKind {
    /// Integer.
    Int,
    /// Double.
    Float,
    /// String.
    Str,
    /// Boolean.
    Bool,
    /// Always NULL (an attribute the event type does not declare).
    Null,
    /// Only known at run time (no declaration).
    Unknown,
}

impl TypeKind {
    /// Numeric, or possibly numeric.
    pub fn may_be_numeric(self) -> bool {
        matches!(self, TypeKind::Int | TypeKind::Float | TypeKind::Null | TypeKind::Unknown)
    }

    /// Name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            TypeKind::Int => "int",
            TypeKind::Float => "double",
            TypeKind::Str => "string",
            TypeKind::Bool => "boolean",
            TypeKind::Null => "null",
            TypeKind::Unknown => "unknown",
        }
    }
}
