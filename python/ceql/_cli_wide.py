"""``ceql run``: integers beyond 64 bits in a CSV or JSON-lines file.

pyarrow reads a column holding an integer outside the 64-bit range (``2**64 - 1``,
say) as a column of doubles, where neighbouring integers become one value: two
partition keys would silently merge. The Python API refuses such an integer as a
bad event (``CeqlEventError``), so the command does too. Such an integer
becomes a double of magnitude 2^63 or more (rounding keeps order), so only double
columns holding such a value are inspected further: their text is read again,
and a value written as an integer (no fraction, no exponent) outside the 64-bit
range is the bad event. A double written as such (``1e20``, ``2.0e19``) stays a
double.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional

#: An integer outside the 64-bit range is read as a double of at least this magnitude.
_WIDE = float(2**63)
_I64 = (-(2**63), 2**63 - 1)
#: Integer text of 19 digits or more (no fraction, no exponent): 64 bits hold
#: every integer of fewer digits.
_WIDE_TEXT = r"^\s*[+-]?\d{19,}\s*$"
#: An integer outside the 64-bit range has at least 19 digits: JSON lines without
#: such a run of digits need not be parsed.
_LONG_DIGITS = re.compile(rb"\d{19}")
_BLANK_LINE = re.compile(rb"^[ \t\r\f\v]*\n", re.MULTILINE)


@dataclass(frozen=True)
class WideInteger:
    """The first integer of the file outside the 64-bit range: its ``position``
    (row of the input, from 0), ``field`` (column name) and ``text``."""

    position: int
    field: str
    text: str

    @property
    def message(self) -> str:
        """The engine's words for the same value given through the Python API."""
        return f"integer {self.text} does not fit in 64 bits"


def first_wide_integer(path: Path, table: Any, kind: str) -> Optional[WideInteger]:
    """The first integer beyond 64 bits in ``table``, read by pyarrow from ``path``
    (``kind``: ``"csv"``, ``"tsv"`` or ``"jsonl"``), or ``None``. Costs one
    min/max per double column when there is none."""
    suspects = [name for name in _suspect_columns(table) if table.column_names.count(name) == 1]
    if not suspects:
        return None
    if kind == "jsonl":
        return _in_json_lines(path, suspects)
    return _in_csv(path, table, suspects, kind == "tsv")


def _suspect_columns(table: Any) -> List[str]:
    """The double columns of ``table`` holding a finite value of magnitude ≥ 2^63."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = []
    for name, column in zip(table.column_names, table.columns):
        if not pa.types.is_floating(column.type) or column.null_count == len(column):
            continue
        low, high = pc.min_max(column).values()
        if -_WIDE < low.as_py() and high.as_py() < _WIDE:
            continue  # NaN compares false: such a column is inspected, rarely
        if pc.any(_maybe_wide(column)).as_py():
            names.append(name)
    return names


def _maybe_wide(column: Any) -> Any:
    import pyarrow.compute as pc

    return pc.and_(pc.greater_equal(pc.abs(column), _WIDE), pc.is_finite(column))


def _in_csv(path: Path, table: Any, suspects: List[str], tab: bool) -> Optional[WideInteger]:
    """Reads the ``suspects`` columns of the CSV again as text (same parsing, so
    the same rows) and finds the first integer text outside the 64-bit range."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    text = pcsv.read_csv(
        path,
        parse_options=pcsv.ParseOptions(delimiter="\t") if tab else None,
        convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in suspects}, include_columns=suspects),
    )
    found: Optional[WideInteger] = None
    for name in suspects:
        candidates = pc.and_(_maybe_wide(table.column(name)), pc.match_substring_regex(text.column(name), _WIDE_TEXT))
        rows = pc.indices_nonzero(pc.fill_null(candidates, False)).to_pylist()
        values = text.column(name)
        for row in rows:
            if found is not None and row >= found.position:
                break
            s = values[row].as_py().strip()
            if not _I64[0] <= int(s) <= _I64[1]:
                found = WideInteger(row, name, s)
                break
    return found


def _in_json_lines(path: Path, suspects: List[str]) -> Optional[WideInteger]:
    """Finds the first line (blank lines skipped, as pyarrow does) whose field
    among ``suspects`` is a JSON integer outside the 64-bit range; only lines with
    19 digits in a row are parsed."""
    import mmap

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        checked = -1  # the end of the last line parsed
        for digits in _LONG_DIGITS.finditer(data):
            if digits.start() < checked:
                continue
            start = data.rfind(b"\n", 0, digits.start()) + 1
            end = data.find(b"\n", digits.end())
            checked = len(data) if end < 0 else end
            event = json.loads(data[start:checked])
            for name in suspects:
                v = event.get(name)
                if type(v) is int and not _I64[0] <= v <= _I64[1]:
                    prefix = data[:start]
                    return WideInteger(prefix.count(b"\n") - len(_BLANK_LINE.findall(prefix)), name, str(v))
    return None
