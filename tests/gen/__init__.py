"""Hypothesis strategies for the differential tests: random well-formed CEQL queries and
matching random event streams (and, on request, ill-formed queries).

The generator builds a small formula tree (:mod:`gen.formulas`, :mod:`gen.trees`), computes
``bindable`` (docs/language.md#s4-2) for every sub-formula so that each ``FILTER`` only names
variables the filtered sub-formula can bind, and renders the tree to text with the fewest
parentheses that keep the intended tree under the precedence rules of docs/language.md#s2-3 (or, at random,
with more parentheses than needed; :mod:`gen.rendering`). :func:`cel_shape` /
:func:`oracle_shape` let a test check that the rendered text parses back to the intended
tree.

Entry point: :func:`cases` returns a strategy of :class:`Case` for a :class:`Profile`
(which features are switched on; :func:`profile` gives the named ones). The selection
strategy keyword is a parameter of the profile (``Profile.strategies``).
:func:`run_oracle`, :func:`run_engine` and :func:`check_outcomes` make the differential
check; :func:`columnar` gives a case over an Arrow table.

One module per concern: schemas, known_bugs, profiles, trees, rendering, shapes,
predicates, formulas, case, event_streams, static_errors, queries (the entry point),
differential and arrow_input. The tests use the names re-exported here.
"""

from .arrow_input import columnar, run_engine_arrow, to_arrow
from .case import Case
from .differential import (
    check_match_events,
    check_outcomes,
    compile_engine,
    outcome_label,
    run_engine,
    run_oracle,
)
from .known_bugs import KNOWN_BUGS, KNOWN_PANICS, avoid, is_known_panic
from .profiles import ALL_STRATEGIES, PROFILES, Profile, profile
from .queries import cases
from .schemas import SCHEMA, SCHEMA_MULTI, SCHEMA_PRIMARY_TIME, TYPES
from .shapes import cel_shape, oracle_shape

__all__ = [
    "ALL_STRATEGIES",
    "Case",
    "KNOWN_BUGS",
    "KNOWN_PANICS",
    "PROFILES",
    "Profile",
    "SCHEMA",
    "SCHEMA_MULTI",
    "SCHEMA_PRIMARY_TIME",
    "TYPES",
    "avoid",
    "cases",
    "cel_shape",
    "check_match_events",
    "check_outcomes",
    "columnar",
    "compile_engine",
    "is_known_panic",
    "oracle_shape",
    "outcome_label",
    "profile",
    "run_engine",
    "run_engine_arrow",
    "run_oracle",
    "to_arrow",
]
