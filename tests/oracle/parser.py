"""Parser of CEQL query text (docs/language.md#s2-2, #s2-3).

CEL formulas are parsed with the normative precedence-climbing procedure of docs/language.md#s2-3; filters and
predicates by recursive descent, predicates' ``p_atom`` alternatives tried in order with
backtracking (PEG).
"""

import re
from fractions import Fraction
from decimal import Decimal

from .errors import OracleError
from .lexer import tokenize, I64_MAX
from . import nodes as N


#: Aggregate functions (docs/design/correlation.md); `max` and `last` are keywords elsewhere.
AGGREGATES = frozenset(["count", "sum", "avg", "min", "max", "first", "last"])

class ParseFail(Exception):
    """Internal: a syntax error (possibly recovered from by backtracking)."""


STRATEGIES = ("ALL", "ANY", "NEXT", "LAST", "MAX", "STRICT")

# binding powers (docs/language.md#s2-3)
POSTFIX_POWER = {"AS": 60, "+": 60, ":+": 60, "FILTER": 20}
INFIX_POWER = {";": 50, ":": 40, "AND": 35, "OR": 30}

CMP_OPS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "=", "==": "=", "!=": "!=", "<>": "!="}

UNIT_NS = {
    "HOUR": 3600 * 10 ** 9, "HOURS": 3600 * 10 ** 9,
    "MINUTE": 60 * 10 ** 9, "MINUTES": 60 * 10 ** 9,
    "SECOND": 10 ** 9, "SECONDS": 10 ** 9,
    "MS": 10 ** 6, "MILLISECOND": 10 ** 6, "MILLISECONDS": 10 ** 6,
    "DAY": 86400 * 10 ** 9, "DAYS": 86400 * 10 ** 9,
}
KEYWORD_UNITS = ("HOUR", "HOURS", "MINUTE", "MINUTES", "SECOND", "SECONDS")
CONTEXTUAL_UNITS = ("MS", "MILLISECOND", "MILLISECONDS", "DAY", "DAYS")


class Parser:
    def __init__(self, text):
        self.toks = tokenize(text)
        self.i = 0
        self.likes = []  # Like nodes, regexes compiled after the parse

    # ------------------------------------------------------------ token helpers
    def peek(self, k=0):
        j = min(self.i + k, len(self.toks) - 1)
        return self.toks[j]

    def next(self):
        t = self.toks[self.i]
        if t.kind != "EOF":
            self.i += 1
        return t

    def fail(self, what):
        t = self.peek()
        found = "end of input" if t.kind == "EOF" else repr(t.value)
        raise ParseFail("expected %s, found %s at offset %d" % (what, found, t.offset))

    def is_kw(self, name, k=0):
        t = self.peek(k)
        return t.kind == "KW" and t.value == name

    def is_sym(self, s, k=0):
        t = self.peek(k)
        return t.kind == "SYM" and t.value == s

    def expect_kw(self, name):
        if not self.is_kw(name):
            self.fail(name)
        return self.next()

    def expect_sym(self, s):
        if not self.is_sym(s):
            self.fail("`%s`" % s)
        return self.next()

    def expect_ident(self):
        if self.peek().kind != "IDENT":
            self.fail("identifier")
        return self.next().value

    def attempt(self, fn):
        """Run fn; on a syntax failure restore the position and return None."""
        save = self.i
        nlikes = len(self.likes)
        try:
            return (fn(),)
        except ParseFail:
            self.i = save
            del self.likes[nlikes:]
            return None

    # ------------------------------------------------------------ query
    def query(self):
        self.expect_kw("SELECT")
        strategy = "ALL"
        if self.peek().kind == "KW" and self.peek().value in STRATEGIES and not self.is_sym("(", 1):
            # `max(` and `last(` start a measure (docs/language.md#s3-5a)
            strategy = self.next().value
        select = self.select_list()
        from_streams = None
        if self.is_kw("FROM"):
            self.next()
            from_streams = [self.expect_ident()]
            while self.is_sym(","):
                self.next()
                from_streams.append(self.expect_ident())
        self.expect_kw("WHERE")
        where = self.cel(0)
        partition = []
        if self.is_kw("PARTITION"):
            self.next()
            self.expect_kw("BY")
            partition.append(self.key_group())
            while self.is_sym(","):
                self.next()
                partition.append(self.key_group())
        window = None
        if self.is_kw("WITHIN"):
            self.next()
            window = self.window()
        consume = "NONE"
        if self.is_kw("CONSUME"):
            self.next()
            self.expect_kw("BY")
            t = self.peek()
            if t.kind == "KW" and t.value in ("ANY", "PARTITION", "NONE"):
                consume = self.next().value
            else:
                self.fail("ANY, PARTITION or NONE")
        limit = None
        if self.is_kw("LIMIT"):
            self.next()
            if self.peek().kind != "INT":
                self.fail("integer")
            limit = self.next().value
        if self.peek().kind != "EOF":
            self.fail("end of query")
        measures = []
        if isinstance(select, list):
            def is_measure(x):
                return isinstance(x, tuple) and len(x) == 3
            measures = [(m[1], m[2]) for m in select if is_measure(m)]
            variables = [x for x in select if not is_measure(x)]
            if "*" in variables:
                if len(variables) > 1:
                    self.fail("`*` alone or with measures only")
                select = "*"
            else:
                # only measures: no variable is listed, so no position is reported
                select = variables if variables else "NONE"
        return N.Query(strategy, select, from_streams, where, partition, window, consume, limit, measures)

    def select_list(self):
        if self.is_sym("*") and not self.is_sym(",", 1):
            self.next()
            return "*"
        if self.is_kw("NONE"):
            self.next()
            return "NONE"
        items = [self.select_item()]
        while self.is_sym(","):
            self.next()
            items.append(self.select_item())
        return items

    def aggregate_follows(self):
        """An aggregate call (``count(``, ``max(``, ...) starts at the current token."""
        t = self.peek()
        name = t.value.lower() if t.kind in ("IDENT", "KW") and not t.quoted else None
        return name in AGGREGATES and self.is_sym("(", 1)

    def aggregate(self):
        """count(y) | sum|avg|min|max|first|last(y.attr)"""
        func = self.next().value.lower()
        self.expect_sym("(")
        var = self.expect_ident()
        name = None
        if func != "count":
            self.expect_sym(".")
            name = self.expect_ident()
        self.expect_sym(")")
        return N.Agg(func, var, name)

    def select_item(self):
        if self.aggregate_follows():  # a measure: aggregate AS name
            agg = self.aggregate()
            self.expect_kw("AS")
            return ("measure", self.expect_ident(), agg)
        if self.is_sym("*"):
            self.next()
            return "*"
        var = self.qname()
        if self.is_sym("["):  # payload projection: positions are unaffected
            self.next()
            self.expect_ident()
            while self.is_sym(","):
                self.next()
                self.expect_ident()
            self.expect_sym("]")
        return var

    def qname(self):
        """ident [ '>' ident ]; returns a variable (str or (stream, type))."""
        a = self.expect_ident()
        if self.is_sym(">") and self.peek(1).kind == "IDENT":
            self.next()
            b = self.expect_ident()
            return (a, b)
        return a

    def key_group(self):
        self.expect_sym("[")
        g = [self.expect_ident()]
        while self.is_sym(","):
            self.next()
            g.append(self.expect_ident())
        self.expect_sym("]")
        return g

    def window(self):
        t0, t1 = self.peek(), self.peek(1)
        if t0.kind == "INT" and t1.kind == "KW" and t1.value == "EVENTS":
            self.next()
            self.next()
            return ("EVENTS", t0.value)
        if t0.kind == "INT" and t1.kind == "SYM" and t1.value == "[":
            self.next()
            self.next()
            a = self.expect_ident()
            self.expect_sym("]")
            return ("ATTR", t0.value, a)
        return ("TIME", self.duration())

    def duration(self):
        """number unit { number unit }: nanoseconds, truncated to an integer."""
        total = Fraction(0)
        count = 0
        while self.peek().kind in ("INT", "DOUBLE"):
            t = self.next()
            amount = Fraction(t.value) if t.kind == "INT" else Fraction(Decimal(t.value))
            u = self.peek()
            if u.kind == "KW" and u.value in KEYWORD_UNITS:
                unit = u.value
            elif u.kind == "IDENT" and not u.quoted and u.value.upper() in CONTEXTUAL_UNITS:
                unit = u.value.upper()
            else:
                self.fail("time unit")
            self.next()
            total += amount * UNIT_NS[unit]
            count += 1
        if count == 0:
            self.fail("window (n EVENTS, n [attr] or a duration)")
        return int(total)  # truncated to an integer number of ns

    # ------------------------------------------------------------ CEL (docs/language.md#s2-3)
    def cel(self, min_power):
        lhs = self.unit_f()
        while True:
            t = self.peek()
            op = None
            # AND here is the conjunction of formulas (docs/language.md#s3-3c): a filter's AND
            # was consumed by filter() when a whole filter term followed it
            if t.kind == "KW" and t.value in ("AS", "FILTER", "OR", "AND"):
                op = t.value
            elif t.kind == "SYM" and t.value in ("+", ":+", ";", ":"):
                op = t.value
            if op in POSTFIX_POWER and POSTFIX_POWER[op] >= min_power:
                self.next()
                if op == "AS":
                    lhs = N.As(lhs, self.expect_ident())
                elif op == "+":
                    lhs = N.Plus(lhs, False)
                elif op == ":+":
                    lhs = N.Plus(lhs, True)
                else:
                    lhs = N.Filter(lhs, self.filter())
            elif op in INFIX_POWER and INFIX_POWER[op] >= min_power:
                self.next()
                rhs = self.cel(INFIX_POWER[op] + 1)
                if op == ";":
                    lhs = N.Seq(lhs, rhs, False)
                elif op == ":":
                    lhs = N.Seq(lhs, rhs, True)
                elif op == "AND":
                    lhs = N.And(lhs, rhs)
                else:
                    lhs = N.Or(lhs, rhs)
            else:
                return lhs

    def unit_f(self):
        if self.is_sym("("):
            self.next()
            f = self.cel(0)
            self.expect_sym(")")
            return f
        if self.is_kw("NOT"):
            self.next()
            self.expect_sym("(")
            inner = self.atomic()
            self.expect_sym(")")
            return N.Not(inner)
        t = self.peek()
        if t.kind == "IDENT" and not t.quoted and t.value.upper() == "ABSENT" and self.is_sym("(", 1):
            # contextual keyword: ABSENT only when a `(` follows (docs/language.md#s2-1)
            self.next()
            self.next()
            inner = self.atomic(alias=True)
            others = []
            while self.is_kw("OR"):  # alternatives (docs/language.md#s3-3a); a filter's OR was taken above
                self.next()
                others.append(self.atomic(alias=True))
            self.expect_sym(")")
            u = self.peek()
            if u.kind == "IDENT" and not u.quoted and u.value.upper() == "FOR":  # contextual, docs/language.md#s3-3b
                self.next()
                return N.Absent(inner, self.duration(), tuple(others))
            return N.Absent(inner, None, tuple(others))
        if t.kind == "IDENT":
            return self.atom()
        self.fail("event type, `(` or NOT")

    def atom(self):
        q = self.qname()
        return N.Atom(q[0], q[1]) if isinstance(q, tuple) else N.Atom(None, q)

    def atomic(self, alias=False):
        """qname {FILTER filter}; inside ABSENT (``alias``) also qname AS x {FILTER filter}
        (docs/language.md#s3-3a): the alias is one of the absent event's own variables."""
        f = self.atom()
        if alias and self.is_kw("AS"):
            self.next()
            f = N.As(f, self.expect_ident())
        while self.is_kw("FILTER"):
            self.next()
            f = N.Filter(f, self.filter())
        return f

    # ------------------------------------------------------------ filters
    def term_follows(self):
        """True iff a whole filter term follows the current token (an AND/OR)."""
        save = self.i
        nlikes = len(self.likes)
        self.i += 1
        try:
            self.f_term()
            ok = True
        except ParseFail:
            ok = False
        self.i = save
        del self.likes[nlikes:]
        return ok

    def filter(self):
        left = self.f_and()
        while self.is_kw("OR") and self.term_follows():
            self.next()
            left = N.FOr(left, self.f_and())
        return left

    def f_and(self):
        left = self.f_term()
        while self.is_kw("AND") and self.term_follows():
            self.next()
            left = N.FAnd(left, self.f_term())
        return left

    def f_term(self):
        if self.is_sym("("):
            self.next()
            f = self.filter()
            self.expect_sym(")")
            return f
        var = self.qname()
        self.expect_sym("[")
        p = self.pred()
        self.expect_sym("]")
        return N.FTerm(var, p)

    # ------------------------------------------------------------ predicates
    def pred(self):
        left = self.p_and()
        while self.is_kw("OR"):
            self.next()
            left = N.POr(left, self.p_and())
        return left

    def p_and(self):
        left = self.p_not()
        while self.is_kw("AND"):
            self.next()
            left = N.PAnd(left, self.p_not())
        return left

    def p_not(self):
        if self.is_kw("NOT"):
            self.next()
            return N.PNot(self.p_not())
        return self.p_atom()

    def p_atom(self):
        for alt in (self._alt_cmp, self._alt_like, self._alt_in, self._alt_in_range, self._alt_is_null,
                    self._alt_paren, self._alt_bare):
            r = self.attempt(alt)
            if r is not None:
                return r[0]
        self.fail("predicate")

    def _alt_cmp(self):
        a = self.expr()
        t = self.peek()
        if not (t.kind == "SYM" and t.value in CMP_OPS):
            self.fail("comparison operator")
        self.next()
        b = self.expr()
        return N.Cmp(CMP_OPS[t.value], a, b)

    def _alt_like(self):
        e = self.expr()
        self.expect_kw("LIKE")
        if self.peek().kind != "STRING":
            self.fail("string literal")
        node = N.Like(e, self.next().value, None)
        self.likes.append(node)
        return node

    def _word(self, word):
        """Whether the next token is the contextual word ``word`` (unquoted, any case)."""
        t = self.peek()
        return t.kind == "IDENT" and not t.quoted and t.value.upper() == word

    def _alt_is_null(self):
        """``e IS [NOT] NULL`` (docs/language.md#s3-4); IS and NULL are not reserved."""
        e = self.expr()
        if not self._word("IS"):
            self.fail("IS")
        self.next()
        negated = False
        if self.is_kw("NOT"):
            self.next()
            negated = True
        if not self._word("NULL"):
            self.fail("NULL")
        self.next()
        return N.IsNull(e, negated)

    def _alt_in(self):
        e = self.expr()
        negated = False
        if self.is_kw("NOT"):
            self.next()
            negated = True
        self.expect_kw("IN")
        values, lo, hi = self.value_set()
        return N.InSet(e, values, lo, hi, negated)

    def _alt_in_range(self):
        e = self.expr()
        self.expect_kw("IN")
        self.expect_kw("RANGE")
        self.expect_sym("(")
        lo = self.expr()
        self.expect_sym(",")
        hi = self.expr()
        self.expect_sym(")")
        return N.InRange(e, lo, hi)

    def _alt_paren(self):
        self.expect_sym("(")
        p = self.pred()
        self.expect_sym(")")
        return p

    def _alt_bare(self):
        return N.Bare(self.expr())

    def value_set(self):
        """Returns (values, lo, hi): values is a list for an enumerated set, None for a range."""
        self.expect_sym("{")
        if self.is_sym(".."):
            self.next()
            hi = self.signed()
            self.expect_sym("}")
            return None, None, hi
        if self.peek().kind == "STRING":
            first = self.next().value
            is_num = False
        else:
            first = self.signed()
            is_num = True
        if is_num and self.is_sym(".."):
            self.next()
            if self.is_sym("}"):
                self.next()
                return None, first, None
            hi = self.signed()
            self.expect_sym("}")
            return None, first, hi
        values = [first]
        while self.is_sym(","):
            self.next()
            values.append(self.literal())
        self.expect_sym("}")
        return values, None, None

    def literal(self):
        if self.peek().kind == "STRING":
            return self.next().value
        return self.signed()

    def signed(self):
        neg = False
        if self.is_sym("-"):
            self.next()
            neg = True
            if self.min_magnitude_follows():
                self.next()
                return -(2 ** 63)
        v = self.number()
        return -v if neg else v

    def min_magnitude_follows(self):
        """The integer literal 2^63, which only a minus before it makes a 64-bit
        integer (docs/language.md#s2-1)."""
        t = self.peek()
        return t.kind == "INT" and t.value == 2 ** 63

    def number(self):
        t = self.peek()
        if t.kind == "INT":
            if t.value > 2 ** 63 - 1:
                raise OracleError("E0101", "integer literal %d does not fit in i64" % t.value)
            self.next()
            return t.value
        if t.kind == "DOUBLE":
            self.next()
            return float(t.value)
        self.fail("number")

    # ------------------------------------------------------------ expressions
    def expr(self):
        left = self.e_mul()
        while self.peek().kind == "SYM" and self.peek().value in ("+", "-"):
            op = self.next().value
            left = N.Bin(op, left, self.e_mul())
        return left

    def e_mul(self):
        left = self.e_un()
        while self.peek().kind == "SYM" and self.peek().value in ("*", "/", "%"):
            op = self.next().value
            left = N.Bin(op, left, self.e_un())
        return left

    def e_un(self):
        if self.peek().kind == "SYM" and self.peek().value in ("+", "-"):
            op = self.next().value
            if op == "-" and self.min_magnitude_follows():
                self.next()
                return N.Lit(-(2 ** 63))
            return N.Unary(op, self.e_un())
        return self.e_prim()

    def e_prim(self):
        t = self.peek()
        if t.kind in ("INT", "DOUBLE"):
            return N.Lit(self.number())
        if t.kind == "STRING":
            self.next()
            return N.Lit(t.value)
        if self.aggregate_follows():
            return self.aggregate()
        if t.kind == "IDENT" and not t.quoted and t.value.upper() == "PREV" and self.is_sym("(", 1):
            self.next()
            self.next()
            name = self.expect_ident()
            self.expect_sym(")")
            return N.Prev(name)
        if t.kind == "IDENT" and self.is_sym(".", 1) and self.peek(2).kind == "IDENT":
            self.next()
            self.next()
            return N.Ref(t.value, self.next().value)
        if t.kind == "IDENT":
            self.next()
            if not t.quoted and t.value.upper() == "TRUE":
                return N.Lit(True)
            if not t.quoted and t.value.upper() == "FALSE":
                return N.Lit(False)
            return N.Attr(t.value)
        if t.kind == "SYM" and t.value == "(":
            self.next()
            e = self.expr()
            self.expect_sym(")")
            return e
        self.fail("expression")


def parse_query(text):
    """Parse a CEQL query; raises OracleError('E0100'/'E0101')."""
    p = Parser(text)
    try:
        q = p.query()
    except ParseFail as e:
        raise OracleError("E0100", str(e))
    for node in p.likes:
        try:
            node.regex = re.compile(node.pattern)
        except re.error as e:
            raise OracleError("E0101", "invalid regular expression %r: %s" % (node.pattern, e))
    return q
