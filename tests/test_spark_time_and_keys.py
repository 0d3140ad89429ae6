"""Time values and key groups that used to give silent wrong answers in
ceql.spark (found by an adversarial run, 2026-11-27): a ``timestamp_ntz`` time in
a session time zone's DST gap, decimal times beyond a double's digits, times out of
the engine's range, -0.0 and 0.0 in a key group of mixed types, an integer and a
string of the same text in such a group, a NaN order value escaping the duplicate
check, and key or filter columns of a type the engine cannot read. Every expected
value is worked out by hand in the test."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

pytest.importorskip("pyspark")
pytest.register_assert_rewrite("spark_support")

import spark_support as ss  # noqa: E402

pytest_plugins = ["spark_support"]
pytestmark = pytest.mark.spark

T0 = dt.datetime(2024, 3, 1)
SEQ = "SELECT * FROM S WHERE A ; B"


def ids(out) -> list:
    return sorted(tuple(e.id for e in r.events) for r in out.collect())


def detect(df, query, **kw):
    import ceql.spark as cs

    kw.setdefault("time_field", "ts")
    kw.setdefault("order_field", "off")
    return cs.detect(df, query, **kw)


@pytest.fixture
def tasks(spark):
    """Small inputs in several tasks: AQE would otherwise coalesce the shuffle's
    partitions into one, and one task hides a key split across tasks."""
    before = {k: spark.conf.get(k) for k in ("spark.sql.adaptive.coalescePartitions.enabled", "spark.sql.shuffle.partitions")}
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    yield spark
    for k, v in before.items():
        spark.conf.set(k, v)


@pytest.fixture
def new_york(spark):
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    yield spark
    spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.parametrize("a, b, matched", [
    # 02:30 does not exist in New York on 2024-03-10; as UTC wall time it is 70
    # minutes before 03:40, so no match within 30 minutes.
    (dt.datetime(2024, 3, 10, 2, 30), dt.datetime(2024, 3, 10, 3, 40), False),
    # 02:50 to 03:10: 20 minutes apart as wall times.
    (dt.datetime(2024, 3, 10, 2, 50), dt.datetime(2024, 3, 10, 3, 10), True),
])
def test_timestamp_ntz_is_wall_time_whatever_the_session_zone(new_york, a, b, matched):
    df = new_york.createDataFrame([(0, "A", a, 0, "k"), (1, "B", b, 1, "k")],
                                  "id long, type string, ts timestamp_ntz, off long, key string")
    got = ids(detect(df, "SELECT * FROM S WHERE A ; B PARTITION BY [key] WITHIN 30 minutes"))
    assert got == ([(0, 1)] if matched else [])


def test_decimal_time_keeps_its_nanoseconds(spark):
    # B is 1 ns before A: read in time order, B comes first and `A ; B` has no match
    # (as doubles the two times were equal and the order field put A first).
    df = spark.createDataFrame([(0, "A", decimal.Decimal("1700000000.000000002"), 1),
                                (1, "B", decimal.Decimal("1700000000.000000001"), 2)],
                               "id long, type string, ts decimal(20,9), off long")
    assert ids(detect(df, SEQ + " WITHIN 1 second", time_unit="s")) == []
    # Negative times truncate toward zero: -1.5 s and -1 ns are 1.499999999 s apart.
    df = spark.createDataFrame([(0, "A", decimal.Decimal("-1.5"), 1), (1, "B", decimal.Decimal("-0.000000001"), 2)],
                               "id long, type string, ts decimal(38,12), off long")
    assert ids(detect(df, SEQ + " WITHIN 2 seconds", time_unit="s")) == [(0, 1)]


@pytest.mark.parametrize("unit, late, fits", [
    # 9223372036.5 s = 9223372036500000000 ns < 2^63 - 1 = 9223372036854775807:
    # refused before, when the range was checked on the value rather than its units.
    ("s", "9223372036.5", True),
    ("s", "9223372036.854775807", True),
    ("s", "9223372036.854775808", False),
    ("s", "9223372037", False),
    ("ns", "9223372036854775807.9", True),
    ("ns", "9223372036854775808", False),
])
def test_decimal_time_at_the_64_bit_edge(spark, unit, late, fits):
    """decimal(38, 9) lost the last digit of 9223372036.854775807 (Spark rounds a
    subtraction's result to 8 fraction digits at that precision)."""
    df = spark.createDataFrame([(0, "A", decimal.Decimal("1"), 1), (1, "B", decimal.Decimal(late), 2)],
                               "id long, type string, ts decimal(38,9), off long")
    got = detect(df, SEQ, time_unit=unit)
    if fits:
        assert ids(got) == [(0, 1)]
    else:
        with pytest.raises(Exception, match=r"the time field 'ts' has a value out of range"):
            got.collect()
    # The same at the negative edge, B first: -9223372036.854775808 s is -2^63 ns.
    neg = {"9223372036.5": "-9223372036.5", "9223372036.854775807": "-9223372036.854775808",
           "9223372036.854775808": "-9223372036.854775809", "9223372037": "-9223372037",
           "9223372036854775807.9": "-9223372036854775808.9", "9223372036854775808": "-9223372036854775809"}
    df = spark.createDataFrame([(0, "B", decimal.Decimal(neg[late]), 1), (1, "A", decimal.Decimal("1"), 2)],
                               "id long, type string, ts decimal(38,9), off long")
    got = detect(df, "SELECT * FROM S WHERE B ; A", time_unit=unit)
    if fits:
        assert ids(got) == [(0, 1)]
    else:
        with pytest.raises(Exception, match=r"the time field 'ts' has a value out of range"):
            got.collect()


def test_decimal_time_with_30_fraction_digits_truncates(spark):
    # Both are 999999999 ns once truncated toward zero, so the order field puts A
    # first; rounded, A would be 1 s and come after B.
    df = spark.createDataFrame([(0, "A", decimal.Decimal("0." + "9" * 30), 1), (1, "B", decimal.Decimal("0.999999999"), 2)],
                               "id long, type string, ts decimal(38,30), off long")
    assert ids(detect(df, SEQ, time_unit="s")) == [(0, 1)]
    df = spark.createDataFrame([(0, "A", decimal.Decimal("-0." + "9" * 30), 2), (1, "B", decimal.Decimal("-0.999999999"), 1)],
                               "id long, type string, ts decimal(38,30), off long")
    assert ids(detect(df, "SELECT * FROM S WHERE B ; A", time_unit="s")) == [(1, 0)]


@pytest.mark.parametrize("ansi", ["true", "false"])
@pytest.mark.parametrize("rows, schema, unit", [
    ([(0, "A", dt.datetime(2262, 1, 1), 0), (1, "B", dt.datetime(2300, 1, 1), 1)], "ts timestamp", None),
    ([(0, "A", 10**9, 0), (1, "B", 10**11, 1)], "ts long", "s"),
    ([(0, "A", 1.0, 0), (1, "B", float("nan"), 1)], "ts double", "s"),
    ([(0, "A", 1.0, 0), (1, "B", float("inf"), 1)], "ts double", "s"),
])
def test_time_out_of_range_fails_naming_the_field(spark, ansi, rows, schema, unit):
    """Without ANSI, Spark's arithmetic wrapped the year 2300 around to a time before
    the year 2262, and a NaN became 0: `B ; A` matched although B comes last."""
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        df = spark.createDataFrame(rows, f"id long, type string, {schema}, off long")
        with pytest.raises(Exception, match=r"the time field 'ts' has a value out of range"):
            detect(df, "SELECT * FROM S WHERE B ; A", time_unit=unit).collect()
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


@pytest.mark.parametrize("partitions", [2, 3, 7])
def test_minus_zero_is_zero_in_a_group_of_mixed_types(tasks, partitions):
    """-0.0 and 0.0 are one key (docs/language.md#s3-8), also when the group's other
    column is a string: they were cast to the strings '-0.0' and '0.0' and split."""
    tasks.conf.set("spark.sql.shuffle.partitions", str(partitions))
    df = tasks.createDataFrame([(0, "A", T0, 0, 0.0, None), (1, "B", T0 + dt.timedelta(seconds=1), 1, -0.0, None)],
                               "id long, type string, ts timestamp, off long, a double, b string")
    out = detect(df, "SELECT * FROM S WHERE A ; B PARTITION BY [a, b] WITHIN 5 seconds")
    assert ids(out) == [(0, 1)]
    assert [r.a for r in out.collect()] == ["d0.0"]  # the tagged key of a mixed group


def test_integer_and_string_of_one_text_are_two_keys(tasks):
    """1 and '1' are different keys for the engine (equal types and values), so two
    events with them at the same time and offset are not duplicates: each key has
    its own match."""
    rows = [(0, "A", T0, 0, 1, None), (1, "A", T0, 0, None, "1"),
            (2, "B", T0 + dt.timedelta(seconds=2), 1, 1, None), (3, "B", T0 + dt.timedelta(seconds=2), 1, None, "1")]
    df = tasks.createDataFrame(rows, "id long, type string, ts timestamp, off long, g long, y string")
    out = detect(df, "SELECT * FROM S WHERE A ; B PARTITION BY [g, y] WITHIN 5 seconds")
    assert ids(out) == [(0, 2), (1, 3)]
    assert sorted(r.g for r in out.collect()) == ["i1", "s1"]


@pytest.mark.parametrize("first", ["A", "B"])
def test_nan_order_values_are_duplicates(spark, first):
    """Two events of one key with time t and order NaN: Spark's sort finds them
    equal, so which one the engine read first depended on the input's order."""
    rows = [(0, "A", T0, float("nan")), (1, "B", T0, float("nan"))]
    if first == "B":
        rows.reverse()
    df = spark.createDataFrame(rows, "id long, type string, ts timestamp, off double").coalesce(1)
    with pytest.raises(Exception, match=r"must be unique within a partition key"):
        detect(df, SEQ).collect()


@pytest.mark.parametrize("ty, value, cast", [
    ("decimal(10,2)", decimal.Decimal("1.50"), "double"),
    ("binary", b"ab", "string"),
])
def test_a_key_the_engine_cannot_read_is_refused_on_the_driver(spark, ty, value, cast):
    df = spark.createDataFrame([(0, "A", T0, 0, value), (1, "B", T0 + dt.timedelta(seconds=1), 1, value)],
                               f"id long, type string, ts timestamp, off long, key {ty}")
    with pytest.raises(TypeError, match=rf"reads column 'key', of type {ty.replace('(', '.').replace(')', '.')}.*cast\('{cast}'\)"):
        detect(df, "SELECT * FROM S WHERE A ; B PARTITION BY [key] WITHIN 5 seconds")
    # As payload only (in `events`), the column is fine.
    assert ids(detect(df, SEQ + " WITHIN 5 seconds")) == [(0, 1)]


def test_bucket_count_must_fit_the_state_row():
    import ceql.spark as cs

    with pytest.raises(ValueError, match=r"from 1 to 2\*\*31 - 1"):
        cs.detect(None, SEQ, buckets=2**31)


def test_a_double_time_is_rounded_to_the_nearest_nanosecond(spark):
    """docs/language.md#s1-4: 2.01 s and 3.01 s are exactly one second apart (truncated,
    the double 2.01 was a nanosecond short), as the engine reads them."""
    df = spark.createDataFrame([(0, "A", 2.01, 1), (1, "B", 3.01, 2)], "id long, type string, ts double, off long")
    assert ids(detect(df, SEQ + " WITHIN 1 second", time_unit="s")) == [(0, 1)]
