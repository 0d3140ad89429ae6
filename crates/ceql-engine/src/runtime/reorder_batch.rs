//! Arrow batches through the reorder buffer (docs/language.md#s3-7a): each row is
//! copied out of its columns and pushed with [`Runtime::push_delayed_tied`], so the
//! batch can go away while its rows are held. Used by the Spark glue, whose rows
//! arrive as Arrow micro-batches.

use super::Runtime;
use crate::error::EventError;
use crate::input::{Column, StrColumn};
use crate::output::{MatchBuffer, Position};
use crate::value::ValueRef;
use arrow_array::RecordBatch;

impl Runtime {
    /// Pushes every row of `batch` through the reorder buffer, row `i` under the tag
    /// `first_tag + i` and the tie-breaker `ties[i]` (none when `ties` is empty).
    /// Complex events of the rows released are appended to `out`. The batch needs a
    /// `type` column and may have a `stream` column, as for [`Runtime::push_batch`];
    /// on an error the rows before the bad one were pushed.
    pub fn push_batch_delayed<P: Position>(
        &mut self,
        batch: &RecordBatch,
        first_tag: u64,
        ties: &[Vec<u8>],
        out: &mut MatchBuffer<P>,
    ) -> Result<(), EventError> {
        let position = self.next_position();
        let error = |field: &str, msg: String| EventError::new(position, field, None, msg);
        let schema = batch.schema();
        let col = |name: &str| schema.index_of(name).ok().map(|i| batch.column(i));
        let type_field = self.config.options.type_field.clone();
        let type_col = col(&type_field).ok_or_else(|| {
            error(&type_field, super::batch::no_type_column(&type_field, schema.fields().iter().map(|f| f.name())))
        })?;
        let types = StrColumn::of(type_col)
            .ok_or_else(|| error(&type_field, super::batch::not_a_type_column(&type_field, type_col)))?;
        let streams = match col("stream") {
            Some(c) => Some(StrColumn::of(c).ok_or_else(|| {
                error("stream", format!("`stream` must be a string column, found {}", c.data_type()))
            })?),
            None => None,
        };
        let names = self.attribute_names().to_vec();
        let columns: Vec<Column<'_>> = names
            .iter()
            .map(|n| {
                let c = if crate::is_reserved_field(n) { None } else { col(n) };
                Column::of(c).map_err(|m| error(n, m))
            })
            .collect::<Result<_, _>>()?;
        if let Some((row, slot, msg)) = columns
            .iter()
            .enumerate()
            .filter_map(|(slot, c)| c.first_unrepresentable().map(|(row, msg)| (row, slot, msg)))
            .min_by_key(|&(row, _, _)| row)
        {
            // Refused before any row is held: the caller's tags stay simple.
            return Err(EventError::new(position, names[slot].clone(), types.get(row), format!("row {row}: {msg}")));
        }
        let mut values: Vec<ValueRef<'_>> = Vec::with_capacity(columns.len());
        for row in 0..batch.num_rows() {
            let ty = types.get(row).ok_or_else(|| error(&type_field, format!("row {row} has no `{type_field}`")))?;
            let stream = streams.as_ref().and_then(|s| s.get(row));
            values.clear();
            values.extend(columns.iter().map(|c| c.get(row)));
            let tie = ties.get(row).map_or(&[][..], Vec::as_slice);
            self.push_delayed_tied(stream, ty, &values, first_tag + row as u64, tie, out)?;
        }
        Ok(())
    }
}
