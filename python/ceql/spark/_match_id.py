"""``match_id``: a 128-bit hash of a complex event, computed column-wise.

Definition (docs/spark.md, "match_id"). All arithmetic is on unsigned 64-bit
integers modulo 2^64; ``fmix`` is MurmurHash3's 64-bit finalizer.

* Each input row gets two row hashes, Spark's
  ``r0 = xxhash64(k1, ..., kg, t, o1, ..., om)`` and
  ``r1 = xxhash64(CAST(1 AS BIGINT), k1, ..., kg, t, o1, ..., om)``, where ``k``
  are the partition key values, ``t`` the event time in nanoseconds (bigint) and
  ``o`` the order values (Spark's ``xxhash64``, seed 42, read as unsigned). The
  task computes them (``with_row_hashes``, Rust: ceql-engine's ``row_hash``) from
  the columns it holds; for a column type that code does not hash, Spark computes
  them before the shuffle (``_input.prepare``), with the same result.
* The seeds ``q0, q1`` are the first 16 bytes of SHA-256(query text, 0x00,
  schema text), two little-endian integers. A ``kind = 'late'`` row uses
  ``fmix(q0), fmix(q1)`` instead.
* A complex event with interval start row ``s``, end row ``e`` and data rows ``P``
  (``n`` of them) has, per lane L in {0, 1}:
  ``D = sum over p in P of fmix(rL(p))`` and
  ``hL = fmix(qL xor fmix(rL(s) xor fmix(rL(e) xor fmix(D xor n))))``.
* ``match_id`` is ``h0`` then ``h1``, each as 16 lower-case hex digits.
* With ``captures=True`` each data row ``p`` enters ``D`` as ``fmix(rL(p) xor
  cL(p))`` instead, where ``cL(p)`` is the sum of ``fmix(vL(x))`` over the variables
  ``x`` of ``p`` in the output, and ``v0(x), v1(x)`` are the first 16 bytes of
  SHA-256("ceql-variable", 0x00, name of ``x``) as two little-endian integers: two
  valuations of one complex event get different ids.
* With measures (``SELECT a, count(b) AS n``, docs/language.md#s3-5a), each lane
  is then mixed with the measure values, in ``SELECT`` order:
  ``M = 0``, then per measure ``M = fmix(M xor w)``, and finally
  ``hL = fmix(hL xor fmix(M xor k))`` (``k`` measures); ``w`` is ``C_NULL`` for
  NULL, else ``fmix(u)`` with ``u`` the value's 64 bits: an integer's two's
  complement, a double's IEEE bits (-0.0 as 0.0, every NaN as 0x7ff8000000000000),
  a boolean 0 or 1, a string the lane's 8 bytes (first or second) of
  SHA-256("ceql-measure", 0x00, UTF-8 text), little-endian. Two outputs with the
  same events and different measures (docs/language.md#s3-5a) get different ids.

It depends only on the query and on the values of the events that make the
complex event, so a replay, another partitioning, a restart or the streaming path
give the same id.
"""

from __future__ import annotations

import hashlib
from typing import Any, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

#: Hidden columns with the two row hashes (int64: Spark's ``xxhash64`` is a bigint).
H0, H1 = "__ceql_h0", "__ceql_h1"

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S = np.uint64(33)
#: ``w`` of a NULL measure value (the 64-bit golden ratio).
C_NULL = np.uint64(0x9E3779B97F4A7C15)
_CANONICAL_NAN = np.uint64(0x7FF8000000000000)


def fmix(k: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, element-wise on uint64 (wrapping)."""
    k = k ^ (k >> _S)
    k = k * _M1
    k = k ^ (k >> _S)
    k = k * _M2
    return k ^ (k >> _S)


def late_seeds(seeds: Tuple[int, int]) -> Tuple[int, int]:
    """The seeds of ``kind = 'late'`` rows."""
    a = fmix(np.array(seeds, dtype=np.uint64))
    return int(a[0]), int(a[1])


def with_row_hashes(rows: pa.Table, identity: Optional[Sequence[str]]) -> pa.Table:
    """``rows`` with the row-hash columns ``H0, H1`` appended, hashed from its
    ``identity`` columns (keys, time, orders); ``None``: Spark has computed them."""
    if identity is None:
        return rows
    from ceql import _ceql

    hashes = pa.record_batch(_ceql.match_id_row_hashes(rows.select(list(identity)), (H0, H1)))
    return rows.append_column(H0, hashes.column(0)).append_column(H1, hashes.column(1))


def variable_seeds(name: str) -> Tuple[int, int]:
    """``v0, v1`` of a variable name (the label part of a ``captures=True`` id)."""
    digest = hashlib.sha256(b"ceql-variable\x00" + name.encode()).digest()
    return int.from_bytes(digest[0:8], "little"), int.from_bytes(digest[8:16], "little")


def label_hashes(names: Sequence[str], keys: np.ndarray, offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``c0, c1`` per data row of the output: ``keys`` index ``names`` (the variables
    of every data row, row ``i`` having ``keys[offsets[i]:offsets[i + 1]]``)."""
    seeds = np.array([variable_seeds(n) for n in names], dtype=np.uint64).reshape(-1, 2)
    lanes = []
    with np.errstate(over="ignore"):
        for lane_index in (0, 1):
            per_name = fmix(seeds[:, lane_index]) if len(names) else np.zeros(0, dtype=np.uint64)
            summed = np.zeros(len(keys) + 1, dtype=np.uint64)
            np.cumsum(per_name[keys], out=summed[1:])
            lanes.append(summed[offsets[1:]] - summed[offsets[:-1]])
    return lanes[0], lanes[1]


def hex_ids(h0: Any, h1: Any) -> pa.Array:
    """32 hex digits per complex event (``h0`` then ``h1``), as an Arrow string
    column written by ceql-engine's ``match_id_text`` (no Python object per id)."""
    from ceql import _ceql

    lanes = pa.record_batch([pa.array(h0, pa.uint64()), pa.array(h1, pa.uint64())], names=["h0", "h1"])
    return pa.record_batch(_ceql.match_id_hex(lanes)).column(0)


def measure_words(values: pa.Array, lane_index: int) -> np.ndarray:
    """``w`` of every value of one measure column, for lane ``lane_index``."""
    import pyarrow.compute as pc

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    t = values.type
    if pa.types.is_null(t) or n == 0:
        return np.full(n, C_NULL, dtype=np.uint64)
    if pa.types.is_dictionary(t):
        values = values.cast(t.value_type)
        t = values.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        encoded = values.dictionary_encode()
        words = np.array([_string_word(s, lane_index) for s in encoded.dictionary.to_pylist()] or [0], dtype=np.uint64)
        u = words[pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False).astype(np.int64)]
        w = fmix(u)
    elif pa.types.is_floating(t):
        f = pc.fill_null(values.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False).astype(np.float64)
        f = np.where(f == 0.0, 0.0, f)  # -0.0 as 0.0
        u = f.view(np.uint64).copy()
        u[np.isnan(f)] = _CANONICAL_NAN
        w = fmix(u)
    elif pa.types.is_boolean(t):
        w = fmix(pc.fill_null(values, False).to_numpy(zero_copy_only=False).astype(np.uint64))
    else:  # integers (and time stamps, as the engine's int64 nanoseconds)
        ints = pc.fill_null(values.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        w = fmix(ints.view(np.uint64))
    if values.null_count:
        w = np.where(values.is_null().to_numpy(zero_copy_only=False), C_NULL, w)
    return w


def _string_word(text: str, lane_index: int) -> int:
    digest = hashlib.sha256(b"ceql-measure\x00" + text.encode()).digest()
    return int.from_bytes(digest[8 * lane_index : 8 * lane_index + 8], "little")


def mix_measures(h: np.ndarray, measures: Sequence[pa.Array], lane_index: int) -> np.ndarray:
    """``hL`` mixed with the measure values of each complex event (see above)."""
    with np.errstate(over="ignore"):
        m = np.zeros(len(h), dtype=np.uint64)
        for values in measures:
            m = fmix(m ^ measure_words(values, lane_index))
        return fmix(h ^ fmix(m ^ np.uint64(len(measures))))


def match_ids(seeds: Tuple[int, int], rows: pa.Table, base: int, found: pa.RecordBatch,
              labels: Optional[Tuple[np.ndarray, np.ndarray]] = None,
              measures: Sequence[pa.Array] = ()) -> pa.Array:
    """The ``match_id`` column of the complex events ``found`` (the engine's output:
    ``start``, ``end``, ``positions`` as stream positions) whose rows are those of
    ``rows`` (with ``H0, H1``) from stream position ``base`` on; with ``labels``,
    the ``c0, c1`` of each data row (the ids of valuations); with ``measures``, the
    measure columns, in ``SELECT`` order. The lanes are computed in Rust
    (ceql-engine's ``match_id_lanes``)."""
    from ceql import _ceql

    label_table = None
    if labels is not None:
        label_table = pa.table({"c0": pa.array(labels[0], pa.uint64()), "c1": pa.array(labels[1], pa.uint64())})
    lanes = pa.record_batch(_ceql.match_id_lanes(seeds, rows.select([H0, H1]), base, found, label_table))
    if not measures:
        return pa.record_batch(_ceql.match_id_hex(lanes)).column(0)
    h0 = mix_measures(lanes.column(0).to_numpy(), measures, 0)
    h1 = mix_measures(lanes.column(1).to_numpy(), measures, 1)
    return hex_ids(h0, h1)
