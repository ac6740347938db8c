"""Describing a statement before it runs: its parameters' types and its result columns.

Owns ``describe``, what the PostgreSQL wire protocol's Describe (and asyncpg's and
psycopg's prepared statements) need from the engine: the SQL type of each ``$n`` (the
client's declared type where it gave one, else inferred by ``planner.describe_statement``)
and the ``(name, type)`` columns the statement will return, without running it.
Invariants: nothing here changes the database (a plan built here is never applied; the
statements run to learn their columns are the side-effect-free ``SHOW``/``EXPLAIN``);
the answer is computed under the statement lock, against one catalog version.
Deliberately not here: encoding types as OIDs (``server.pgtypes``), executing the
statement with values (``Database.execute_sql``).
"""
from __future__ import annotations

from typing import Optional, Sequence

from planner import describe_statement, plans as P

#: plans that return rows whose columns are only known by running them; they change
#: nothing, so running them to describe them is safe
_RUN_TO_DESCRIBE = (P.ShowObjectsPlan, P.ShowVariablePlan, P.ShowCreatePlan, P.ExplainPlan)


def describe(db, session, stmts, declared: Sequence[Optional[str]] = ()):
    """``(parameter types, columns)`` of the one parsed statement in ``stmts`` (called by
    ``Database.describe`` under the statement lock): ``columns`` is a list of ``(name,
    type)``, ``[]`` when it returns no rows, None when that is only known once it runs
    (SUBSCRIBE, FETCH).  ``declared[k]``, when not None, is parameter k's type."""
    from mzlite import sequencer
    if not stmts:
        return (), []
    if len(stmts) > 1:
        from sql.errors import error_for
        raise error_for("42601", "cannot insert multiple commands into a prepared statement")
    stmt = stmts[0]
    types, plan = db.guard(session, lambda: describe_statement(stmt, db.catalog, declared), stmt)
    if isinstance(plan, P.SelectPlan):
        return types, [(n, t) for n, t in plan.columns]
    if isinstance(plan, P.ExecutePlan):
        from mzlite.prepared import describe_execute
        return types, db.guard(session, lambda: describe_execute(session, plan), stmt)
    if isinstance(plan, P.InsertPlan) or isinstance(plan, (P.UpdatePlan, P.DeletePlan)):
        cols = getattr(plan, "returning_columns", ()) or ()
        return types, [(n, t) for n, t in cols]
    if isinstance(plan, _RUN_TO_DESCRIBE) and not stmt.param_count:
        result = db.guard(session, lambda: sequencer.sequence(db, session, plan, stmt, [()]), stmt)
        return types, list(result.columns) if result.columns is not None else []
    if isinstance(plan, P.FetchPlan) and plan.move:
        return types, []  # MOVE returns no rows
    if isinstance(plan, (P.SubscribePlan, P.FetchPlan)):
        return types, None
    return types, []
