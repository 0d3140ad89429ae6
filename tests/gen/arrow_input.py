"""Cases over columnar input: the events as an Arrow table with varied column types."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List

from .case import Case
from .differential import check_match_events, compile_engine


def to_arrow(events: List[Dict[str, Any]], rnd=None):
    """The events as a pyarrow Table (one column per key, NULL where a row lacks it), or None
    when some column mixes types Arrow cannot hold in one column. An all-NULL column is left out
    (the attribute is then absent). With ``rnd`` (a random.Random), column types vary: int32 /
    float32 where the values fit, large_string, dictionary-encoded strings. Compare with the
    oracle on ``table.to_pylist()`` (ints of a column that also holds floats become floats
    there, float32 values are rounded, as in the table)."""
    import pyarrow as pa

    def pick(options):
        return options[0] if rnd is None else rnd.choice(options)

    cols: List[str] = ["type"]
    for e in events:
        for k in e:
            if k not in cols:
                cols.append(k)
    arrays = {}
    for c in cols:
        vals = [e.get(c) for e in events]
        nn = [x for x in vals if x is not None]
        if not nn:
            if c == "type":
                arrays[c] = pa.array(vals, type=pa.string())
            continue
        if all(isinstance(x, bool) for x in nn):
            arr = pa.array(vals, type=pa.bool_())
        elif all(isinstance(x, int) and not isinstance(x, bool) for x in nn):
            small = all(-2 ** 31 <= x < 2 ** 31 for x in nn)
            arr = pa.array(vals, type=pick([pa.int64(), pa.int32()] if small else [pa.int64()]))
        elif all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in nn):
            vals = [None if x is None else float(x) for x in vals]
            arr = pa.array(vals, type=pick([pa.float64(), pa.float32()]))
        elif all(isinstance(x, str) for x in nn):
            kind = pick(["string", "large_string", "dictionary"])
            if kind == "dictionary":
                arr = pa.array(vals, type=pa.string()).dictionary_encode()
            else:
                arr = pa.array(vals, type=pa.string() if kind == "string" else pa.large_string())
        else:
            return None
        arrays[c] = arr
    return pa.table(arrays)


def columnar(case: Case, rnd=None):
    """(table, case over the table's rows) or None; see to_arrow."""
    table = to_arrow(case.events, rnd)
    if table is None:
        return None
    return table, dataclasses.replace(case, events=table.to_pylist())


def run_engine_arrow(case: Case, table):
    """run_engine, with the events given as an Arrow table (or RecordBatch)."""
    import ceql
    from conftest import as_triples

    c = compile_engine(case)
    if c[0] != "ok":
        return c
    try:
        matches = c[1].run(table, **case.engine_kwargs())
        check_match_events(matches, case.events, arrow=True)
        return ("ok", as_triples(matches))
    except ceql.CeqlInternalError:
        raise
    except ceql.CeqlEventError:
        return ("event",)
