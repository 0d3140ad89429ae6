"""CREATE STREAM declarations (docs/language.md#s1-1) and typed attribute values (docs/language.md#s1-2)."""

from .errors import OracleError
from .lexer import tokenize

# Input fields that carry an event's type and stream: never attributes (docs/language.md#s1-2).
RESERVED_FIELDS = ("type", "stream")

TYPE_ALIASES = {
    "int": "int", "long": "int", "integer": "int",
    "double": "double", "float": "double",
    "string": "string", "str": "string",
    "boolean": "bool", "bool": "bool",
    "primary_time": "primary_time",
}


class Schema:
    """streams: {stream: {event type: {attribute: declared type}}} (insertion-ordered)."""

    def __init__(self, streams):
        self.streams = streams

    def declares(self, stream, etype):
        return etype in self.streams.get(stream, {})

    def attrs(self, stream, etype):
        return self.streams.get(stream, {}).get(etype)

    def primary_time(self, stream, etype):
        for a, t in (self.attrs(stream, etype) or {}).items():
            if t == "primary_time":
                return a
        return None


def parse_schema(text):
    toks = tokenize(text)
    i = 0

    def peek():
        return toks[i]

    def fail(what):
        t = toks[i]
        raise OracleError("E0100", "schema: expected %s, found %r at offset %d" % (what, t.value, t.offset))

    def word(w):
        t = toks[i]
        return (t.kind == "KW" and t.value == w) or (t.kind == "IDENT" and not t.quoted and t.value.upper() == w)

    def sym(s):
        t = toks[i]
        return t.kind == "SYM" and t.value == s

    def ident():
        nonlocal i
        t = toks[i]
        if t.kind != "IDENT":
            fail("identifier")
        i += 1
        return t.value

    def expect_sym(s):
        nonlocal i
        if not sym(s):
            fail("`%s`" % s)
        i += 1

    streams = {}
    if peek().kind == "EOF":
        raise OracleError("E0100", "schema: empty declaration")
    while peek().kind != "EOF":
        if sym(";"):
            i += 1
            continue
        if not word("CREATE"):
            fail("CREATE")
        i += 1
        if not word("STREAM"):
            fail("STREAM")
        i += 1
        sname = ident()
        if sname in streams:
            raise OracleError("E0209", "duplicate stream `%s`" % sname)
        types = {}
        streams[sname] = types
        expect_sym("{")
        while True:
            if not word("EVENT"):
                fail("EVENT")
            i += 1
            tname = ident()
            if tname in types:
                raise OracleError("E0209", "duplicate event type `%s` in stream `%s`" % (tname, sname))
            attrs = {}
            types[tname] = attrs
            expect_sym("{")
            if not sym("}"):
                while True:
                    aname = ident()
                    expect_sym(":")
                    tt = ident()
                    if tt not in TYPE_ALIASES:
                        raise OracleError("E0209", "unknown attribute type `%s`" % tt)
                    if aname in RESERVED_FIELDS:
                        raise OracleError("E0209", "`%s` is not an attribute: it names the event's %s" % (aname, aname))
                    if aname in attrs:
                        raise OracleError("E0209", "duplicate attribute `%s` in `%s`" % (aname, tname))
                    typ = TYPE_ALIASES[tt]
                    if typ == "primary_time" and "primary_time" in attrs.values():
                        raise OracleError("E0209", "second primary_time attribute in `%s`" % tname)
                    attrs[aname] = typ
                    if sym(","):
                        i += 1
                        continue
                    break
            expect_sym("}")
            if sym(","):
                i += 1
                continue
            break
        expect_sym("}")
    return Schema(streams)


I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


def check_i64(value, where=""):
    """An integer value must be a 64-bit signed integer (docs/language.md#s1-1: ``int`` is
    "64-bit signed integers", ``primary_time`` a "64-bit signed integer"); a Python ``int``
    beyond that rejects the event (docs/language.md#s1-2), with or without declarations."""
    if isinstance(value, int) and not isinstance(value, bool) and not I64_MIN <= value <= I64_MAX:
        raise TypeError("integer %d does not fit in 64 bits%s" % (value, where))
    return value


def convert_value(declared, value, where=""):
    """Check and convert a supplied value for a declared attribute type (None stays NULL).
    A value of the wrong type raises TypeError (docs/language.md#s1-2: rejected at ingestion),
    and so does an integer beyond 64 bits, also for a ``double`` attribute (the integer that
    docs/language.md#s1-1 converts is a 64-bit one)."""
    if value is None:
        return None
    check_i64(value, where)
    if declared in ("int", "primary_time"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif declared == "double":
        if isinstance(value, float):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
    elif declared == "string":
        if isinstance(value, str):
            return value
    elif declared == "bool":
        if isinstance(value, bool):
            return value
    raise TypeError("value %r is not of declared type %s%s" % (value, declared, where))
