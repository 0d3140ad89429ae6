"""Three-valued evaluation of predicates on one event (docs/language.md#s3-4).

Truth values are True, False and None (UNKNOWN). Values are Python ``None`` (NULL), ``int``
(i64), ``float`` (f64), ``str`` and ``bool``. Every sub-expression is evaluated (no
short-circuit), so that a type mismatch on an event is always reported (OracleEventError).
"""

import math

from .errors import OracleEventError
from . import nodes as N

I64_MIN = -(2 ** 63)
I64_MAX = 2 ** 63 - 1


def kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    raise OracleEventError("unsupported value %r" % (v,))


def is_num(v):
    return kind(v) in ("int", "float")


def _i64(v):
    return v if I64_MIN <= v <= I64_MAX else None  # overflow -> NULL


# ------------------------------------------------------------------ Kleene logic

def not3(a):
    return None if a is None else (not a)


def and3(a, b):
    if a is False or b is False:
        return False
    if a is True and b is True:
        return True
    return None


def or3(a, b):
    if a is True or b is True:
        return True
    if a is False and b is False:
        return False
    return None


# ------------------------------------------------------------------ arithmetic

def _type_error(what, *vals):
    raise OracleEventError("%s: incompatible operand(s) %s" % (what, ", ".join(repr(v) for v in vals)))


def arith(op, a, b):
    if a is None or b is None:
        return None  # NULL operand -> NULL (no type check on a NULL)
    if not (is_num(a) and is_num(b)):
        _type_error(op, a, b)
    if kind(a) == "int" and kind(b) == "int":
        if op == "+":
            return _i64(a + b)
        if op == "-":
            return _i64(a - b)
        if op == "*":
            return _i64(a * b)
        if b == 0:
            return None  # division / remainder by zero -> NULL
        q = abs(a) // abs(b)
        if (a < 0) != (b < 0):
            q = -q  # truncation toward zero
        if op == "/":
            return _i64(q)
        return a - b * q  # '%': sign of the dividend
    x, y = float(a), float(b)
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if y == 0.0:
        return None
    if op == "/":
        return x / y
    if math.isinf(x):
        return math.nan  # IEEE fmod(±inf, y); Python's math.fmod raises instead
    return math.fmod(x, y)


def eval_expr(e, attrs, env=None):
    """Value of an expression on an event whose attributes are ``attrs`` (missing = NULL).
    ``env`` resolves the terms that read other events (``y.attr``, ``PREV(attr)``,
    aggregates; see ``correlation``); unary predicates have none."""
    if isinstance(e, N.Lit):
        return e.value
    if isinstance(e, N.Attr):
        return attrs.get(e.name)
    if isinstance(e, (N.Ref, N.Prev, N.Agg)):
        if env is None:
            raise AssertionError("%s outside a predicate between events" % N.show(e))
        return env.value(e)
    if isinstance(e, N.Unary):
        v = eval_expr(e.expr, attrs, env)
        if v is None:
            return None
        if not is_num(v):
            _type_error("unary " + e.op, v)
        if e.op == "+":
            return v
        return _i64(-v) if kind(v) == "int" else -v
    if isinstance(e, N.Bin):
        return arith(e.op, eval_expr(e.left, attrs, env), eval_expr(e.right, attrs, env))
    raise AssertionError("unknown expression %r" % (e,))


# ------------------------------------------------------------------ comparisons

def _num_pair(a, b):
    if kind(a) == "float" or kind(b) == "float":
        return float(a), float(b)
    return a, b


def _isnan(v):
    return kind(v) == "float" and math.isnan(v)


def compare(op, a, b):
    if a is None or b is None:
        return None
    if is_num(a) and is_num(b):
        if _isnan(a) or _isnan(b):
            return None
        x, y = _num_pair(a, b)
    elif kind(a) == kind(b) and kind(a) in ("str", "bool"):
        if op not in ("=", "!="):
            _type_error(op, a, b)
        x, y = a, b
    else:
        _type_error(op, a, b)
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "=": x == y, "!=": x != y}[op]


def eval_pred(p, attrs, env=None):
    """Truth value (True / False / None = UNKNOWN) of predicate ``p`` on an event."""
    if isinstance(p, N.PAnd):
        return and3(eval_pred(p.left, attrs, env), eval_pred(p.right, attrs, env))
    if isinstance(p, N.POr):
        return or3(eval_pred(p.left, attrs, env), eval_pred(p.right, attrs, env))
    if isinstance(p, N.PNot):
        return not3(eval_pred(p.child, attrs, env))
    if isinstance(p, N.Cmp):
        return compare(p.op, eval_expr(p.left, attrs, env), eval_expr(p.right, attrs, env))
    if isinstance(p, N.Like):
        v = eval_expr(p.expr, attrs, env)
        if v is None:
            return None
        if kind(v) != "str":
            _type_error("LIKE", v)
        return p.regex.search(v) is not None
    if isinstance(p, N.InSet):
        return _in_set(p, eval_expr(p.expr, attrs, env))
    if isinstance(p, N.InRange):
        v = eval_expr(p.expr, attrs, env)
        lo = eval_expr(p.lo, attrs, env)
        hi = eval_expr(p.hi, attrs, env)
        if v is None or lo is None or hi is None:
            return None
        if not (is_num(v) and is_num(lo) and is_num(hi)):
            _type_error("IN RANGE", v, lo, hi)
        return and3(compare("<=", lo, v), compare("<=", v, hi))
    if isinstance(p, N.IsNull):
        # two-valued: NULL (absent, or from arithmetic) or not; a NaN is a value
        return (eval_expr(p.expr, attrs, env) is None) != p.negated
    if isinstance(p, N.Bare):
        v = eval_expr(p.expr, attrs, env)
        if v is None:
            return None
        if kind(v) != "bool":
            _type_error("bare predicate", v)
        return v
    raise AssertionError("unknown predicate %r" % (p,))


def _in_set(p, v):
    if p.values is not None:
        numeric = all(is_num(x) for x in p.values)
    else:
        numeric = True
    if v is None:
        return None
    if numeric:
        if not is_num(v):
            _type_error("IN", v)
        if _isnan(v):
            return None
        if p.values is not None:
            r = any(compare("=", v, x) for x in p.values)
        else:
            r = True
            if p.lo is not None:
                r = r and compare(">=", v, p.lo)
            if p.hi is not None:
                r = r and compare("<=", v, p.hi)
    else:
        if kind(v) != "str":
            _type_error("IN", v)
        r = v in p.values
    return (not r) if p.negated else r
