"""Lexer of CEQL (docs/language.md#s2-1) and of CREATE STREAM declarations (docs/language.md#s1-1).

Tokens are ``Token(kind, value, quoted, offset)`` with kind one of
KW (value: the upper-cased keyword), IDENT (value: the name; ``quoted`` is True for a
back-quoted identifier), INT (value: a Python int), DOUBLE (value: the literal text),
STRING (value: the decoded text), SYM (value: the symbol text), EOF.
"""

from collections import namedtuple

from .errors import OracleError

RESERVED = frozenset(
    """ALL AND ANY AS BY CONSUME DISTINCT EVENT EVENTS FILTER FROM HOUR HOURS IN LAST
    LIKE LIMIT MAX MINUTE MINUTES NEXT NONE NOT OR PARTITION RANGE SECOND SECONDS SELECT
    STREAM STRICT UNLESS WHERE WITHIN""".split()
)

I64_MAX = 2 ** 63 - 1

Token = namedtuple("Token", "kind value quoted offset")

# longest symbols first
SYMBOLS = [":+", "<=", ">=", "==", "!=", "<>", "..", ".",
           "(", ")", "[", "]", "{", "}", ",", ";", ":", "+", "-", "*", "/", "%", "<", ">", "="]

WHITESPACE = " \t\r\n\x0b"


def _is_ident_start(c):
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_ident_char(c):
    return _is_ident_start(c) or ("0" <= c <= "9")


def _is_digit(c):
    return "0" <= c <= "9"


def _exp_len(text, i):
    """Length of an exponent ``[eE] '-'? [0-9]+`` starting at i, or 0."""
    n = len(text)
    if i < n and text[i] in "eE":
        k = i + 1
        if k < n and text[k] == "-":
            k += 1
        d = k
        while k < n and _is_digit(text[k]):
            k += 1
        if k > d:
            return k - i
    return 0


def tokenize(text, reserved=RESERVED):
    """Split ``text`` into tokens; raises OracleError('E0100'/'E0101')."""
    toks = []
    i = 0
    n = len(text)
    while True:
        # whitespace and comments
        while i < n:
            c = text[i]
            if c in WHITESPACE:
                i += 1
            elif text.startswith("--", i):
                j = text.find("\n", i)
                i = n if j < 0 else j + 1
            elif text.startswith("/*", i):
                j = text.find("*/", i + 2)
                i = n if j < 0 else j + 2  # unterminated: runs to the end of the text
            else:
                break
        if i >= n:
            toks.append(Token("EOF", None, False, n))
            return toks
        c = text[i]
        start = i
        if _is_ident_start(c):
            while i < n and _is_ident_char(text[i]):
                i += 1
            word = text[start:i]
            if word.upper() in reserved:
                toks.append(Token("KW", word.upper(), False, start))
            else:
                toks.append(Token("IDENT", word, False, start))
            continue
        if c == "`":
            i += 1
            buf = []
            while True:
                if i >= n:
                    raise OracleError("E0100", "unterminated back-quoted identifier at offset %d" % start)
                if text[i] == "`":
                    if i + 1 < n and text[i + 1] == "`":
                        buf.append("`")
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(text[i])
                i += 1
            toks.append(Token("IDENT", "".join(buf), True, start))
            continue
        if c in "'\"":
            q = c
            i += 1
            buf = []
            while True:
                if i >= n:
                    raise OracleError("E0100", "unterminated string literal at offset %d" % start)
                if text[i] == q:
                    if i + 1 < n and text[i + 1] == q:
                        buf.append(q)
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(text[i])
                i += 1
            toks.append(Token("STRING", "".join(buf), False, start))
            continue
        if _is_digit(c) or (c == "." and i + 1 < n and _is_digit(text[i + 1])):
            # number: [0-9]+ | [0-9]+ '.' [0-9]+ exp? | '.' [0-9]+ exp? | [0-9]+ '.' exp
            while i < n and _is_digit(text[i]):
                i += 1
            int_end = i
            is_double = False
            if i < n and text[i] == ".":
                if i + 1 < n and _is_digit(text[i + 1]):
                    i += 1
                    while i < n and _is_digit(text[i]):
                        i += 1
                    i += _exp_len(text, i)
                    is_double = True
                else:
                    e = _exp_len(text, i + 1)
                    if e:
                        i = i + 1 + e
                        is_double = True
                    elif start == int_end:  # cannot happen ('.' followed by a digit)
                        raise OracleError("E0100", "bad number at offset %d" % start)
            if is_double:
                toks.append(Token("DOUBLE", text[start:i], False, start))
            else:
                v = int(text[start:int_end])
                # 2^63 right after a minus may be -2^63 (the parser decides, docs/language.md#s2-1).
                after_minus = bool(toks) and toks[-1].kind == "SYM" and toks[-1].value == "-"
                if v > I64_MAX and not (v == I64_MAX + 1 and after_minus):
                    raise OracleError("E0101", "integer literal %s does not fit in i64" % text[start:int_end])
                toks.append(Token("INT", v, False, start))
            continue
        for s in SYMBOLS:
            if text.startswith(s, i):
                toks.append(Token("SYM", s, False, start))
                i += len(s)
                break
        else:
            raise OracleError("E0100", "unexpected character %r at offset %d" % (c, start))
