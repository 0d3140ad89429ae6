"""Brute-force reference evaluator ("oracle") of CEQL, written from the specification only
(docs/language.md#s1 to #s4 and the docs/language.md#s7 vectors; the [FCEP]/[CORE] papers for background).
It builds no automata: every sub-formula's valuations are computed as explicit sets.

Public API::

    from oracle import evaluate, OracleResult, OracleError
    res = evaluate(query_text, events, *, schema=None, time_field=None, time_unit="ns",
                   compat_ignore_strategy=False, close_deadlines=False, captures=False,
                   data_errors="must")
    res.outputs    # {end position j: O_j}, O_j = set of (start, sorted data positions), pre-LIMIT;
                   # only positions with a non-empty O_j are keys
    res.limit      # LIMIT n of the query, or None
    res.matches()  # sorted [(start, end, positions)] over all O_j (by end, start, positions)

Static errors raise ``OracleError(code)`` (``.code`` is the spec's code: E0100, E0101,
E0200-E0210, E0300-E0305; never E0500). Data errors (incompatible operand types on an actual
event in schema-less mode, docs/language.md#s1-1a, #s3-4a) raise ``OracleEventError`` (code
``"EVENT"``). An input value that rejects the event (docs/language.md#s1-2) raises
``TypeError``: a value of the wrong declared type, a value of an unsupported Python type, an
integer beyond 64 bits (with or without a schema, docs/language.md#s1-1), a ``WITHIN n [a]``
coordinate that is not an integer (docs/language.md#s3-7), and a ``time_field`` value that is
not a finite number or is outside 64-bit nanoseconds, when a duration window reads it
(docs/language.md#s1-4). ``ValueError`` is for the API's own arguments and for note 11.

Modules: ``lexer`` (docs/language.md#s2-1), ``parser`` (docs/language.md#s2-2 to #s2-3), ``nodes`` (AST), ``schema`` (docs/language.md#s1-1),
``checks`` (docs/language.md#s4), ``predicates`` (docs/language.md#s3-4), ``events`` (docs/language.md#s1-2 to #s1-4, #s3-8 keys), ``semantics``
(docs/language.md#s3-2 to #s3-3), ``correlation`` (predicates between events, PREV and aggregates,
docs/design/correlation.md), ``strategies`` (docs/language.md#s3-6), ``evaluate`` (docs/language.md#s3-7, #s3-9 to #s3-11).

Spec notes
==========
Points where the specification is ambiguous or self-contradictory, and the reading taken here
(the one the docs/language.md#s7 vectors support, where they say anything):

1. ``WITHIN n [a]`` bound. §6.1 says ε = n − 1 (exclusive); §3.7, D15 and V47 say inclusive
   ``a(t_j) − a(t_i) ≤ n``. Taken: inclusive. ``A ; B WITHIN 2 [t]`` over A(t=0) B(t=2) matches.
2. ``WITHIN 0 [t]``. The E0206 table calls it an error; docs/language.md#s3-7 and D15 say n ≥ 0. Taken: accepted
   (only equal coordinates). A zero *duration* (``WITHIN 0 SECONDS``) and a duration over i64 ns
   are still E0206, as the table says (§3.7 does not contradict that).
3. Late events, "largest coordinate accepted so far by the query" (docs/language.md#s3-7). Taken as in ON_EVENT
   (docs/language.md#s6-5): the running maximum is updated by every on-time event of the query input, *before* the
   partition key is looked at. ``A ; B PARTITION BY [k] WITHIN 10 [t]`` over A(k=1,t=5),
   Y(no k,t=9), B(k=1,t=7): B is late (7 < 9), no output.
4. Division by zero. §3.4 says "division or remainder by zero → NULL" in the row for numeric
   ``/`` and ``%``; taken for doubles too: ``1.0 / 0`` is NULL (not inf), ``1.5 % 0.0`` is NULL.
5. ``i64::MIN / -1`` overflows → NULL; ``i64::MIN % -1`` is mathematically 0 and gives 0 (the
   spec lists only overflow of ``+ - *`` and division by zero as NULL).
6. NaN. docs/language.md#s3-4 makes a comparison with a NaN operand UNKNOWN; the same is applied to ``IN {...}``,
   ``IN {a..b}`` and ``IN RANGE``: ``v IN {1..2}`` with v = NaN is UNKNOWN.
7. When data errors surface (schema-less, docs/language.md#s1-1a). docs/language.md#s5-3 evaluates every predicate of an event's
   type once per event; the oracle evaluates each filter term ``X[P]`` (no short-circuit inside P)
   on every accepted event that an atom of the filtered sub-formula can store in ``X``, whether or
   not a valuation uses it, and raises OracleEventError on the first mismatch. A NULL operand is
   never a type error (``NULL + 'x'`` is NULL). Without a schema, the IN-list mix of strings and
   numbers (data-independent) is still the static E0300.
8. Names without a schema (docs/language.md#s1-1a "every FROM stream accepts every event type the query names").
   Taken: the known event types are the types of the atoms of WHERE (including inside NOT);
   E0203 for a FILTER/SELECT variable that is neither such a type nor an AS name (so
   ``SELECT C WHERE A ; B`` is E0203 without a schema, while with a schema declaring C it is
   accepted and C is empty); E0205 for an AS name equal to such a type; E0202 for ``S>T`` with S
   not in FROM (any S is accepted when FROM is omitted).
9. Stream membership of input dicts. Positions are list indices (API). An event whose
   ``"stream"`` is not in FROM, or that has no ``"stream"`` while FROM lists several streams, is
   not part of the query input (the engine rejects the second kind unless exactly one FROM
   stream declares its type, docs/language.md#s1-3; the generators never give it one): it
   keeps its index as position but is never matched, does not
   break ``:`` contiguity and does not move the late-event maximum. Without FROM and without a
   schema every event is in the input; ``stream(t)`` is its ``"stream"`` key (None if absent, in
   which case an atom binds only ``T``, not any ``S>T``).
10. With a schema, an event whose type its stream does not declare is not rejected: it is an event
    of that type with no attributes (all NULL). Undeclared supplied attributes are ignored (docs/language.md#s1-2).
11. Time stamps (docs/language.md#s1-4). The event type's ``primary_time`` attribute wins; else ``time_field``
    (converted from ``time_unit``; a float is multiplied in double precision and rounded to the
    nearest nanosecond, halves away from zero). With a
    time-unit window and no time source at all (no ``time_field`` and no event type of the FROM
    streams declaring a ``primary_time``) the spec would use wall-clock time; the oracle raises
    ValueError instead. If some event type of the FROM streams declares a ``primary_time``, an
    event of another type without ``time_field`` has a *missing* time stamp (docs/language.md#s1-4),
    which the oracle treats like a NULL one (below).
    Late events and missing time stamps: the oracle models ``late="drop"`` throughout
    (docs/language.md#s3-7). A NULL or missing time stamp, a NULL ``[a]`` coordinate and a
    coordinate smaller than the running maximum drop the event (it belongs to no substream,
    docs/language.md#s3-1), under ``WITHIN n [a]`` (where the spec always drops) and under
    duration windows alike. The engine's default for duration windows, ``late="error"``
    (``CeqlEventError`` for a late or missing time stamp), is not modelled: differential tests of
    duration windows give time stamps in order, or run the engine with ``late="drop"``.
12. PARTITION BY groups (docs/language.md#s3-8). With a schema, ``key_k`` is the value of the first
    attribute of the group that the event's type *declares*, and the search does not fall
    through a NULL: with ``[w, k]``, an event whose type declares ``w`` and has ``w`` NULL has no
    key, whatever its ``k``. Without a schema an attribute supplied as None and an attribute not
    supplied are the same thing (an Arrow table has every column in every row): the search takes
    the first attribute the event has with a non-NULL value, so ``[w, k]`` over
    ``{"w": None, "k": 1}`` takes the key of ``k`` (1), as over ``{"k": 1}``. (docs/language.md#s1-1a's
    "present ... even if its value is NULL" is overridden here by docs/language.md#s3-8's explicit sentence.)
13. LIKE uses Python's ``re.search``: RE2-only syntax or Python-only constructs (backreferences,
    lookaround; RE2 would report E0101) behave differently. Differential tests should stay in the
    common subset.
14. Strategies (docs/language.md#s3-6) select *valuations*: all valuations with the maximal (K, D) pair are kept
    under NEXT/LAST, so with a projection that tells them apart (``(A AS x) OR (A AS y)`` with
    ``SELECT x``) one end position can still give two complex events.
15. V46/V49: the vectors use the default schema (``t:int``) and ``time_field="t"`` (ns), rather
    than declaring ``t`` as ``primary_time``. V64 prices are given as written (``101`` is a Python
    int for a ``double`` attribute, converted per docs/language.md#s1-1).
16. Data errors of correlated terms (docs/language.md#s3-4a) are deferred: a valuation whose
    test raised is kept with its error, and the error is raised only if the valuation (or one
    built from it) survives the partition, CONSUME BY, the window and, under ``STRICT``,
    contiguity, whatever the strategy then chooses. The spec leaves open the order in which a
    test's conjuncts and choices of events are evaluated (a FALSE stops it): with
    ``data_errors="must"`` (the default) the oracle raises what every order raises (and not
    when a trailing ``ABSENT`` drops the output), with ``"may"`` what some order raises. An
    engine that raises must match "may"; one that does not must match "must", outputs included.
    Measures (docs/language.md#s3-5a) with a trailing ``ABSENT`` are computed when the complex
    event ends: under "may" their data errors are raised also for the outputs the absence
    drops, under "must" only for those it keeps.
17. A trailing ``ABSENT(beta) FOR d`` whose filters read the match (``y.attr``, aggregates;
    docs/language.md#s3-3b "satisfies beta (as for docs/language.md#s3-3a)" with #s3-3a "Absence with a condition
    on the match"; the engine refuses it with E0500). Evaluated, not refused: the absence acts on
    the valuations that give ``O_j``, after the strategy and the window (docs/language.md#s3-3b: they "are applied
    to psi"; the window before the strategy under NEXT/LAST/MAX, docs/language.md#s3-6a, since such a query has a
    filter in an ABSENT that reads other events). A valuation ``V`` ending at ``j`` is cancelled
    iff some later position ``p`` of its substream with ``ts(p) <= ts(j) + d`` has an event of
    beta's type on which beta's filters are TRUE, reading the absent event's own variables (its
    type, ``S>T``, its ``AS`` name) as exactly ``{p}`` and every other variable as ``V`` binds it
    (the for-all of docs/language.md#s3-4a; ``count(a)`` counts ``V``'s ``a``). An output is kept if one of the
    valuations giving it is not cancelled (as docs/language.md#s3-3a keeps a valuation "if one of [the choices]
    passes"). A data error of that test is raised (policy of note 16) for the valuations the
    strategy and the window keep, whether or not the deadline is reached. docs/language.md#s3-3b's remark that the
    absence "depends only on j" and "commutes with every strategy" holds only when beta does not
    read the match.
18. Equalities routed by key (docs/language.md#s3-4b) are not modelled: the oracle tests every
    equality on every valuation (the unrouted for-all of §3.4a, which §3.4b says routing
    preserves) and raises none of routing's own data errors: neither the ``CeqlEventError`` for
    a routing value that is a finite double of magnitude 2^53 or more, nor the one for a routing
    value of another kind than a *held* substream (the holding rule depends on the engine's
    strategy state). tests/test_oracle_routing.py relies on this (it expects matches for a
    double 2^53 in a routed query), so differential tests must not feed a routed query such
    values; the engine's routing errors are tested against the engine directly.
"""

from .errors import OracleError, OracleEventError
from .evaluate import evaluate, OracleResult

__all__ = ["evaluate", "OracleResult", "OracleError", "OracleEventError"]
