"""Static checks of docs/language.md#s4: every error code of the table, with the exact
location of the caret, and the error classes of the Python API."""

from __future__ import annotations

import pytest

import ceql

SCHEMA = "CREATE STREAM S { EVENT A { v:int, s:string, t:int }, EVENT B { v:int }, EVENT C { v:int } }"

CASES = [
    # code, query, text under the caret, exception class
    ("E0100", "SELECT * FROM S WHERE A ; ; B", ";", ceql.CeqlSyntaxError),
    ("E0101", "SELECT * FROM S WHERE A FILTER A[s LIKE '(']", "'('", ceql.CeqlSyntaxError),
    ("E0101", "SELECT * FROM S WHERE A LIMIT 9223372036854775808", "9223372036854775808", ceql.CeqlSyntaxError),
    ("E0200", "SELECT * FROM T WHERE A", "T", ceql.CeqlNameError),
    ("E0201", "SELECT * FROM S WHERE Q ; B", "Q", ceql.CeqlNameError),
    ("E0202", "SELECT * FROM S WHERE S>D", "S>D", ceql.CeqlNameError),
    ("E0203", "SELECT * FROM S WHERE A FILTER q[v > 1]", "q", ceql.CeqlNameError),
    ("E0204", "SELECT * FROM S WHERE A ; B FILTER B[s = 'x']", "s", ceql.CeqlNameError),
    ("E0205", "SELECT * FROM S WHERE A AS B", "B", ceql.CeqlNameError),
    ("E0206", "SELECT * FROM S WHERE A WITHIN 5 [s]", "5 [s]", ceql.CeqlNameError),
    ("E0206", "SELECT * FROM S WHERE A WITHIN 0 seconds", "0 seconds", ceql.CeqlNameError),
    ("E0207", "SELECT * FROM S WHERE A PARTITION BY [zz]", "zz", ceql.CeqlNameError),
    ("E0300", "SELECT * FROM S WHERE A FILTER A[v = 'x']", "=", ceql.CeqlTypeError),
    ("E0300", "SELECT * FROM S WHERE A FILTER A[s < 'b']", "<", ceql.CeqlTypeError),
    ("E0300", "SELECT * FROM S WHERE A FILTER A[s + 1 > 2]", "+", ceql.CeqlTypeError),
    ("E0300", "SELECT * FROM S WHERE A FILTER A[v LIKE 'x']", "LIKE", ceql.CeqlTypeError),
    ("E0300", "SELECT * FROM S WHERE A FILTER A[v]", "v", ceql.CeqlTypeError),
    ("E0300", "SELECT * FROM S WHERE A FILTER A[v IN {1, 'a'}]", "IN", ceql.CeqlTypeError),
    ("E0301", "SELECT * FROM S WHERE (A FILTER B[v > 5]) ; B", "B", ceql.CeqlTypeError),
    ("E0301", "SELECT * FROM S WHERE A ; NOT(B) ; C FILTER B[v > 1]", "B", ceql.CeqlTypeError),
    ("E0302", "SELECT * FROM S WHERE ABSENT(B) ; C", "ABSENT(B)", ceql.CeqlTypeError),
    ("E0302", "SELECT * FROM S WHERE A ; ABSENT(B)", "ABSENT(B)", ceql.CeqlTypeError),
]


@pytest.mark.parametrize("code,query,caret,cls", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_error_code_location_and_class(code, query, caret, cls):
    with pytest.raises(cls) as info:
        ceql.compile(query, SCHEMA)
    e = info.value
    assert e.code == code
    assert isinstance(e, ceql.CeqlError)
    assert e.line == 1
    assert query[e.column - 1 : e.end_column - 1] == caret, (e.column, e.end_column, str(e))
    # The rendered text shows the code, the location and a caret line.
    text = str(e)
    assert text.startswith(f"error[{code}]")
    assert f"--> query:1:{e.column}" in text
    assert "^" * len(caret) in text


def test_syntax_error_lists_expected_tokens_and_subclasses():
    with pytest.raises(ceql.CeqlSyntaxError) as info:
        ceql.compile("SELECT * FROM S WHERE A ; ; B")
    e = info.value
    assert (e.line, e.column) == (1, 27)
    assert e.message == "expected event type, `(` or NOT, found `;`"
    assert not isinstance(e, ceql.CeqlSemanticError)
    with pytest.raises(ceql.CeqlSemanticError):
        ceql.compile("SELECT * FROM S WHERE (A FILTER B[v > 5]) ; B")


def test_multiline_error_location_and_rendering():
    text = "SELECT * FROM Stock\nWHERE SEL AS s ; BUY AS b"
    schema = "CREATE STREAM Stock { EVENT BUY { price: double }, EVENT SELL { price: double } }"
    with pytest.raises(ceql.CeqlNameError) as info:
        ceql.compile(text, schema)
    assert str(info.value) == (
        "error[E0201]: unknown event type `SEL`\n"
        " --> query:2:7\n"
        "  |\n"
        "2 | WHERE SEL AS s ; BUY AS b\n"
        "  |       ^^^ not declared in any stream of FROM (declared: BUY, SELL)"
    )


def test_schema_errors_point_into_the_schema_text():
    with pytest.raises(ceql.CeqlNameError) as info:
        ceql.compile("SELECT * FROM S WHERE A", "CREATE STREAM S { EVENT A { v:int, v:int } }")
    e = info.value
    assert e.code == "E0209" and e.origin == "schema"
    assert "--> schema:1:" in str(e)
    with pytest.raises(ceql.CeqlNameError) as info:
        ceql.compile("SELECT * FROM S WHERE A", "CREATE STREAM S { EVENT A { v:integerr } }")
    assert info.value.code == "E0209"


def test_from_is_required_with_several_streams():
    schema = "CREATE STREAM S { EVENT A { v:int } } CREATE STREAM T { EVENT A { v:int } }"
    with pytest.raises(ceql.CeqlNameError) as info:
        ceql.compile("SELECT * WHERE A", schema)
    assert info.value.code == "E0208"


def test_warnings_are_collected_with_locations():
    q = ceql.compile("SELECT * FROM S WHERE (A AS x OR B AS y) ; A AS x", SCHEMA)
    codes = [w.code for w in q.warnings]
    assert "W0401" in codes and "W0402" in codes
    w = next(w for w in q.warnings if w.code == "W0401")
    assert w.line == 1 and q.text[w.column - 1 : w.end_column - 1] == "x"
    q = ceql.compile("SELECT * FROM S WHERE (A OR B) AS x FILTER x[s = 'a'] WITHIN 3 EVENTS", SCHEMA)
    assert [w.code for w in q.warnings] == ["W0403"]
    q = ceql.compile("SELECT NEXT * FROM S WHERE A WITHIN 3 EVENTS", SCHEMA, compat_ignore_strategy=True)
    assert [w.code for w in q.warnings] == ["W0404"]


def test_errors_without_schema_are_still_static_when_literals_decide():
    with pytest.raises(ceql.CeqlTypeError):
        ceql.compile("SELECT * FROM S WHERE A FILTER A[s + 1 > 'x']")
    with pytest.raises(ceql.CeqlNameError) as info:
        ceql.compile("SELECT C FROM S WHERE A ; B")
    assert info.value.code == "E0203"


def test_an_integer_too_large_to_print_is_named_by_its_size():
    """Python refuses str() of an int beyond 4,300 digits: the message said
    ``integer <unprintable int object>``. Long ones are shortened."""
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[x > 1]")
    texts = []
    for v in (2**64, -(2**200), 10**5000):
        with pytest.raises(ceql.CeqlEventError) as e:
            q.run([{"type": "A", "x": v}])
        assert e.value.field == "x"
        texts.append(str(e.value))
    assert "integer 18446744073709551616 does not fit in 64 bits" in texts[0]
    assert "integer -1606938044258990275... (61 digits) does not fit" in texts[1]
    assert "integer of 16610 bits does not fit in 64 bits" in texts[2] and "unprintable" not in texts[2]


def test_a_leading_byte_order_mark_is_not_part_of_the_query():
    """Text read with open() from a file saved with a BOM starts with U+FEFF, which
    was E0100 "unexpected token"; the CLI already read query files as utf-8-sig."""
    plain = ceql.compile("SELECT * FROM S WHERE A ; B")
    q = ceql.compile("\ufeffSELECT * FROM S WHERE A ; B", "\ufeffCREATE STREAM S { EVENT A { x: int }, EVENT B { x: int } }")
    events = [{"type": "A", "x": 1}, {"type": "B", "x": 2}]
    assert [m.positions for m in q.run(events)] == [m.positions for m in plain.run(events)] == [(0, 1)]
    with pytest.raises(ceql.CeqlSyntaxError) as e:
        ceql.compile("\ufeffSELECT * FROM S WHERE A ; ; B")
    assert (e.value.line, e.value.column) == (1, 27)


def test_a_like_pattern_with_a_percent_sign_warns_that_it_is_a_regex():
    """W0405 (docs/language.md#s4): SQL users write LIKE 'IB%', which here matches the three
    characters IB% (a user's review); the warning points at the pattern."""
    q = ceql.compile("SELECT * FROM S WHERE A FILTER A[name LIKE 'IB%'] WITHIN 1 EVENTS")
    assert [w.code for w in q.warnings] == ["W0405"]
    assert q.warnings[0].column == 44 and "regular expression" in q.warnings[0].message
    assert q.run([{"type": "A", "name": "IBM"}]) == []  # the warning changes nothing
    assert not ceql.compile("SELECT * FROM S WHERE A FILTER A[name LIKE '^IB'] WITHIN 1 EVENTS").warnings


@pytest.mark.parametrize("text", ["SELECT * FROM S WHERE A ; B WITHIN 5 minutes PARTITION BY [k]",
                                  "SELECT * FROM S WHERE A ; B LIMIT 3 WITHIN 5 EVENTS",
                                  "SELECT * WHERE A FROM S"])
def test_a_clause_out_of_order_says_the_order(text):
    """A SQL or FlinkCEP user writes WITHIN before PARTITION BY: the E0100 caret says the
    clause order (a user's review: it said only 'unexpected token')."""
    with pytest.raises(ceql.CeqlSyntaxError, match="clauses come in this order: SELECT, FROM, WHERE"):
        ceql.compile(text)


@pytest.mark.parametrize("events", [
    [{"event_type": "SELL"}],
    "table",
    "frame",
])
def test_a_missing_type_names_the_column_that_looks_like_it(events):
    """A user's review: a CSV with an event_type column gave only 'no `type` column'; the
    error now says which argument reads it (type_field=, docs/api.md) or what to rename."""
    import pandas as pd
    import pyarrow as pa

    if events == "table":
        events = pa.table({"event_type": ["SELL"]})
    elif events == "frame":
        events = pd.DataFrame({"event_type": ["SELL"]})
    with pytest.raises(ceql.CeqlEventError, match="it has `event_type`: give type_field='event_type', or rename that (column|key) to `type`"):
        ceql.compile("SELECT * FROM S WHERE SELL").run(events)
