"""Clauses of a SELECT that mzlite accepts only where it can honour them: ``FOR UPDATE``
and its kin, ``SELECT ... INTO``.

Owns ``check_select_clauses``, run on every SELECT the binder binds, and ``check_ctes``
(a WITH query must be a query).  Invariant: a clause is
either honoured or refused; none is parsed and dropped.  ``FOR UPDATE / NO KEY UPDATE /
SHARE / KEY SHARE`` is accepted where PostgreSQL accepts it (mzlite runs statements one at a
time and a transaction reads at one timestamp, so a row lock has nothing to add), with
PostgreSQL's errors where it refuses it: an ``OF`` name that is not in FROM (42P01), and
DISTINCT, GROUP BY, HAVING, set operations, aggregates and window functions (0A000).  ``SELECT ... INTO`` (which creates a table) is
refused: mzlite has no CREATE TABLE AS.
Deliberately not here: binding (``planner.bind_query``).
"""
from __future__ import annotations

from pglast import ast

from planner.bind_expr import enum_name, find_aggregates, find_calls
from sql import errors

_STRENGTH = {"LCS_FORUPDATE": "FOR UPDATE", "LCS_FORNOKEYUPDATE": "FOR NO KEY UPDATE",
             "LCS_FORSHARE": "FOR SHARE", "LCS_FORKEYSHARE": "FOR KEY SHARE"}


def _is_window_call(node) -> bool:
    return isinstance(node, ast.FuncCall) and node.over is not None


def _from_names(items, out: set) -> set:
    """The names FROM items bring into scope (aliases hide the relation's own name)."""
    for it in items or ():
        if isinstance(it, ast.RangeVar):
            out.add(it.alias.aliasname if it.alias is not None else it.relname)
        elif isinstance(it, ast.JoinExpr):
            if it.alias is not None:
                out.add(it.alias.aliasname)
            else:
                _from_names((it.larg, it.rarg), out)
        elif getattr(it, "alias", None) is not None:
            out.add(it.alias.aliasname)
    return out


def check_ctes(b, wc) -> None:
    """Refuse a data-modifying statement in WITH (``WITH d AS (DELETE ... RETURNING *)``):
    mzlite's WITH queries are queries (it raised an internal error)."""
    for cte in wc.ctes or ():
        if not isinstance(cte.ctequery, ast.SelectStmt):
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "data-modifying statements in WITH are not supported",
                          cte.location)


def check_select_clauses(b, node) -> None:
    """Refuse ``node``'s (a SelectStmt's) clauses mzlite cannot honour (module docstring)."""
    if getattr(node, "intoClause", None) is not None:
        raise b.error(errors.FEATURE_NOT_SUPPORTED,
                      "SELECT ... INTO is not supported (it creates a table); use CREATE TABLE, then "
                      "INSERT INTO ... SELECT", getattr(node.intoClause.rel, "location", None))
    locking = getattr(node, "lockingClause", None)
    if not locking:
        return
    for lc in locking:
        what = _STRENGTH.get(enum_name(lc.strength), "FOR UPDATE")
        op = enum_name(node.op)
        if op not in (None, "SETOP_NONE", 0):
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{what} is not allowed with UNION/INTERSECT/EXCEPT")
        for clause, present in (("DISTINCT clause", node.distinctClause), ("GROUP BY clause", node.groupClause),
                                ("HAVING clause", node.havingClause)):
            if present:
                raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{what} is not allowed with {clause}")
        for clause, found in (("aggregate functions", find_aggregates(node.targetList, [])),
                              ("aggregate functions", find_aggregates(node.havingClause, [])),
                              ("window functions", find_calls(node.targetList, _is_window_call, []))):
            if found:
                raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{what} is not allowed with {clause}")
        if lc.lockedRels:
            names = _from_names(node.fromClause, set())
            for rv in lc.lockedRels:
                if rv.relname not in names:
                    raise b.error(errors.UNDEFINED_TABLE,
                                  f'relation "{rv.relname}" in {what} clause not found in FROM clause', rv.location)
