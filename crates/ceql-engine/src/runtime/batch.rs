//! Columnar ingestion: feeds an Arrow `RecordBatch` to a [`Runtime`] without
//! materialising per-event objects. Predicates that can be evaluated column-wise
//! are evaluated for the whole batch first ([`crate::predicate::columnar`]); each
//! row is then pushed with its results.

use super::target_memo::TargetMemo;
use super::Runtime;
use crate::error::EventError;
use crate::input::{BatchRow, Column, StrColumn};
use crate::output::{MatchBuffer, Position};
use crate::predicate::columnar::{eval_batch, Tri};
use arrow_array::RecordBatch;

/// Predicate results computed column-wise for a batch: for each type, each
/// predicate's results, or `None` when it is evaluated row by row.
pub(crate) struct Precomputed<'a> {
    pub per_type: &'a [Vec<Option<Tri>>],
    /// Row of the batch.
    pub row: usize,
    /// Per attribute slot: the column's type fits every declaration of it.
    pub declared_ok: &'a [bool],
}

impl Runtime {
    /// Pushes every row of `batch` in order. Complex events are appended to `out`.
    /// On a malformed row the error names its position; rows before it were processed.
    pub fn push_batch<P: Position>(&mut self, batch: &RecordBatch, out: &mut MatchBuffer<P>) -> Result<(), EventError> {
        let schema = batch.schema();
        // Two columns of one name would be read as one (the first) by the engine and
        // as the other by whatever shows the events: refuse the batch instead.
        let mut names = std::collections::HashSet::with_capacity(schema.fields().len());
        if let Some(dup) = schema.fields().iter().map(|f| f.name().as_str()).find(|n| !names.insert(*n)) {
            return Err(EventError::new(
                self.next_position(),
                dup,
                None,
                format!("the input has two columns named `{dup}`; rename one of them"),
            ));
        }
        let col = |name: &str| schema.index_of(name).ok().map(|i| batch.column(i));
        let type_field = self.config.options.type_field.clone();
        let type_col = col(&type_field).ok_or_else(|| {
            EventError::new(
                self.next_position(),
                &type_field,
                None,
                no_type_column(&type_field, schema.fields().iter().map(|f| f.name())),
            )
        })?;
        let types = StrColumn::of(type_col).ok_or_else(|| {
            EventError::new(self.next_position(), &type_field, None, not_a_type_column(&type_field, type_col))
        })?;
        let streams = match col("stream") {
            // A column with no value (Arrow's null type, or pandas' all-NaN floats)
            // names no stream, as the dicts without one it came from.
            Some(c) if c.logical_null_count() == c.len() => None,
            Some(c) => Some(StrColumn::of(c).ok_or_else(|| {
                EventError::new(
                    self.next_position(),
                    "stream",
                    None,
                    format!("`stream` must be a string column, found {}", c.data_type()),
                )
            })?),
            None => None,
        };
        let columns: Vec<Column<'_>> = self
            .attribute_names()
            .to_vec()
            .iter()
            .map(|n| {
                let c = if crate::is_reserved_field(n) { None } else { col(n) };
                Column::of(c).map_err(|m| EventError::new(self.next_position(), n.clone(), None, m))
            })
            .collect::<Result<_, _>>()?;
        // Predicates that can be evaluated column-wise, for the whole batch.
        let rows = batch.num_rows();
        let per_type: Vec<Vec<Option<Tri>>> = self
            .query()
            .preds
            .iter()
            .map(|preds| preds.iter().map(|p| eval_batch(p, &columns, rows)).collect())
            .collect();
        let fits: Vec<bool> = (0..columns.len())
            .map(|slot| {
                let declared = self.query().declared_reads.iter().flatten().filter(|(s, _)| *s as usize == slot);
                declared.clone().all(|(_, t)| columns[slot].fits(*t))
            })
            .collect();
        // Rows from the first unrepresentable value on are not read: it is an error
        // at its own position, after the rows before it were processed.
        let bad = columns
            .iter()
            .enumerate()
            .filter_map(|(slot, c)| c.first_unrepresentable().map(|(row, msg)| (row, slot, msg)))
            .min_by_key(|&(row, _, _)| row);
        let readable = bad.as_ref().map_or(rows, |&(row, _, _)| row);
        let mut memo = TargetMemo::new();
        // The state budget is checked between runs of rows, not per row.
        for first in (0..readable).step_by(super::BUDGET_CHECK_ROWS) {
            self.check_state_budget()?;
            for row in first..readable.min(first + super::BUDGET_CHECK_ROWS) {
                // Without a stream column (the common case) a type met before costs one
                // memo read: by dictionary key, or by the name's slot.
                let known = match (&streams, types.key(row)) {
                    (None, Some(k)) => memo.by_key.get(k).copied().flatten(),
                    (None, None) => types.get(row).and_then(|ty| memo.named(ty)),
                    (Some(_), _) => None,
                };
                let target = match known {
                    Some(target) => target,
                    None => memo.resolve(self, &types, streams.as_ref(), row)?,
                };
                let pre = Precomputed { per_type: &per_type, row, declared_ok: &fits };
                self.push_precomputed(target, &BatchRow { columns: &columns, row }, Some(&pre), out).map_err(
                    |mut e| {
                        e.event_type = types.get(row).map(str::to_string);
                        e
                    },
                )?;
            }
        }
        if let Some((row, slot, msg)) = bad {
            let field = self.attribute_names()[slot].clone();
            return Err(EventError::new(self.next_position(), field, types.get(row), msg));
        }
        Ok(())
    }
}

/// The error of a batch without its type column (`type_field`, by default `type`),
/// naming a column that looks like one (`event_type`, `EventType`, ...): the command
/// line, Spark and the Python API take `type_field=` (docs/api.md, "Input events: the
/// `type` field").
pub(crate) fn no_type_column<'a>(type_field: &str, names: impl Iterator<Item = &'a String>) -> String {
    let names: Vec<&String> = names.collect();
    if type_field != crate::DEFAULT_TYPE_FIELD {
        let shown: Vec<String> = names.iter().take(12).map(|n| format!("`{n}`")).collect();
        let more = if names.len() > shown.len() { ", ..." } else { "" };
        return format!(
            "the batch has no `{type_field}` column, the type field (its columns: {}{more})",
            if shown.is_empty() { "none".to_string() } else { shown.join(", ") }
        );
    }
    let mut text = "the batch has no `type` column".to_string();
    if let Some(like) = names.iter().find(|n| looks_like_type_field(n)) {
        text.push_str(&format!(" (it has `{like}`: give type_field='{like}', or rename that column to `type`)"));
    }
    text
}

/// The error of a type column that does not hold text.
pub(crate) fn not_a_type_column(type_field: &str, column: &dyn arrow_array::Array) -> String {
    format!("`{type_field}` (the type field) must be a string column, found {}", column.data_type())
}

/// Whether a field named `name` is likely the event type under another name
/// (`event_type`, `EventType`, `TYPE`): the errors of an event or a batch without
/// `type` name it.
pub fn looks_like_type_field(name: &str) -> bool {
    name != "type" && name.to_ascii_lowercase().replace('_', "").ends_with("type")
}
