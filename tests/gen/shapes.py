"""Structural comparison of the intended tree with the oracle's parse (predicates by text
are not compared: only the CEL tree and the filter variables/connectives)."""


def cel_shape(node):
    k = node[0]
    if k == "atom":
        return ("atom", node[1], node[2])
    if k == "not":
        return ("not", cel_shape(node[1]))
    if k == "as":
        return ("as", cel_shape(node[1]), node[2])
    if k == "plus":
        return ("plus", cel_shape(node[1]), node[2])
    if k == "filter":
        return ("filter", cel_shape(node[1]), _theta_shape(node[2]))
    if k == "seq":
        return ("seq", cel_shape(node[1]), cel_shape(node[2]), node[3])
    if k == "absent_seq":  # `l ; ABSENT(a) ; r` parses as (l ; ABSENT(a)) ; r
        absent = ("absent",) + tuple(cel_shape(a) for a in _alternatives(node[2]))
        return ("seq", ("seq", cel_shape(node[1]), absent, False), cel_shape(node[3]), False)
    if k == "and":
        return ("and", cel_shape(node[1]), cel_shape(node[2]))
    return ("or", cel_shape(node[1]), cel_shape(node[2]))


def _alternatives(a):
    """The alternatives of an ABSENT operand (``("any", a, b)`` nests to the right)."""
    return [a] if a[0] != "any" else [a[1]] + _alternatives(a[2])


def _theta_shape(t):
    if t[0] == "term":
        return ("term", t[1])
    return (t[0], _theta_shape(t[1]), _theta_shape(t[2]))


def oracle_shape(n):
    """The same shape from an oracle AST (tests/oracle/nodes.py)."""
    from oracle import nodes as N

    if isinstance(n, N.Atom):
        return ("atom", n.stream, n.type)
    if isinstance(n, N.Not):
        return ("not", oracle_shape(n.inner))
    if isinstance(n, N.Absent):
        return ("absent",) + tuple(oracle_shape(b) for b in n.branches)
    if isinstance(n, N.As):
        return ("as", oracle_shape(n.child), n.name)
    if isinstance(n, N.Plus):
        return ("plus", oracle_shape(n.child), n.contiguous)
    if isinstance(n, N.Filter):
        return ("filter", oracle_shape(n.child), _oracle_theta(n.theta))
    if isinstance(n, N.Seq):
        return ("seq", oracle_shape(n.left), oracle_shape(n.right), n.contiguous)
    if isinstance(n, N.Or):
        return ("or", oracle_shape(n.left), oracle_shape(n.right))
    if isinstance(n, N.And):
        return ("and", oracle_shape(n.left), oracle_shape(n.right))
    raise AssertionError(n)


def _oracle_theta(t):
    from oracle import nodes as N

    if isinstance(t, N.FTerm):
        return ("term", t.var)
    return ("and" if isinstance(t, N.FAnd) else "or", _oracle_theta(t.left), _oracle_theta(t.right))
