"""Queries with one static error injected, of a kind drawn from docs/language.md#s4's table."""

from __future__ import annotations

from typing import Dict

from hypothesis import strategies as st

from .known_bugs import avoid
from .profiles import Profile, prof_decl
from .trees import atoms, bindable


def inject_static_error(draw, prof: Profile, tree, clauses: Dict[str, str]) -> None:
    """Turns the (valid) query into one with a single static error, of a kind drawn at random
    (docs/language.md#s4's table); both sides must report the same code. Some injections are valid in open mode
    (e.g. PARTITION BY an attribute no event has): both sides must then agree on the output."""
    where = clauses["where"]
    kwd, body = where.split(None, 1) if where.strip() else ("WHERE", "A")
    sep = where[:len(where) - len(where.lstrip())]
    bound = sorted((v for v in bindable(tree, prof_decl(prof)) if not isinstance(v, tuple)), key=str)
    var = draw(st.sampled_from(bound)) if bound else None
    types = sorted({a[2] for a, _ in atoms(tree)})
    kinds = ["E0100", "E0100b", "E0203", "E0205", "E0206", "E0301"]
    if var is not None:
        kinds += ["E0101", "E0101b", "E0300"]
    if prof.schema:
        kinds += ["E0200", "E0201", "E0202", "E0206b", "E0207"]
        if var is not None:
            kinds += ["E0204", "E0300b", "E0300c"]
    if not avoid("regex_error_order"):
        kinds.append("E0101+")  # an invalid regex and a later-phase error: E0101 wins (docs/language.md#s4 order)
    kind = draw(st.sampled_from(kinds))

    def set_where(new_body):
        clauses["where"] = "%s%s %s" % (sep, kwd, new_body)

    if kind == "E0100":
        set_where("(%s) ; ; B" % body)
    elif kind == "E0100b":
        clauses["limit"] = draw(st.sampled_from([" LIMIT", " LIMIT -1", " LIMIT 1 LIMIT 2", " ;"]))
    elif kind == "E0101":
        set_where("(%s) FILTER %s[s LIKE '%s']" % (body, var, draw(st.sampled_from(["(", "[a", "a{2,1}", "*"]))))
    elif kind == "E0101+":
        set_where("(%s) FILTER %s[s LIKE '(']" % (body, draw(st.sampled_from(["zz", "C", "A"]))))
    elif kind == "E0101b":
        set_where("(%s) FILTER %s[v > 99999999999999999999]" % (body, var))
    elif kind == "E0203":
        set_where("(%s) FILTER zz[v > 1]" % body)
    elif kind == "E0205":
        set_where("(%s) AS %s" % (body, draw(st.sampled_from(types))))
    elif kind == "E0206":
        clauses["window"] = draw(st.sampled_from([" WITHIN 0 SECONDS", " WITHIN 0 MS",
                                                  " WITHIN 99999999999 DAYS"]))
    elif kind == "E0300":
        set_where("(%s) FILTER %s[v IN {1, 'a'}]" % (body, var))
    elif kind == "E0301":
        other = draw(st.sampled_from(types))
        set_where("(%s) ; (NOT(C) FILTER %s[v > 1])" % (body, other))
    elif kind == "E0200":
        clauses["head"] = clauses["head"].split(" FROM")[0].split(" from")[0] + " FROM Q"
    elif kind == "E0201":
        set_where("(%s) ; Q" % body)
    elif kind == "E0202":
        set_where("(%s) ; S9>A" % body)
    elif kind == "E0204":
        set_where("(%s) FILTER %s[zz > 1]" % (body, var))
    elif kind == "E0206b":
        clauses["window"] = draw(st.sampled_from([" WITHIN 2 [s]", " WITHIN 2 [d]", " WITHIN 2 [zz]"]))
    elif kind == "E0207":
        clauses["partition"] = " PARTITION BY [zz]"
    elif kind == "E0300b":
        set_where("(%s) FILTER %s[%s]" % (body, var, draw(st.sampled_from(
            ["s > 'a'", "v LIKE 'a'", "v = 'x'", "b + 1 > 0", "v", "s IN {1, 2}", "-s = 1", "s IN RANGE(1, 2)"]))))
    elif kind == "E0300c":
        set_where("(%s) FILTER %s[d = s]" % (body, var))
