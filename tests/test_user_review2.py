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
