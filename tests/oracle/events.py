"""Ingestion of input events (docs/language.md#s1-2 to #s1-4, #s1-1a): stream membership, typed attributes,
time stamps."""

import math
import struct
from fractions import Fraction

from .schema import I64_MAX, I64_MIN, check_i64, convert_value

UNIT_FACTOR = {"s": 10 ** 9, "ms": 10 ** 6, "us": 10 ** 3, "ns": 1}


class Event:
    """pos: global position (index in the input list); stream: stream name (None for the
    implicit stream of a schema-less query without FROM); type; attrs: attribute -> value
    (declared attributes with a schema, the dict's attributes without); present: attribute
    names that are declared (schema) / present in the dict with a non-NULL value (schema-less:
    an input whose every row has every column, like an Arrow table, cannot tell a missing
    attribute from a NULL one, so both are absent for partition key groups, docs/language.md#s3-8); in_input:
    whether the
    event belongs to a FROM stream of the query; ts: time stamp in ns or None (missing)."""

    def __init__(self, pos, stream, etype, attrs, present, in_input, ts, has_time_source):
        self.pos = pos
        self.stream = stream
        self.type = etype
        self.attrs = attrs
        self.present = present
        self.in_input = in_input
        self._ts = ts  # ns, None, or (time_field value, time_unit, where): converted when read
        self.has_time_source = has_time_source  # time_field given, or a FROM type has a primary_time

    @property
    def ts(self):
        """The time stamp in ns, or None when it is missing (NULL, or not supplied while other
        types carry event time). A time_field value is converted when a duration window reads
        it (docs/language.md#s1-4: "Time stamps are read only by duration windows"), so a bad
        one rejects the event (TypeError) only then."""
        if isinstance(self._ts, tuple):
            self._ts = _to_ns(*self._ts)
        return self._ts

    def __repr__(self):
        return "Event(%d, %s>%s, %r)" % (self.pos, self.stream, self.type, self.attrs)


def _check_plain_value(v, where):
    """A schema-less value (docs/language.md#s1-1a): typed by its Python type; an ``int`` is a
    64-bit integer (docs/language.md#s1-1), so a larger one rejects the event (TypeError)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return check_i64(v, where)
    raise TypeError("unsupported attribute value %r%s" % (v, where))


def _to_ns(v, unit, where):
    """A ``time_field`` value in nanoseconds (docs/language.md#s1-4); a value that is not a
    finite number, or that is outside 64-bit nanoseconds, rejects the event (TypeError)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("time stamp %r is not a number%s" % (v, where))
    if isinstance(v, float) and not math.isfinite(v):
        raise TypeError("time stamp %r is not finite%s" % (v, where))
    if isinstance(v, float):
        # docs/language.md#s1-4: the double product, rounded to the nearest integer, halves
        # away from zero (2.01 s is 2010000000 ns, not 2009999999)
        x = Fraction(v * UNIT_FACTOR[unit])
        ns = math.floor(abs(x) + Fraction(1, 2)) * (1 if x >= 0 else -1)
    else:
        ns = v * UNIT_FACTOR[unit]
    if not I64_MIN <= ns <= I64_MAX:
        # docs/language.md#s1-4: "A time stamp outside 64-bit nanoseconds ... rejects the event"
        raise TypeError("time stamp %r is out of 64-bit nanoseconds%s" % (v, where))
    return ns


def ingest(raw_events, ctx, time_field=None, time_unit="ns"):
    schema = ctx.schema
    from_streams = ctx.from_streams
    if time_unit not in UNIT_FACTOR:
        raise ValueError("unknown time unit %r" % time_unit)
    # docs/language.md#s1-4: the wall clock only "when no event carries event time": if the
    # declarations (of the FROM streams) give some event type a primary_time, an event of
    # another type without time_field has a *missing* time stamp (not the wall clock).
    event_time = schema is not None and any(
        schema.primary_time(s, t) is not None for s in from_streams for t in schema.streams.get(s, {}))
    out = []
    for pos, d in enumerate(raw_events):
        where = " (event %d)" % pos
        etype = d["type"]
        stream = d.get("stream")
        in_input = True
        if stream is None:
            if from_streams is not None:
                if len(from_streams) == 1:
                    stream = from_streams[0]
                else:
                    in_input = False  # ambiguous: several FROM streams and no "stream" key
        elif from_streams is not None and stream not in from_streams:
            in_input = False
        ts = None
        has_time_source = time_field is not None or event_time
        if schema is not None:
            decl = schema.attrs(stream, etype) if stream is not None else None
            decl = decl or {}
            attrs = {a: convert_value(t, d.get(a), " for %s.%s%s" % (etype, a, where)) for a, t in decl.items()}
            present = set(decl)
            pt = schema.primary_time(stream, etype) if stream is not None else None
            if pt is not None:
                ts = attrs[pt]
                has_time_source = True
            elif time_field is not None:
                ts = (d.get(time_field), time_unit, where)  # converted when read (Event.ts)
        else:
            attrs = {k: _check_plain_value(v, where) for k, v in d.items() if k not in ("type", "stream")}
            present = {k for k, v in attrs.items() if v is not None}
            if time_field is not None:
                ts = (d.get(time_field), time_unit, where)  # converted when read (Event.ts)
        out.append(Event(pos, stream, etype, attrs, present, in_input, ts, has_time_source))
    return out


def key_component(v):
    """Partition key component: equal iff equal type and equal value (docs/language.md#s3-8); doubles by bit
    pattern after mapping -0.0 to 0.0."""
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int):
        return ("int", v)
    if isinstance(v, float):
        if v == 0.0:
            v = 0.0
        return ("double", struct.pack("<d", v))
    return ("string", v)


def partition_key(ev, groups):
    """The key tuple of an event, or None when it has no complete key."""
    key = []
    for g in groups:
        attr = next((a for a in g if a in ev.present), None)
        if attr is None:
            return None
        v = ev.attrs.get(attr)
        if v is None:
            return None
        key.append(key_component(v))
    return tuple(key)
