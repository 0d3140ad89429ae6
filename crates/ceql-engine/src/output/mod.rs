//! The reusable output buffer: complex events in columnar form (Arrow-friendly:
//! start, end and a list column of positions via offsets), with the measures of
//! each output when the query has any (docs/language.md#s3-5a).

mod match_id;
mod measures;
mod position;
mod row_hash;

pub use match_id::{match_id_lanes, match_id_text, MatchIdError, RowHashes};
pub use position::Position;
pub use row_hash::{match_id_row_hashes, UnsupportedHashType};

use arrow_array::{ArrayRef, LargeListArray, PrimitiveArray, RecordBatch, UInt64Array};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Complex events `([start, end], positions)`, appended in order of `end`, with
/// positions stored as `P` (see [`Position`]; `u64` unless the output is known to
/// stay below 2^32).
#[derive(Clone, Debug, PartialEq)]
pub struct MatchBuffer<P: Position = u64> {
    /// First position of each complex event's interval.
    pub(crate) starts: Vec<P>,
    /// Last position (the position at which it was reported).
    pub(crate) ends: Vec<P>,
    /// `positions[offsets[i]..offsets[i + 1]]` are the data positions of event `i`,
    /// ascending. Always starts with 0.
    pub(crate) offsets: Vec<u64>,
    /// Concatenated data positions.
    pub(crate) positions: Vec<P>,
    /// With captures on: the capture label of each data position, parallel to
    /// `positions` (see [`crate::CompiledQuery::capture_names`]); empty otherwise.
    pub(crate) labels: Vec<u32>,
    /// The measures of every output, `measure_width` per output, in order
    /// (docs/language.md#s3-5a); empty for a query without measures.
    pub(crate) measures: Vec<crate::value::Value>,
    /// Measures per output (0 without measures).
    pub(crate) measure_width: usize,
    /// Count complex events and positions instead of storing them.
    count_only: bool,
    counted: u64,
    counted_positions: u64,
    /// Set when memory for the output could not be obtained: enumeration stops
    /// and the push reports an error instead of aborting the process.
    overflow: bool,
    /// The output is built once and handed over whole: a column that outgrows
    /// [`MAPPED_FROM_BYTES`] moves to its own mapping at once (see [`grow`]).
    whole: bool,
}

/// One complex event borrowed from a [`MatchBuffer`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchRef<'a, P: Position = u64> {
    /// Interval start.
    pub start: P,
    /// Interval end.
    pub end: P,
    /// Data positions, ascending.
    pub positions: &'a [P],
    /// With captures on: the capture label of each position (the variables that
    /// captured it, [`crate::CompiledQuery::capture_names`]); empty otherwise.
    pub labels: &'a [u32],
    /// The output's measures, in the order of the `SELECT` list (empty without measures).
    pub measures: &'a [crate::value::Value],
}

impl<P: Position> Default for MatchBuffer<P> {
    fn default() -> Self {
        Self::empty()
    }
}

impl MatchBuffer {
    /// An empty buffer of `u64` positions (the usual one; see [`MatchBuffer::empty`]
    /// for other position types).
    pub fn new() -> Self {
        Self::empty()
    }

    /// A buffer that only counts: full enumeration without storing the output
    /// (benchmarks, counting large outputs).
    pub fn counting() -> Self {
        MatchBuffer { count_only: true, ..Self::new() }
    }
}

impl<P: Position> MatchBuffer<P> {
    /// An empty buffer storing positions as `P`.
    pub fn empty() -> Self {
        MatchBuffer {
            starts: Vec::new(),
            ends: Vec::new(),
            offsets: vec![0],
            positions: Vec::new(),
            labels: Vec::new(),
            measures: Vec::new(),
            measure_width: 0,
            count_only: false,
            counted: 0,
            counted_positions: 0,
            overflow: false,
            whole: false,
        }
    }

    /// An empty buffer for an output that is built once and handed over whole
    /// (`Query.run_arrow`). A column that outgrows `MAPPED_FROM_BYTES` moves at
    /// once to room for `DOUBLING_BYTES`, which the allocator gives its own
    /// mapping: it then grows by remapping pages, where it would otherwise be
    /// copied while it doubles inside the allocator's heap (up to 32 MiB, and once
    /// more into a mapping). Small outputs stay in the heap.
    pub fn for_whole_output() -> Self {
        MatchBuffer { whole: true, ..Self::empty() }
    }

    /// Complex events appended so far (stored or counted).
    pub fn total(&self) -> u64 {
        if self.count_only {
            self.counted
        } else {
            self.len() as u64
        }
    }

    /// Data positions appended so far (stored or counted).
    pub fn total_positions(&self) -> u64 {
        if self.count_only {
            self.counted_positions
        } else {
            self.positions.len() as u64
        }
    }

    /// Whether this buffer only counts.
    pub fn is_counting(&self) -> bool {
        self.count_only
    }

    /// True when memory for the output could not be obtained.
    pub fn overflowed(&self) -> bool {
        self.overflow
    }

    /// Number of complex events.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Removes every complex event, keeping the allocations.
    pub fn clear(&mut self) {
        self.counted = 0;
        self.counted_positions = 0;
        self.overflow = false;
        self.starts.clear();
        self.ends.clear();
        self.offsets.clear();
        self.offsets.push(0);
        self.positions.clear();
        self.labels.clear();
        self.measures.clear();
    }

    /// The `i`-th complex event.
    pub fn get(&self, i: usize) -> MatchRef<'_, P> {
        let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        let labels = if self.labels.is_empty() { &[][..] } else { &self.labels[a..b] };
        let w = self.measure_width;
        let measures = if w == 0 { &[][..] } else { &self.measures[i * w..(i + 1) * w] };
        MatchRef { start: self.starts[i], end: self.ends[i], positions: &self.positions[a..b], labels, measures }
    }

    /// All complex events in order.
    pub fn iter(&self) -> impl Iterator<Item = MatchRef<'_, P>> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Appends one complex event.
    pub fn push(&mut self, start: P, end: P, positions: &[P]) {
        self.begin(start.widen(), end.widen());
        self.positions.extend_from_slice(positions);
        self.finish();
    }

    /// Appends one valuation: a complex event whose positions carry capture
    /// labels (`labels[k]` for `positions[k]`). A buffer holds either complex
    /// events or valuations, never both.
    pub fn push_labelled(&mut self, start: P, end: P, positions: &[P], labels: &[u32]) {
        assert_eq!(positions.len(), labels.len(), "one label per position");
        self.labels.extend_from_slice(labels);
        self.push(start, end, positions);
    }

    /// Appends a copy of `m`: a valuation if it carries labels, else a complex
    /// event, with its measures.
    pub fn push_match(&mut self, m: MatchRef<'_, P>) {
        if !m.measures.is_empty() {
            self.measure_width = m.measures.len();
            self.measures.extend_from_slice(m.measures);
        }
        if m.labels.is_empty() {
            self.push(m.start, m.end, m.positions);
        } else {
            self.push_labelled(m.start, m.end, m.positions, m.labels);
        }
    }

    /// Measures per output (0 for a query without measures).
    pub fn measure_width(&self) -> usize {
        self.measure_width
    }

    /// The capture labels of all positions, parallel to the positions (empty
    /// unless the evaluation has captures on).
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// Takes the complex events out, leaving an empty buffer with room for a quarter
    /// more than were taken. Successive batches of one stream are usually alike,
    /// and starting the next one at that size spares it growing (and copying)
    /// every column again.
    pub fn take_presized(&mut self) -> MatchBuffer<P> {
        let mut next = MatchBuffer { count_only: self.count_only, ..MatchBuffer::<P>::empty() };
        let room = |n: usize| n + n / 4;
        // Failing to reserve is harmless here: the next push grows the buffer as usual.
        let _ = next.starts.try_reserve_exact(room(self.starts.len()));
        let _ = next.ends.try_reserve_exact(room(self.ends.len()));
        let _ = next.offsets.try_reserve_exact(room(self.offsets.len()));
        let _ = next.positions.try_reserve_exact(room(self.positions.len()));
        let _ = next.labels.try_reserve_exact(room(self.labels.len()));
        let _ = next.measures.try_reserve_exact(room(self.measures.len()));
        std::mem::replace(self, next)
    }

    /// Converts the buffer into an Arrow record batch without copying its vectors:
    /// `match_id` (UInt64, numbered from `first_id`), `start`, `end` (UInt64, or
    /// UInt32 for a `MatchBuffer<u32>`) and `positions` (LargeList of the same).
    pub fn into_record_batch(mut self, first_id: u64) -> RecordBatch {
        // The batch keeps its vectors' allocations: give back the room they grew
        // into but did not use (pre-mapped pages when the output is large; for an
        // allocation that large, shrinking remaps it instead of copying).
        self.starts.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.offsets.shrink_to_fit();
        self.positions.shrink_to_fit();
        let n = self.len() as u64;
        // Millions of ids are fresh memory: map its pages in one call first.
        let mut id_values = Vec::with_capacity(self.len());
        crate::memory::prefault_spare(&mut id_values);
        id_values.extend(first_id..first_id + n);
        let ids = UInt64Array::new(ScalarBuffer::from(id_values), None);
        let starts = PrimitiveArray::<P::Arrow>::new(ScalarBuffer::from(self.starts), None);
        let ends = PrimitiveArray::<P::Arrow>::new(ScalarBuffer::from(self.ends), None);
        let len = self.offsets.len();
        // u64 offsets reinterpreted as i64: same size, and they are far below 2^63.
        let offsets = OffsetBuffer::new(ScalarBuffer::<i64>::new(Buffer::from_vec(self.offsets), 0, len));
        let values = Arc::new(PrimitiveArray::<P::Arrow>::new(ScalarBuffer::from(self.positions), None));
        let position_type = <P::Arrow as arrow_array::ArrowPrimitiveType>::DATA_TYPE;
        let item = Arc::new(Field::new("item", position_type.clone(), false));
        let positions = LargeListArray::new(item.clone(), offsets, values, None);
        let schema = Arc::new(Schema::new(vec![
            Field::new("match_id", DataType::UInt64, false),
            Field::new("start", position_type.clone(), false),
            Field::new("end", position_type, false),
            Field::new("positions", DataType::LargeList(item), false),
        ]));
        let columns: Vec<ArrayRef> = vec![Arc::new(ids), Arc::new(starts), Arc::new(ends), Arc::new(positions)];
        RecordBatch::try_new(schema, columns).expect("columns match the schema")
    }

    /// As [`MatchBuffer::into_record_batch`], for a captures-on output, plus a
    /// column `variables` parallel to `positions`: for each position, the names of
    /// the variables that captured it (`large_list<large_list<dictionary<int32, utf8>>>`;
    /// `names[l]` are the names of label `l`, see
    /// [`crate::CompiledQuery::capture_names`]).
    pub fn into_record_batch_with_variables(mut self, first_id: u64, names: &[Vec<String>]) -> RecordBatch {
        use arrow_array::{Array, DictionaryArray, Int32Array, StringArray};
        // The dictionary: every name once; per label, the keys of its names.
        let mut dict: Vec<&str> = Vec::new();
        let keys_of: Vec<Vec<i32>> = names
            .iter()
            .map(|set| {
                set.iter()
                    .map(|n| match dict.iter().position(|d| d == n) {
                        Some(i) => i as i32,
                        None => {
                            dict.push(n);
                            (dict.len() - 1) as i32
                        }
                    })
                    .collect()
            })
            .collect();
        let labels = std::mem::take(&mut self.labels);
        let batch = self.into_record_batch(first_id);
        // Fresh memory, sized exactly and mapped in one call (see `memory.rs`).
        let total: usize = labels.iter().map(|&l| keys_of[l as usize].len()).sum();
        let mut inner_offsets = Vec::with_capacity(labels.len() + 1);
        crate::memory::prefault_spare(&mut inner_offsets);
        let mut keys = Vec::with_capacity(total);
        crate::memory::prefault_spare(&mut keys);
        inner_offsets.push(0i64);
        for &l in &labels {
            keys.extend_from_slice(&keys_of[l as usize]);
            inner_offsets.push(keys.len() as i64);
        }
        drop(labels);
        // The outer offsets are those of `positions`, shared, not copied.
        let outer = batch
            .column(3)
            .as_any()
            .downcast_ref::<LargeListArray>()
            .expect("positions is a large list")
            .offsets()
            .clone();
        let values = Arc::new(StringArray::from(dict));
        let dictionary = DictionaryArray::new(Int32Array::from(keys), values);
        let item_type = dictionary.data_type().clone();
        let item = Arc::new(Field::new("item", item_type, false));
        let inner =
            LargeListArray::new(item, OffsetBuffer::new(ScalarBuffer::from(inner_offsets)), Arc::new(dictionary), None);
        let inner_field = Arc::new(Field::new("item", inner.data_type().clone(), false));
        let variables = LargeListArray::new(inner_field.clone(), outer, Arc::new(inner), None);
        let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new("variables", DataType::LargeList(inner_field), false));
        let mut columns = batch.columns().to_vec();
        columns.push(Arc::new(variables));
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("columns match the schema")
    }

    /// Adds `n` complex events with `positions` data positions to the counts.
    pub(crate) fn add_counts(&mut self, n: u64, positions: u64) {
        self.counted += n;
        self.counted_positions += positions;
    }

    /// Removes repeated complex events among those from index `first` on,
    /// keeping the first occurrence of each.
    pub fn dedupe_from(&mut self, first: usize) {
        let mut seen = std::collections::HashSet::new();
        let mut kept = MatchBuffer::<P>::empty();
        for i in first..self.len() {
            let m = self.get(i);
            let mut key = Vec::new();
            m.measures.iter().for_each(|v| crate::residual::measure_key(v, &mut key));
            if seen.insert((m.start, m.positions.to_vec(), m.labels.to_vec(), key)) {
                kept.push_match(m);
            }
        }
        self.truncate(first);
        for m in kept.iter() {
            self.push_match(m);
        }
    }

    /// Keeps the first `n` complex events.
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len() {
            return;
        }
        self.starts.truncate(n);
        self.ends.truncate(n);
        self.offsets.truncate(n + 1);
        self.positions.truncate(self.offsets[n] as usize);
        if !self.labels.is_empty() {
            self.labels.truncate(self.offsets[n] as usize);
        }
        self.measures.truncate(n * self.measure_width);
    }

    /// Starts a complex event; false when there is no memory for it.
    #[inline]
    pub(crate) fn begin(&mut self, start: u64, end: u64) -> bool {
        if self.count_only {
            self.counted += 1;
            return true;
        }
        if (full(&self.starts) || full(&self.ends) || full(&self.offsets)) && !self.make_room_for_event() {
            self.overflow = true;
            return false;
        }
        self.starts.push(P::narrow(start));
        self.ends.push(P::narrow(end));
        true
    }

    /// Adds a data position to the complex event being built; false when there
    /// is no memory for it.
    #[inline]
    pub(crate) fn push_position(&mut self, p: u64) -> bool {
        if self.count_only {
            self.counted_positions += 1;
            return true;
        }
        if full(&self.positions) && !grow(&mut self.positions, self.whole) {
            self.overflow = true;
            return false;
        }
        self.positions.push(P::narrow(p));
        true
    }

    /// Adds the measures of the output being built (between `begin` and `finish`);
    /// false when there is no memory for them.
    #[inline]
    pub(crate) fn push_measures(&mut self, values: &[crate::value::Value]) -> bool {
        if self.count_only || values.is_empty() {
            return true;
        }
        if self.measures.try_reserve(values.len()).is_err() {
            self.overflow = true;
            return false;
        }
        self.measure_width = values.len();
        self.measures.extend_from_slice(values);
        true
    }

    /// Adds a data position and its capture label, given as a node's position word
    /// (label above [`crate::cea::LABEL_SHIFT`]); false when there is no memory.
    #[inline]
    pub(crate) fn push_labelled_position(&mut self, word: u64) -> bool {
        if self.count_only {
            self.counted_positions += 1;
            return true;
        }
        if full(&self.labels) && !grow(&mut self.labels, self.whole) {
            self.overflow = true;
            return false;
        }
        self.labels.push((word >> crate::cea::LABEL_SHIFT) as u32);
        self.push_position(word & crate::cea::POSITION_MASK)
    }

    /// Appends one complex event of `own.is_some() as usize + rest` data positions:
    /// `own` first if given (a begin node's own position), then `rest` words from
    /// `next`, called exactly `rest` times, in order. With `CAP` the words carry
    /// capture labels (label above [`crate::cea::LABEL_SHIFT`]), stored in the
    /// label column. False when there is no memory for it; nothing is appended then.
    ///
    /// Why not [`MatchBuffer::begin`], one [`MatchBuffer::push_position`] per
    /// position and [`MatchBuffer::finish`]: each push stores into the column's
    /// buffer through a raw pointer, which may alias the column's own length,
    /// capacity and pointer and the counting flag, so the next push reads all of
    /// them again. Here room for the whole event is made once (the enumerator knows
    /// its length) and the positions are written through a local slice: nothing is
    /// re-read per position (callgrind, `seq3_w100` full: see docs/performance.md,
    /// "Back under fc1761e").
    #[inline(always)]
    pub(crate) fn append_event<const CAP: bool>(
        &mut self,
        start: u64,
        end: u64,
        own: Option<u64>,
        rest: usize,
        mut next: impl FnMut() -> u64,
    ) -> bool {
        let n = own.is_some() as usize + rest;
        if self.count_only {
            self.counted += 1;
            self.counted_positions += n as u64;
            return true;
        }
        if (full(&self.starts)
            || full(&self.ends)
            || full(&self.offsets)
            || spare(&self.positions) < n
            || (CAP && spare(&self.labels) < n))
            && !self.make_room_for(n, CAP)
        {
            self.overflow = true;
            return false;
        }
        self.starts.push(P::narrow(start));
        self.ends.push(P::narrow(end));
        let at = self.positions.len();
        let slots = &mut self.positions.spare_capacity_mut()[..n];
        if CAP {
            let labelled = self.labels.len();
            let labels = &mut self.labels.spare_capacity_mut()[..n];
            let mut pairs = slots.iter_mut().zip(labels.iter_mut());
            let put = |(slot, label): (&mut MaybeUninit<P>, &mut MaybeUninit<u32>), w: u64| {
                label.write((w >> crate::cea::LABEL_SHIFT) as u32);
                slot.write(P::narrow(w & crate::cea::POSITION_MASK));
            };
            if let Some(w) = own {
                // `n >= 1` here, so there is a first pair.
                if let Some(pair) = pairs.next() {
                    put(pair, w);
                }
            }
            for pair in pairs {
                put(pair, next());
            }
            // SAFETY: the loop above wrote each of the `n` label slots past
            // `labelled`, which are within the capacity (`spare` checked above).
            unsafe { self.labels.set_len(labelled + n) };
        } else {
            let mut slots = slots.iter_mut();
            if let Some(w) = own {
                // `n >= 1` here, so there is a first slot.
                if let Some(slot) = slots.next() {
                    slot.write(P::narrow(w));
                }
            }
            for slot in slots {
                slot.write(P::narrow(next()));
            }
        }
        // SAFETY: the loops above wrote each of the `n` position slots past `at`,
        // which are within the capacity (`spare` checked above).
        unsafe { self.positions.set_len(at + n) };
        self.offsets.push((at + n) as u64);
        true
    }

    /// Room for one more complex event of `n` positions (and `n` labels when
    /// `labels`): the cold part of [`MatchBuffer::append_event`].
    #[cold]
    #[inline(never)]
    fn make_room_for(&mut self, n: usize, labels: bool) -> bool {
        let whole = self.whole;
        self.make_room_for_event()
            && room(&mut self.positions, n, whole)
            && (!labels || room(&mut self.labels, n, whole))
    }

    /// Room for one more complex event in each per-event column (the cold part
    /// of [`MatchBuffer::begin`]).
    #[cold]
    fn make_room_for_event(&mut self) -> bool {
        let whole = self.whole;
        (!full(&self.starts) || grow(&mut self.starts, whole))
            && (!full(&self.ends) || grow(&mut self.ends, whole))
            && (!full(&self.offsets) || grow(&mut self.offsets, whole))
    }

    #[inline]
    pub(crate) fn finish(&mut self) {
        if !self.count_only {
            self.offsets.push(self.positions.len() as u64);
        }
    }
}

/// Below this size an output buffer doubles when full: glibc serves allocations up
/// to 32 MiB from its heap once larger blocks were freed, and there growing may
/// copy the buffer.
const DOUBLING_BYTES: usize = 32 << 20;

/// A column of a whole output ([`MatchBuffer::for_whole_output`]) that outgrows
/// this size moves to room for [`DOUBLING_BYTES`] instead of doubling further.
const MAPPED_FROM_BYTES: usize = 256 << 10;

/// True when `v` has no room for one more element. Output is the one thing that
/// grows with the answer, not the window, so growing reports allocation failure
/// instead of aborting; and the flag that shapes growth is only read on that cold
/// path, which keeps the per-match test to one comparison per column.
#[inline(always)]
fn full<T>(v: &Vec<T>) -> bool {
    v.len() == v.capacity()
}

/// Free slots in `v`: [`MatchBuffer::append_event`] makes room for a whole complex
/// event at once.
#[inline(always)]
fn spare<T>(v: &Vec<T>) -> usize {
    v.capacity() - v.len()
}

/// Room in `v` for `n` more elements: the usual growth of [`grow`], and exactly
/// enough for a complex event longer than that; false when the memory cannot be
/// obtained.
fn room<T>(v: &mut Vec<T>, n: usize, whole: bool) -> bool {
    spare(v) >= n || (grow(v, whole) && (spare(v) >= n || v.try_reserve_exact(n).is_ok()))
}

/// Grows `v` and maps the new pages at once: a large output is mostly fresh memory
/// (see `memory.rs`). Up to [`DOUBLING_BYTES`] the buffer doubles, because the
/// allocator may copy a buffer of that size when it grows; beyond it the buffer
/// grows by an eighth, which keeps the mapped but unused memory small, and large
/// buffers are moved by the allocator's remapping, not copied. A column of a
/// whole output jumps from [`MAPPED_FROM_BYTES`] straight to [`DOUBLING_BYTES`],
/// and that room is not mapped ahead: it is only address space until written, so
/// an output that stops soon after costs no more pages than it uses.
#[cold]
fn grow<T>(v: &mut Vec<T>, whole: bool) -> bool {
    let size = std::mem::size_of::<T>();
    let bytes = v.len() * size;
    if whole && (MAPPED_FROM_BYTES..DOUBLING_BYTES).contains(&bytes) {
        return v.try_reserve_exact(DOUBLING_BYTES / size + 1024 - v.len()).is_ok();
    }
    let more = if bytes < DOUBLING_BYTES { v.len() } else { v.len() / 8 };
    if v.try_reserve_exact(more.max(1024)).is_err() {
        return false;
    }
    crate::memory::prefault_spare(v);
    true
}

#[cfg(test)]
mod tests {
    use super::MatchBuffer;

    #[test]
    fn a_whole_output_moves_to_its_own_mapping_past_256_kib_and_keeps_its_events() {
        let (mut whole, mut plain) = (MatchBuffer::<u32>::for_whole_output(), MatchBuffer::<u32>::empty());
        for i in 0..200_000u64 {
            for out in [&mut whole, &mut plain] {
                // As the enumerator appends them.
                assert!(out.begin(i, i + 1) && out.push_position(i) && out.push_position(i + 1));
                out.finish();
            }
        }
        assert_eq!(whole.iter().collect::<Vec<_>>(), plain.iter().collect::<Vec<_>>());
        // 400,000 positions (1.6 MB) are past the jump: room for 32 MiB of u32.
        assert!(whole.positions.capacity() >= (32 << 20) / 4, "{}", whole.positions.capacity());
        assert!(plain.positions.capacity() < (32 << 20) / 4);
        let mut small = MatchBuffer::<u32>::for_whole_output();
        assert!(small.begin(1, 2) && small.push_position(1) && small.push_position(2));
        small.finish();
        assert!(small.positions.capacity() < 1 << 16, "a small output stays small");
    }

    #[test]
    fn append_event_writes_as_the_pushes_do_and_grows_for_long_events() {
        let (mut reserved, mut pushed) = (MatchBuffer::<u32>::for_whole_output(), MatchBuffer::<u32>::empty());
        // Events of 1 to 3,000 positions: longer than one growth step of an empty column.
        for (i, n) in [1u64, 3, 2_999, 2, 3_000, 1].into_iter().enumerate() {
            let i = i as u64;
            let mut k = i;
            assert!(reserved.append_event::<false>(i, i + n, Some(i), n as usize - 1, || {
                k += 1;
                k
            }));
            assert!(pushed.begin(i, i + n) && (i..i + n).all(|p| pushed.push_position(p)));
            pushed.finish();
        }
        assert_eq!(reserved.iter().collect::<Vec<_>>(), pushed.iter().collect::<Vec<_>>());
        let mut none = MatchBuffer::new();
        assert!(none.append_event::<false>(4, 4, None, 0, || unreachable!("no position to write")));
        assert_eq!(none.get(0).positions, &[] as &[u64]);
    }

    #[test]
    fn append_event_with_captures_splits_labels_and_counting_only_counts() {
        use crate::cea::LABEL_SHIFT;
        let mut out = MatchBuffer::new();
        let words = [3 | 1 << LABEL_SHIFT, 5, 9 | 2 << LABEL_SHIFT];
        let mut rest = words[1..].iter();
        assert!(out.append_event::<true>(3, 9, Some(words[0]), 2, || *rest.next().unwrap()));
        let mut rest = words.iter();
        assert!(out.append_event::<true>(3, 9, None, 3, || *rest.next().unwrap()));
        for i in 0..2 {
            assert_eq!(out.get(i).positions, &[3, 5, 9]);
            assert_eq!(out.get(i).labels, &[1, 0, 2]);
        }
        let mut counting = MatchBuffer::counting();
        assert!(counting.append_event::<true>(3, 9, Some(words[0]), 2, || unreachable!("counting writes nothing")));
        assert_eq!((counting.total(), counting.total_positions()), (1, 3));
    }

    #[test]
    fn take_presized_moves_the_events_and_leaves_an_empty_buffer_with_room() {
        let mut out = MatchBuffer::new();
        for i in 0..100u64 {
            out.push(i, i + 2, &[i, i + 1, i + 2]);
        }
        let taken = out.take_presized();
        assert_eq!(taken.len(), 100);
        assert_eq!(taken.get(99).positions, &[99, 100, 101]);
        assert!(out.is_empty() && out.positions.is_empty() && out.offsets == [0]);
        assert!(out.starts.capacity() >= 100 && out.positions.capacity() >= 300);
        out.push(7, 9, &[7, 9]);
        assert_eq!(out.get(0).positions, &[7, 9]);
        let mut counting = MatchBuffer::counting();
        counting.take_presized();
        assert!(counting.is_counting(), "the buffer left behind keeps counting");
    }
}
