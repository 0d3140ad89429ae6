"""The schemas of the generated queries: one stream S declaring A, B, C and X, or two
streams S1 and S2 (V63's shape), and the event types and AS names the formulas use."""

_ATTRS = "v:int, k:int, t:int, s:string, ts:int, b:bool, d:double"
_A_ATTRS = "v:int, k:int, t:int, s:string, ts:int, b:bool, d:double, w:int"  # w only on A: PARTITION BY [w, k]

SCHEMA = (
    "CREATE STREAM S {\n"
    "  EVENT A { %s },\n"
    "  EVENT B { %s },\n"
    "  EVENT C { %s },\n"
    "  EVENT X { %s }\n"
    "}" % (_A_ATTRS, _ATTRS, _ATTRS, _ATTRS)
)

# Two streams (V63's shape): A in both, B only in S1, C only in S2.
SCHEMA_MULTI = (
    "CREATE STREAM S1 {\n"
    "  EVENT A { %s },\n"
    "  EVENT B { %s },\n"
    "  EVENT X { %s }\n"
    "}\n"
    "CREATE STREAM S2 {\n"
    "  EVENT A { %s },\n"
    "  EVENT C { %s },\n"
    "  EVENT X { %s }\n"
    "}" % (_A_ATTRS, _ATTRS, _ATTRS, _A_ATTRS, _ATTRS, _ATTRS)
)
MULTI_DECL = {"S1": frozenset({"A", "B"}), "S2": frozenset({"A", "C"})}

# Same, with ts as the event time stamp (docs/language.md#s1-4: primary_time wins over time_field=).
SCHEMA_PRIMARY_TIME = SCHEMA.replace("ts:int", "ts:primary_time")

TYPES = ("A", "B", "C")
AS_NAMES = ("x", "y")
