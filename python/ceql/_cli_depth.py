"""``ceql run``: values nested too deeply to read.

The engine's reading of nested Arrow columns, pyarrow's JSON reader and
Python's ``json`` all recurse once per level of nesting: a value nested some
thousands of levels deep overflows their stacks (a crash, or a
``RecursionError``). The command reads values nested at most
:data:`MAX_NESTING` levels deep (``[[1]]`` is 2 levels, ``{"a": [1]}`` too) and
refuses a deeper one as an input it cannot read (exit 1). Checked three ways:

* a JSON-lines file, before pyarrow reads it: only lines long enough to nest
  :data:`MAX_NESTING` levels are scanned (:func:`check_json_text`);
* a table read by pyarrow (JSON lines or Parquet): its schema (:func:`check_schema`);
* each value parsed with Python's ``json`` (:func:`check_value`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, List, Tuple

#: The deepest nesting of values ``ceql run`` reads.
MAX_NESTING = 64
#: JSON lines at most this long nest too few levels to overflow pyarrow's reader.
_SHORT = 1024
_CHUNK = 64 << 20
#: Every byte but brackets, quotes and backslashes (deleted first: strings shrink).
_NOT_SYNTAX = bytes(range(256)).translate(None, b'[]{}"\\')
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_PAIR = re.compile(rb"\[\]|\{\}")


class TooDeep(ValueError):
    """A value nested more than :data:`MAX_NESTING` levels deep."""


def _refuse(where: str) -> TooDeep:
    return TooDeep(f"{where}: values nested more than {MAX_NESTING} levels deep")


def check_json_text(path: Path) -> None:
    """Raises :class:`TooDeep` naming the line when a line of the JSON-lines file
    ``path`` longer than :data:`_SHORT` bytes nests brackets more than
    :data:`MAX_NESTING` deep (strings aside). Shorter lines cannot nest deeply
    enough to overflow pyarrow's reader; what they nest is checked on the schema."""
    number = 0
    rest = b""
    with open(path, "rb") as f:
        while True:
            chunk = f.read(_CHUNK)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop() if chunk else b""
            if max(map(len, lines), default=0) > _SHORT:
                for i in [i for i, line in enumerate(lines) if len(line) > _SHORT]:
                    if _too_deep(lines[i]):
                        raise _refuse(f"line {number + i + 1}")
            number += len(lines)
            if not chunk:
                return


def _too_deep(line: bytes) -> bool:
    """Whether one JSON line nests brackets more than :data:`MAX_NESTING` deep
    (brackets in strings aside), or has that many unclosed brackets. Works on
    the line's brackets alone: strings removed, then innermost pairs removed once
    per level."""
    brackets = _STRING.sub(b"", line.translate(None, _NOT_SYNTAX)).translate(None, b'"\\')
    for _ in range(MAX_NESTING):
        if not brackets:
            return False
        brackets = _PAIR.sub(b"", brackets)  # one level: pairs made by this round wait for the next
    return bool(_PAIR.search(brackets)) or brackets.count(b"[") + brackets.count(b"{") > MAX_NESTING


def check_schema(schema: Any) -> None:
    """Raises :class:`TooDeep` naming the field when a column's type nests more
    than :data:`MAX_NESTING` levels deep (lists, structs, maps, unions)."""
    for field in schema:
        stack: List[Tuple[Any, int]] = [(field.type, 0)]
        while stack:
            t, depth = stack.pop()
            if depth > MAX_NESTING:
                raise _refuse(f"field `{field.name}`")
            stack.extend((child, depth + 1) for child in _children(t))


_LISTS = ("is_list", "is_large_list", "is_fixed_size_list", "is_list_view", "is_large_list_view")


def _children(t: Any) -> List[Any]:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return _children(t.value_type)
    if pa.types.is_map(t):
        return [t.key_type, t.item_type]
    if any(getattr(pa.types, name, lambda _: False)(t) for name in _LISTS):
        return [t.value_type]
    if pa.types.is_struct(t) or pa.types.is_union(t):
        return [t.field(i).type for i in range(t.num_fields)]
    return []


def check_value(value: Any, where: str) -> None:
    """Raises :class:`TooDeep` (naming ``where``) when ``value``, parsed by
    ``json``, nests lists and dicts more than :data:`MAX_NESTING` deep."""
    if not isinstance(value, (list, dict)):
        return
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_NESTING:
            raise _refuse(where)
        children = v.values() if isinstance(v, dict) else v
        stack.extend((c, depth + 1) for c in children if isinstance(c, (list, dict)))
