"""What the Spark glue needs to know about a query, beyond ``Query.describe()``.

``describe()`` says whether a query is partitioned but not by which attributes,
and not its ``CONSUME BY`` policy, so the few clauses the glue needs are read
from the query text here with a small tokenizer that follows the lexical rules
of the reference (§2.1: comments, both kinds of string literals, back-quoted
identifiers, case-insensitive keywords).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>--[^\n]*)
  | (?P<block_comment>/\*(?:.|\n)*?(?:\*/|\Z))
  | (?P<sq>'(?:[^']|'')*'?)
  | (?P<dq>"(?:[^"]|"")*"?)
  | (?P<bq>`(?:[^`]|``)*`?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE]-?[0-9]+)?|\.[0-9]+(?:[eE]-?[0-9]+)?)
  | (?P<sym>:\+|<=|>=|==|!=|<>|\.\.|.)
    """,
    re.VERBOSE,
)


def tokens(text: str) -> List[Tuple[str, str]]:
    """(kind, value) tokens of CEQL text: kind is ``word`` (an unquoted word:
    keyword or identifier), ``id`` (a back-quoted identifier, quotes removed), ``str``,
    ``num`` or ``sym``. Whitespace and comments are skipped."""
    out: List[Tuple[str, str]] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        v = m.group()
        if kind in ("ws", "line_comment", "block_comment"):
            continue
        if kind == "ident":
            out.append(("word", v))
        elif kind == "bq":
            out.append(("id", v[1:-1].replace("``", "`") if v.endswith("`") and len(v) > 1 else v[1:]))
        elif kind in ("sq", "dq"):
            out.append(("str", v))
        elif kind == "number":
            out.append(("num", v))
        else:
            out.append(("sym", v))
    return out


def _is_kw(tok: Tuple[str, str], word: str) -> bool:
    return tok[0] == "word" and tok[1].upper() == word


def _name(tok: Tuple[str, str]) -> Optional[str]:
    return tok[1] if tok[0] in ("word", "id") else None


def partition_groups(text: str) -> List[List[str]]:
    """The key groups of ``PARTITION BY [a, b], [c]`` (empty without the clause)."""
    toks = tokens(text)
    for i in range(len(toks) - 1):
        if _is_kw(toks[i], "PARTITION") and _is_kw(toks[i + 1], "BY"):
            if i > 0 and _is_kw(toks[i - 1], "BY"):  # CONSUME BY PARTITION
                continue
            groups: List[List[str]] = []
            j = i + 2
            while j < len(toks) and toks[j] == ("sym", "["):
                group: List[str] = []
                j += 1
                while j < len(toks) and toks[j] != ("sym", "]"):
                    n = _name(toks[j])
                    if n is not None:
                        group.append(n)
                    j += 1
                groups.append(group)
                j += 1
                if j < len(toks) and toks[j] == ("sym", ","):
                    j += 1
                else:
                    break
            return groups
    return []


def consume_policy(text: str) -> str:
    """``NONE``, ``ANY`` or ``PARTITION`` (the ``CONSUME BY`` clause)."""
    toks = tokens(text)
    for i in range(len(toks) - 2):
        if _is_kw(toks[i], "CONSUME") and _is_kw(toks[i + 1], "BY"):
            return toks[i + 2][1].upper()
    return "NONE"


_WINDOW = re.compile(r"^(Unbounded|Events\((\d+)\)|Duration\((\d+)\)|Attribute \{ n: (\d+), attr: \"(.*)\" \})$")


@dataclass(frozen=True)
class QueryPlan:
    """The facts of a compiled query that decide how Spark distributes it."""

    text: str
    schema: Optional[str]
    key_groups: Tuple[Tuple[str, ...], ...]
    consume: str
    window: str  # "unbounded" | "events" | "duration" | "attribute"
    window_n: int  # events for "events", nanoseconds for "duration", n for "attribute"
    window_attr: Optional[str]
    attributes: Tuple[str, ...]
    query_hash: bytes = field(repr=False)

    @property
    def partitioned(self) -> bool:
        return bool(self.key_groups)

    @property
    def global_order(self) -> bool:
        """True when the query's result depends on the events of other partitions:
        ``WITHIN n EVENTS`` counts global positions and ``CONSUME BY ANY`` resets
        every partition (§3.7, §3.10). Such a query cannot be split by key: it is
        evaluated in one group, with ``PARTITION BY`` done inside the engine."""
        return self.partitioned and (self.window == "events" or self.consume == "ANY")

    @property
    def split_by_key(self) -> bool:
        return self.partitioned and not self.global_order


def plan_of(query: Any, schema: Optional[str]) -> QueryPlan:
    """Compiles (or takes) the query and reads the clauses the glue needs."""
    import ceql

    if isinstance(query, ceql.Query):
        q, text, schema = query, query.text, query.schema
    else:
        text = str(query)
        q = ceql.compile(text, schema)
    d = q.describe()
    groups = tuple(tuple(g) for g in partition_groups(text))
    if bool(groups) != bool(d["partitioned"]) or any(not g for g in groups):
        raise ValueError(f"ceql.spark could not read the PARTITION BY clause of the query (read {groups!r})")
    m = _WINDOW.match(str(d["window"]))
    if m is None:
        raise ValueError(f"ceql.spark does not know the window {d['window']!r}")
    if m.group(2) is not None:
        window, n, attr = "events", int(m.group(2)), None
    elif m.group(3) is not None:
        window, n, attr = "duration", int(m.group(3)), None
    elif m.group(4) is not None:
        window, n, attr = "attribute", int(m.group(4)), m.group(5)
    else:
        window, n, attr = "unbounded", 0, None
    h = hashlib.sha256()
    h.update(text.encode())
    h.update(b"\x00")
    h.update((schema or "").encode())
    return QueryPlan(
        text=text,
        schema=schema,
        key_groups=groups,
        consume=consume_policy(text),
        window=window,
        window_n=n,
        window_attr=attr,
        attributes=tuple(d["attributes"]),
        query_hash=h.digest(),
    )
