"""``ceql run``'s input: a CSV, TSV, JSON-lines or Parquet file as events.

Files are read with pyarrow into one Arrow table (one type per column). A
JSON-lines file whose columns pyarrow cannot type (a field holding a number in
one line and a string in another) is read with Python's ``json`` module
instead, as the Python API would read the same dicts; in both readers a column
of JSON numbers with a fraction or an exponent anywhere is a column of doubles.
An integer outside the 64-bit range is a bad event, as in the Python API (see
:mod:`ceql._cli_wide`); a value nested more than 64 levels deep makes the file
unreadable (see :mod:`ceql._cli_depth`).

Text stays text: pyarrow's readers would turn ISO 8601 strings into time stamps,
and in a JSON-lines file only when no other field made it fall back to Python's
``json``, so that a filter comparing such a field with a string failed in one file
and matched in the next. Only the ``--time-field`` column and the attributes
declared ``primary_time`` are parsed as time stamps when they hold ISO 8601 text,
in every format and either reader (:mod:`ceql._cli_times`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._cli_depth import check_json_text, check_schema, check_value
from ._cli_times import BadTime, iso_times, iso_times_of_values, numeric_times
from ._cli_wide import WideInteger, first_wide_integer
from ._columns import without_float16


class FileError(Exception):
    """A file the command cannot read or write: reported in one line, exit 1."""


class UsageError(Exception):
    """A bad option (an input of unknown format, a missing type column):
    reported in one line, exit 2."""


class Rows:
    """Events read row by row (a JSON-lines file pyarrow cannot type): ``rows``
    are dicts, ``names`` the keys met in any of them."""

    def __init__(self, rows: List[Dict[str, Any]]) -> None:
        self.rows = rows
        self.names = list(dict.fromkeys(k for r in rows for k in r))

    @property
    def num_rows(self) -> int:
        return len(self.rows)


Events = Union[Any, Rows]  # a pyarrow Table, or Rows

_BLOCK = 1 << 20  # pyarrow's JSON block size; a line longer than a block needs a larger one


def read_events(path: Path, type_field: Optional[str], time_fields: Sequence[str] = (),
                text_columns: Sequence[str] = ()) -> Tuple[Events, Optional[Any], str]:
    """The events of ``path``, the first bad value found while reading, if any, and the
    name of their event-type column (``type_field``, else ``type``, else
    ``event_type``; the engine reads it there, nothing is renamed). The bad value is an integer beyond 64 bits that pyarrow read as a
    double, or a time stamp that is not one. Text is text but in the
    ``time_fields`` columns (``--time-field``, and the attributes declared
    ``primary_time``), where ISO 8601 text is a time stamp (:mod:`ceql._cli_times`);
    a CSV's ``text_columns`` (declared ``string``) are text even when they hold
    digits (``01234``)."""
    import pyarrow as pa

    try:
        kind = _format(path)
        if kind == "jsonl":
            check_json_text(path)
        events = Rows([]) if kind in ("csv", "tsv") and _is_empty(path) else _read(path, kind, text_columns)
        if not isinstance(events, Rows):
            check_schema(events.schema)
            # pyarrow's JSON reader keeps a Latin-1 byte in a string column: not text.
            events.validate(full=True)
            events = without_float16(events)  # a Parquet float16 column, as the API reads it
        wide = None if isinstance(events, Rows) or kind == "parquet" else first_wide_integer(path, events, kind)
    except (OSError, pa.ArrowException, UnicodeDecodeError, ValueError) as e:
        raise FileError(f"cannot read {path}: {_one_line(e)}") from None
    type_field = _type_column(events, type_field)
    bad: Optional[Any] = wide
    for field in dict.fromkeys(time_fields):
        events, bad_time = _iso_time(events, field)
        if bad_time is not None and (bad is None or bad_time.position < bad.position):
            bad = bad_time
    return events, bad, type_field


def _is_empty(path: str) -> bool:
    """Whether a file holds nothing but white space (a CSV without even a header
    line: no events, as an empty JSON-lines file)."""
    with open(path, "rb") as f:
        return not f.read(1 << 16).strip() and not f.read(1)


def check_time_field(events: Events, time_field: Optional[str]) -> None:
    """Refuses a ``--time-field`` the input has no column for (a usage error, not a
    bad event at every row)."""
    names = events.names if isinstance(events, Rows) else events.column_names
    if not names and not events.num_rows:
        return  # an empty file: no events, so no column to look for
    if time_field is not None and time_field not in names:
        listed = ", ".join(names) if names else "none"
        raise UsageError(f"the input has no column `{time_field}` for --time-field (columns: {listed})")


def _iso_time(events: Events, field: str) -> Tuple[Events, Optional[BadTime]]:
    """``events`` with the ISO 8601 text of column ``field`` as time stamps, and
    the first value of it that is not one (Arrow input; the row reader leaves
    such a value for the engine to report)."""
    import pyarrow as pa

    if isinstance(events, Rows):
        values = iso_times_of_values([r.get(field) for r in events.rows])
        for r, v in zip(events.rows, values):
            if field in r:
                r[field] = v
        return events, None
    if field not in events.column_names:
        return events, None
    i = events.column_names.index(field)
    column = events.column(i)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        return events, None
    numbers, bad = numeric_times(column, field)
    if numbers is not None:
        return events.set_column(i, field, numbers), bad
    converted, bad = iso_times(column, field)
    return events.set_column(i, field, converted), bad


def _format(path: Path) -> str:
    """``parquet``, ``jsonl``, ``csv`` or ``tsv``, from the file's name."""
    suffixes = [s.lower() for s in path.suffixes]
    if ".parquet" in suffixes or ".pq" in suffixes:
        return "parquet"
    if ".jsonl" in suffixes or ".ndjson" in suffixes or ".json" in suffixes:
        return "jsonl"
    if ".csv" in suffixes or ".tsv" in suffixes:
        return "tsv" if ".tsv" in suffixes else "csv"
    raise UsageError(f"cannot tell the format of {path} from its name "
                     "(use .csv, .tsv, .jsonl, .ndjson or .json for JSON lines, .parquet or .pq)")


def _read(path: Path, kind: str, text_columns: Sequence[str] = ()) -> Events:
    if kind == "parquet":
        import pyarrow.parquet as pq

        if path.is_file():  # read_table refuses two columns of one name, which ceql reports as a bad event
            with pq.ParquetFile(path) as f:
                return f.read()
        return pq.read_table(path)  # a directory of Parquet files
    if kind == "jsonl":
        return _read_json_lines(path)
    import pyarrow as pa
    import pyarrow.csv as pc

    parse = pc.ParseOptions(delimiter="\t") if kind == "tsv" else None
    text = {c: pa.string() for c in text_columns}
    table = pc.read_csv(path, parse_options=parse, convert_options=pc.ConvertOptions(column_types=text))
    temporal = [f.name for f in table.schema if pa.types.is_temporal(f.type)]
    if not temporal:
        return table
    # Text pyarrow took for dates or times: read again, as text.
    text.update((name, pa.string()) for name in temporal)
    return pc.read_csv(path, parse_options=parse, convert_options=pc.ConvertOptions(column_types=text))


def _read_json_lines(path: Path) -> Events:
    """pyarrow's JSON reader, with blocks as large as the longest line needs; the
    Python reader when pyarrow cannot type a column."""
    import pyarrow as pa
    import pyarrow.json as pj

    size = path.stat().st_size
    block = _BLOCK
    while True:
        try:
            table = pj.read_json(path, read_options=pj.ReadOptions(block_size=block))
            times = [f.name for f in table.schema if pa.types.is_temporal(f.type)]
            if not times:
                return table
            # Text pyarrow took for time stamps: read again, as text.
            text = pa.schema([pa.field(n, pa.string()) for n in times])
            again = pj.read_json(path, read_options=pj.ReadOptions(block_size=block),
                                 parse_options=pj.ParseOptions(explicit_schema=text, unexpected_field_behavior="infer"))
            return again.select(table.column_names)  # the file's order, not the explicit schema's first
        except pa.ArrowInvalid as e:
            text = str(e)
            if "straddling" in text and block <= size:
                block = min(block * 8, size + 1, 2**31 - 1)  # a line longer than the block
                continue
            # A column pyarrow cannot type (or a line it cannot parse: the Python
            # reader then names the line).
            return _python_json_lines(path)


def _python_json_lines(path: Path) -> Rows:
    """Every line of ``path`` parsed with ``json``; in a field whose numbers are
    ints in some lines and floats in others the ints become floats, as in a
    column typed by pyarrow, but for ints beyond 64 bits, which stay ints for the
    engine to refuse as bad events."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"line {number}: {e}") from None
            if not isinstance(row, dict):
                raise ValueError(f"line {number}: an event must be a JSON object, not {type(row).__name__}")
            for name, value in row.items():
                check_value(value, f"line {number}, field `{name}`")
            rows.append(row)
    floats = {k for r in rows for k, v in r.items() if type(v) is float}
    for r in rows:
        for k in floats.intersection(r):
            if type(r[k]) is int and -(2**63) <= r[k] < 2**63:
                r[k] = float(r[k])
    return Rows(rows)


def _type_column(events: Events, requested: Optional[str]) -> str:
    """The name of the event-type column: ``requested`` (``--type-field``), else
    ``type``, else ``event_type``. It stays an attribute of the events, as with the
    API's ``type_field=`` (docs/api.md), and a column named ``type`` beside it is an
    ordinary field."""
    names = events.names if isinstance(events, Rows) else events.column_names
    if not names and not events.num_rows:
        return requested or "type"  # an empty file: no events, so no column to look for
    source = requested or ("type" if "type" in names else "event_type" if "event_type" in names else None)
    if source is None or source not in names:
        listed = ", ".join(names) if names else "none"
        if requested:
            raise UsageError(f"the input has no column `{requested}` for --type-field (columns: {listed})")
        raise UsageError(f"the input has no event-type column, `type` or `event_type` (columns: {listed}); "
                         "name it with --type-field")
    if source == "stream":
        raise UsageError("--type-field cannot be `stream`: that column names the stream an event belongs to")
    return source


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())
