"""Correlated WITH items: CTEs (plain or WITH RECURSIVE) that read the enclosing query's row.

Owns ``bind_cte`` (how ``Binder.push_ctes`` and ``planner.recursive`` bind one WITH item) and
``correlated_cte_below`` (reading a correlated item from a subquery nested in its query).
Invariant: an item is bound against TOP whenever it can be (an *uncorrelated* CTE, usable at
any level and joined with the reader's prefix, as before); only when that cannot resolve a
name and the query is itself a correlated subquery is it bound against that query's outer
relation ``D`` (``planner.bind_query``'s decorrelation contract).  Such a *correlated* item
carries ``D``'s prefix like every relation of its level: read at that level, it is used as
is; read from a nested subquery, that subquery reads the prefix columns through every
OuterRef in between (so every level's decorrelation keys by them) and joins the item on them.
Its frame entry is ``(expr, names, types, owner)`` with ``owner`` the ``Outer`` it was bound
against.  Deliberately not here: binding queries (``planner.bind_query``), recursion
(``planner.recursive``), decorrelation constructions (``planner.decorrelate``).
"""
from __future__ import annotations

from expr.relation import Join, Project
from expr.scalar import Column
from sql import errors


def bind_cte(b, bind, outer):
    """``(bind(o), owner)`` for a WITH item: ``bind(TOP)`` with ``owner`` None when that
    works; else, for a name TOP cannot resolve inside a correlated subquery,
    ``bind(outer)`` with ``owner`` = ``outer``."""
    from planner.bind_query import TOP
    try:
        return bind(TOP), None
    except errors.Error as e:
        if not outer.arity or e.sqlstate not in (errors.UNDEFINED_TABLE, errors.UNDEFINED_COLUMN):
            raise
    return bind(outer), outer


def correlated_cte_below(b, rv, expr, owner, outer):
    """``expr`` (a correlated item of ``owner``'s level) as a relation with ``outer``'s prefix,
    for the FROM item ``rv`` of a query bound against ``outer``, nested in ``owner``'s."""
    chain = []
    o = outer.ref
    while o is not None and o.scope.outer is not owner.ref:
        chain.append(o)
        o = o.scope.outer
    if o is None:  # not below the owner (another WITH item bound on its own): bind_cte retries it
        raise b.error(errors.UNDEFINED_TABLE, f'WITH query "{rv.relname}" reads columns of an enclosing '
                      "query and cannot be read here", rv.location)
    chain.append(o)
    p = owner.arity
    cols = []
    for i in range(p):  # owner's prefix column i, followed down to a column of outer's prefix
        c = i
        for link in reversed(chain):
            link.used.add(c)
            c = link.mapping[c] if link.mapping is not None else c
        cols.append(c)
    q = outer.arity
    eqs = tuple((Column(c), Column(q + i)) for i, c in enumerate(cols))
    keep = tuple(range(q)) + tuple(range(q + p, q + expr.arity()))
    return Project(Join((outer.rel, expr), eqs), keep)
