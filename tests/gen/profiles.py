"""Profiles: which features the generated queries use, and the named profiles of the tests."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, Tuple

from .schemas import MULTI_DECL, TYPES


@dataclass(frozen=True)
class Profile:
    """Which features the generated queries use."""

    schema: bool = False  # declared schema (CREATE STREAM) or open mode
    max_depth: int = 3  # formula depth (≤ 4)
    ops: Tuple[str, ...] = (";", ":", "OR", "+", ":+", "AS")
    qualified: bool = True  # S>A atoms / filter variables / SELECT items
    not_: bool = False  # NOT(A), NOT(A FILTER A[...])
    filters: bool = False  # FILTER on sub-formulas
    pred_depth: int = 2
    projection: bool = False  # SELECT NONE / variable list (else always *)
    windows: Tuple[str, ...] = ()  # subset of ("events", "attr", "time")
    partition: bool = False
    consume: bool = False
    limit: bool = False
    from_clause: bool = True  # sometimes FROM S
    strategies: Tuple[str, ...] = ("", "ALL", "ANY")  # add "NEXT", ... once implemented
    ill_formed: bool = False  # some filters on variables the sub-formula cannot bind (E0301)
    bad_data: bool = False  # open mode: attribute values of unexpected types (data errors)
    other_stream: bool = False  # open mode: events of a stream T (not S)
    max_events: int = 9
    keyword_case: bool = True  # random keyword case
    window_required: bool = False
    multi_stream: bool = False  # FROM S1, S2 (SCHEMA_MULTI with a schema) instead of S
    static_error: bool = False  # inject one static error (syntax, names, types, scope) into the query
    absent: bool = False  # `l ; ABSENT(atomic) ; r` (docs/language.md#s3-3a); off: the draws are unchanged
    conjunction: bool = False  # AND-rooted formulas (gen/conjunction.py, docs/language.md#s3-3c); off: unchanged


def prof_decl(prof) -> Dict[str, frozenset]:
    """The FROM streams of the profile's queries and the types (of A, B, C) each declares."""
    if not prof.multi_stream:
        return {"S": frozenset(TYPES)}
    if prof.schema:
        return dict(MULTI_DECL)
    return {"S1": frozenset(TYPES), "S2": frozenset(TYPES)}


CORE = Profile(max_depth=4, other_stream=True)
FILTERS = Profile(max_depth=3, filters=True, pred_depth=3)
PROJECTION = Profile(max_depth=3, projection=True, filters=True, pred_depth=1)
WINDOWS = Profile(max_depth=3, windows=("events", "attr", "time"), filters=True, pred_depth=1)
PARTITION = Profile(max_depth=3, partition=True, windows=("events", "attr"), filters=True, pred_depth=1)
CONSUME_LIMIT = Profile(max_depth=3, consume=True, limit=True, partition=True, filters=True, pred_depth=1)
NOT = Profile(max_depth=3, not_=True, filters=True, pred_depth=2, ops=(";", ":", "OR", "+", ":+", "AS"))
MIXED = Profile(max_depth=4, not_=True, filters=True, pred_depth=2, projection=True,
                windows=("events", "attr", "time"), partition=True, consume=True, limit=True,
                other_stream=True)
ILL_FORMED = Profile(max_depth=3, not_=True, filters=True, pred_depth=1, projection=True, ill_formed=True,
                     bad_data=True)

DATA_ERRORS = Profile(max_depth=2, filters=True, pred_depth=2, not_=True, bad_data=True, partition=True,
                      windows=("events", "attr"), consume=True)
LONG = Profile(max_depth=2, max_events=14, filters=True, pred_depth=1, not_=True, partition=True,
               windows=("events", "attr", "time"), consume=True, limit=True, projection=True)

# long streams (up to 40 events) with formulas whose valuation sets stay polynomial (no `+`),
# always windowed: exercises reclamation (window pruning, retained events) in the engine
LONG_STREAMS = Profile(max_depth=2, max_events=40, ops=(";", ":", "OR", ":+", "AS"), filters=True,
                       pred_depth=1, not_=True, partition=True, windows=("events", "attr", "time"),
                       window_required=True, consume=True, limit=True, projection=True)

ALL_STRATEGIES = ("", "ALL", "ANY", "NEXT", "LAST", "MAX", "STRICT")
STRATEGIES = Profile(max_depth=3, filters=True, pred_depth=1, not_=True, projection=True,
                     windows=("events", "attr", "time"), partition=True, consume=True, limit=True,
                     strategies=("NEXT", "LAST", "MAX", "STRICT"))

MULTI = Profile(max_depth=3, filters=True, pred_depth=1, not_=True, projection=True, multi_stream=True,
                windows=("events", "attr", "time"), partition=True, consume=True, limit=True)

STATIC_ERRORS = Profile(max_depth=2, filters=True, pred_depth=1, not_=True, projection=True,
                        windows=("events", "attr"), partition=True, static_error=True, max_events=4)

# absence between two patterns with every other feature (tests/test_differential_absence.py)
ABSENT = Profile(max_depth=3, absent=True, ops=(";", ";", ";", ":", "OR", "+", ":+", "AS"), not_=True,
                 filters=True, pred_depth=1, projection=True, windows=("events", "attr", "time"), partition=True,
                 consume=True, limit=True, other_stream=True, max_events=12)
# the same formulas, smaller, over longer streams and without the clauses that empty most outputs
ABSENT_CORE = dataclasses.replace(ABSENT, max_depth=2, max_events=14, windows=(), partition=False, consume=False)

# conjunction `l AND r` with every other feature (tests/test_differential_conjunction.py, gen/conjunction.py)
CONJUNCTION = Profile(max_depth=3, conjunction=True, ops=(";", ":", "OR", "+", ":+", "AS", "AND", "AND"),
                      absent=False, not_=True, filters=True, pred_depth=1, projection=True,
                      windows=("events", "attr", "time"), partition=True, consume=True, limit=True,
                      other_stream=True, max_events=12)
# smaller formulas over longer streams, without the clauses that empty most outputs
CONJUNCTION_CORE = dataclasses.replace(CONJUNCTION, max_depth=2, max_events=12, windows=(), partition=False,
                                       consume=False)

PROFILES = {
    "core": CORE,
    "filters": FILTERS,
    "projection": PROJECTION,
    "windows": WINDOWS,
    "partition": PARTITION,
    "consume_limit": CONSUME_LIMIT,
    "not": NOT,
    "mixed": MIXED,
    "ill_formed": ILL_FORMED,
    "data_errors": DATA_ERRORS,
    "long": LONG,
    "strategies": STRATEGIES,
    "long_streams": LONG_STREAMS,
    "multi_stream": MULTI,
    "static_errors": STATIC_ERRORS,
    "absent": ABSENT,
    "absent_core": ABSENT_CORE,
    "conjunction": CONJUNCTION,
    "conjunction_core": CONJUNCTION_CORE,
}


def profile(name: str, schema: bool, **changes) -> Profile:
    p = PROFILES[name]
    p = dataclasses.replace(p, schema=schema, **changes)
    if schema:
        p = dataclasses.replace(p, bad_data=False, other_stream=False)
    return p
