"""AST of CEQL queries.

Variables are represented as a plain ``str`` (event type name or AS name; docs/language.md#s4 forbids an AS name
equal to an event type name, so they share one namespace) or as a pair ``(stream, type)`` for a
stream-qualified type ``S>T``.
"""

from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple, Union


def var_name(var):
    """Printable name of a variable."""
    return "%s>%s" % var if isinstance(var, tuple) else var


# ---------------------------------------------------------------- CEL formulas
# eq=False: nodes hash by identity (used to memoise valuation sets per node).

@dataclass(eq=False)
class Atom:
    stream: Optional[str]  # None for an unqualified type
    type: str


@dataclass(eq=False)
class Not:
    inner: Any  # an Atom, possibly wrapped in Filter nodes (the `atomic` rule)


@dataclass(eq=False)
class Absent:
    """ABSENT(atomic) (docs/language.md#s3-3a): only meaningful inside a ';' chain; with
    ``FOR d`` (docs/language.md#s3-3b) only at the end of the whole formula."""
    inner: Any  # an Atom, possibly wrapped in Filter nodes (the `atomic` rule)
    deadline: Optional[int] = None  # FOR d, in nanoseconds (None: no FOR)
    others: tuple = ()  # ABSENT(b1 OR b2 OR ...): the alternatives after the first (inner)

    @property
    def branches(self):
        """The alternatives of ABSENT(b1 OR ... OR bn) (docs/language.md#s3-3a,
        "Alternatives"): a position violates the absence iff it satisfies one of them."""
        return (self.inner,) + tuple(self.others)


@dataclass(eq=False)
class As:
    child: Any
    name: str


@dataclass(eq=False)
class Plus:
    child: Any
    contiguous: bool  # True for ':+'


@dataclass(eq=False)
class Filter:
    child: Any
    theta: Any  # FTerm / FAnd / FOr


@dataclass(eq=False)
class Seq:
    left: Any
    right: Any
    contiguous: bool  # True for ':'


@dataclass(eq=False)
class Or:
    left: Any
    right: Any


@dataclass(eq=False)
class And:
    """``left AND right`` (docs/language.md#s3-3c): both, in any order, over distinct events."""
    left: Any
    right: Any


# ---------------------------------------------------------------- filters

@dataclass(eq=False)
class FTerm:
    var: Union[str, Tuple[str, str]]
    pred: Any


@dataclass(eq=False)
class FAnd:
    left: Any
    right: Any


@dataclass(eq=False)
class FOr:
    left: Any
    right: Any


# ---------------------------------------------------------------- predicates

@dataclass(eq=False)
class PAnd:
    left: Any
    right: Any


@dataclass(eq=False)
class POr:
    left: Any
    right: Any


@dataclass(eq=False)
class PNot:
    child: Any


@dataclass(eq=False)
class Cmp:
    op: str  # one of < <= > >= = !=
    left: Any
    right: Any


@dataclass(eq=False)
class Like:
    expr: Any
    pattern: str
    regex: Any  # compiled re pattern


@dataclass(eq=False)
class InSet:
    expr: Any
    values: Optional[List[Any]]  # literal list, or None for a range
    lo: Any = None  # range bounds (None = open)
    hi: Any = None
    negated: bool = False


@dataclass(eq=False)
class IsNull:
    expr: Any
    negated: bool = False


@dataclass(eq=False)
class InRange:
    expr: Any
    lo: Any
    hi: Any


@dataclass(eq=False)
class Bare:
    expr: Any


# ---------------------------------------------------------------- expressions

@dataclass(eq=False)
class Lit:
    value: Any  # int, float, str or bool


@dataclass(eq=False)
class Attr:
    name: str


@dataclass(eq=False)
class Ref:
    """``y.attr``: an attribute of an event of another variable (docs/design/correlation.md)."""
    var: str
    name: str


@dataclass(eq=False)
class Prev:
    """``PREV(attr)``: the attribute of the previous event of the filtered variable."""
    name: str


@dataclass(eq=False)
class Agg:
    """``count(y)`` (``name`` None) or ``sum|avg|min|max|first|last(y.attr)``."""
    func: str  # lower case
    var: str
    name: Optional[str]


@dataclass(eq=False)
class Unary:
    op: str  # '+' or '-'
    expr: Any


@dataclass(eq=False)
class Bin:
    op: str  # + - * / %
    left: Any
    right: Any


# ---------------------------------------------------------------- query

@dataclass(eq=False)
class Query:
    strategy: str  # ALL ANY NEXT LAST MAX STRICT
    select: Any  # '*', 'NONE' or a list of variables
    from_streams: Optional[List[str]]
    where: Any
    partition: List[List[str]] = field(default_factory=list)
    window: Any = None  # None | ('EVENTS', n) | ('ATTR', n, attr) | ('TIME', ns)
    consume: str = "NONE"  # NONE ANY PARTITION
    limit: Optional[int] = None
    measures: List[Tuple[str, Any]] = field(default_factory=list)  # (name, Agg) of the SELECT list


# ---------------------------------------------------------------- printing (fully parenthesised)

def show(n):
    """Fully parenthesised text of a CEL formula, filter, predicate or expression."""
    if isinstance(n, Atom):
        return n.type if n.stream is None else "%s>%s" % (n.stream, n.type)
    if isinstance(n, Not):
        return "NOT(%s)" % show(n.inner)
    if isinstance(n, As):
        return "(%s AS %s)" % (show(n.child), n.name)
    if isinstance(n, Plus):
        return "(%s%s)" % (show(n.child), ":+" if n.contiguous else "+")
    if isinstance(n, Filter):
        return "(%s FILTER %s)" % (show(n.child), show(n.theta))
    if isinstance(n, Seq):
        return "(%s %s %s)" % (show(n.left), ":" if n.contiguous else ";", show(n.right))
    if isinstance(n, Or):
        return "(%s OR %s)" % (show(n.left), show(n.right))
    if isinstance(n, And):
        return "(%s AND %s)" % (show(n.left), show(n.right))
    if isinstance(n, FTerm):
        return "%s[%s]" % (var_name(n.var), show(n.pred))
    if isinstance(n, (FAnd, PAnd)):
        return "(%s AND %s)" % (show(n.left), show(n.right))
    if isinstance(n, (FOr, POr)):
        return "(%s OR %s)" % (show(n.left), show(n.right))
    if isinstance(n, PNot):
        return "(NOT %s)" % show(n.child)
    if isinstance(n, Cmp):
        return "(%s %s %s)" % (show(n.left), n.op, show(n.right))
    if isinstance(n, Like):
        return "(%s LIKE %r)" % (show(n.expr), n.pattern)
    if isinstance(n, InSet):
        if n.values is not None:
            s = "{%s}" % ", ".join(repr(v) for v in n.values)
        else:
            s = "{%s..%s}" % ("" if n.lo is None else n.lo, "" if n.hi is None else n.hi)
        return "(%s %sIN %s)" % (show(n.expr), "NOT " if n.negated else "", s)
    if isinstance(n, InRange):
        return "(%s IN RANGE(%s, %s))" % (show(n.expr), show(n.lo), show(n.hi))
    if isinstance(n, IsNull):
        return "(%s IS %sNULL)" % (show(n.expr), "NOT " if n.negated else "")
    if isinstance(n, Bare):
        return show(n.expr)
    if isinstance(n, Lit):
        return repr(n.value)
    if isinstance(n, Attr):
        return n.name
    if isinstance(n, Ref):
        return "%s.%s" % (n.var, n.name)
    if isinstance(n, Prev):
        return "PREV(%s)" % n.name
    if isinstance(n, Agg):
        return "%s(%s)" % (n.func, n.var if n.name is None else "%s.%s" % (n.var, n.name))
    if isinstance(n, Unary):
        return "(%s%s)" % (n.op, show(n.expr))
    if isinstance(n, Bin):
        return "(%s %s %s)" % (show(n.left), n.op, show(n.right))
    raise AssertionError(n)
