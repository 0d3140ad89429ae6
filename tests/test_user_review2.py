"""Findings of a second user review (an Esper / MATCH_RECOGNIZE user porting patterns).
Expected values are derived by hand from docs/language.md, never from the engine."""

import pytest

import ceql

ORDERS = [
    {"type": "ORDER", "id": 1, "amt": 150, "t": 0},  # large, never paid: reported
    {"type": "ORDER", "id": 2, "amt": 50, "t": 5},  # small: filtered out
    {"type": "ORDER", "id": 3, "amt": 200, "t": 10},  # large, paid at 20 s (< 40 s): cancelled
    {"type": "PAYMENT", "id": 3, "t": 20},
    {"type": "PING", "id": 0, "t": 100},  # passes every deadline (30, 35, 40 s)
]


@pytest.mark.parametrize(
    "where, fix",
    [
        ("ORDER AS o ; ABSENT(PAYMENT) FOR 30 seconds FILTER o[amt >= 100]", "(ψ FILTER θ)"),
        ("(ORDER AS o ; ABSENT(PAYMENT) FOR 30 seconds) FILTER o[amt >= 100]", "(ψ FILTER θ)"),
        ("(ORDER AS o ; ABSENT(PAYMENT) FOR 30 seconds) AS x", "(ψ) AS x"),
    ],
)
def test_a_filter_after_a_trailing_absence_says_where_it_goes(where, fix):
    """docs/language.md#s3-3b: FILTER and AS bind looser than `;`, so after the trailing
    absence they make it no longer end the formula; E0303 names them and the rewrite."""
    with pytest.raises(ceql.CeqlError) as e:
        ceql.compile(f"SELECT * FROM Shop WHERE {where} PARTITION BY [id] WITHIN 1 minute")
    assert e.value.code == "E0303"
    assert "follows `ABSENT(...) FOR d`" in str(e.value) and fix in str(e.value)


def test_the_rewrite_with_the_filter_before_the_absence():
    q = ceql.compile("SELECT * FROM Shop WHERE (ORDER AS o FILTER o[amt >= 100]) ; ABSENT(PAYMENT) FOR 30 seconds "
                     "PARTITION BY [id] WITHIN 1 minute")
    # Only order 1 (position 0) is large and unpaid by its deadline.
    assert [m.positions for m in q.run(ORDERS, time_field="t", time_unit="s")] == [(0,)]


def test_the_rewrite_with_a_filter_between_events_before_the_absence():
    events = [
        {"type": "ORDER", "id": 1, "amt": 100, "t": 0},
        {"type": "PAYMENT", "id": 1, "amt": 100, "t": 5},  # covers order 1, never shipped
        {"type": "ORDER", "id": 2, "amt": 100, "t": 6},
        {"type": "PAYMENT", "id": 2, "amt": 40, "t": 7},  # does not cover order 2
        {"type": "PING", "id": 0, "t": 100},
    ]
    q = ceql.compile("SELECT * FROM Shop WHERE (ORDER AS o ; PAYMENT AS p FILTER p[amt >= o.amt]) ; "
                     "ABSENT(SHIP) FOR 30 seconds PARTITION BY [id] WITHIN 1 minute")
    assert [m.positions for m in q.run(events, time_field="t", time_unit="s")] == [(0, 1)]


@pytest.mark.parametrize(
    "where, label",
    [
        ("A FILTER A[minute > 5]", "`minute` is a reserved word: write `` `minute` ``"),
        ("A AS last", "`last` is a reserved word"),
        ("A FILTER A[last > 5]", "for an attribute named `last`, write `` `last` ``"),
        ("B*", "CEQL has no `*`, `?` or `{n,m}`"),
        ("B{2,3}", "docs/guide/patterns.md#quantifiers"),
        ("A WITHIN 10 min", "time units: MILLISECOND(S) or MS, SECOND(S), MINUTE(S), HOUR(S), DAY(S)"),
        ("A AS a ; B FILTER B[v > count(a.v)]", "count takes a variable"),
        ("A ; B FILTER B[PREV(B.v) > 1]", "PREV takes an attribute of the filtered event"),
        ("A AS a ; B FILTER B[v > avg(a)]", "`avg` takes an attribute of a variable"),
    ],
)
def test_a_syntax_error_says_what_was_meant(where, label):
    """The reviewer's syntax errors whose caret said only 'unexpected token'."""
    with pytest.raises(ceql.CeqlSyntaxError) as e:
        ceql.compile(f"SELECT * FROM S WHERE {where}")
    assert e.value.code == "E0100" and label in str(e.value)


def test_a_reserved_word_in_backquotes_is_a_name():
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[`minute` > 5 AND `last` < 3]")
    assert [m.positions for m in q.run([{"type": "A", "minute": 6, "last": 1}, {"type": "A", "minute": 5}])] == [(0,)]


@pytest.mark.parametrize(
    "where, warned",
    [
        ("SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER e[price > avg(b.price)]", True),  # the reviewer's query
        ("SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER e[price > s.price]", True),  # every b subset is tested
        ("SELL AS s ; BUY+ ; SELL AS e FILTER e[price > avg(BUY.price)]", True),
        ("SELL AS s : (BUY AS b):+ : SELL AS e FILTER e[price > avg(b.price)]", False),  # one valuation per run
        ("((BUY AS b ; SELL AS s) FILTER s[price > b.price])+", False),  # tested per iteration
        ("SELL AS s ; (BUY AS b)+ ; SELL AS e FILTER b[price > 3]", False),  # reads one event: in the automaton
    ],
)
def test_w0406_warns_of_a_filter_tested_on_every_valuation_of_an_iteration(where, warned):
    """docs/language.md#s3-4a: a filter that reads other events over an iteration that
    skips events is tested on up to 2^n valuations per event; the compiler says so."""
    q = ceql.compile(f"SELECT * FROM S WHERE {where} WITHIN 30 seconds")
    assert ("W0406" in [w.code for w in q.warnings]) == warned
