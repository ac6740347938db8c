"""Named prepared statements: SQL's PREPARE / EXECUTE / DEALLOCATE and the wire protocol's.

Owns ``PreparedStatement`` (a statement's text, its parameters' types and its result
columns, described once when prepared) and the handlers of ``PreparePlan``,
``ExecutePlan``, ``DeallocatePlan`` and DISCARD (``ALL``: every cursor closed, every
prepared statement deallocated, every session variable reset, as PostgreSQL's; ``PLANS``,
``TEMP``, ``SEQUENCES``: mzlite has none of those per session, so there is nothing to drop).  A session's named prepared statements live in
``Session.prepared``, one namespace shared by SQL's ``PREPARE`` and the extended
protocol's named Parse, as in PostgreSQL: ``EXECUTE`` runs a statement a client
prepared with Parse, Bind finds one made by ``PREPARE``, and ``DEALLOCATE`` (``ALL``)
drops either kind (the protocol's unnamed statement is not in it).
Invariants: a name is prepared at most once (42P05), a missing one is 26000; PREPARE and
DEALLOCATE are not transactional (a ROLLBACK keeps what was prepared, as in PostgreSQL);
EXECUTE runs the inner statement with its arguments as literals of the prepared
parameter types, through the same path as any statement (so its transaction rules,
cancelation and errors are the inner statement's).
Deliberately not here: binding the arguments (``planner.bind_prepared``), describing
(``mzlite.describe``), the protocol's unnamed statement and portals (``server.session``).
"""
from __future__ import annotations

from mzlite.cursor import Result
from sql import errors as E


class PreparedStatement:
    """``sql``: the statement's text; ``param_types``: the SQL type of each ``$n``;
    ``columns``: its result's ``(name, type)`` pairs (``[]``: no rows; None: known only
    once it runs); ``from_sql``: made by SQL's PREPARE (else by the protocol's Parse)."""
    __slots__ = ("sql", "param_types", "columns", "from_sql")

    def __init__(self, sql: str, param_types, columns, from_sql: bool = False):
        self.sql, self.param_types, self.columns, self.from_sql = sql, tuple(param_types), columns, from_sql


def lookup(session, name: str) -> PreparedStatement:
    stmt = session.prepared.get(name)
    if stmt is None:
        raise E.error_for("26000", f'prepared statement "{name}" does not exist')
    return stmt


def add(session, name: str, stmt: PreparedStatement) -> None:
    if name in session.prepared:
        raise E.error_for("42P05", f'prepared statement "{name}" already exists')
    session.prepared[name] = stmt


def inner_statement(db, session, sql: str):
    """The one parsed statement of a prepared statement's text."""
    stmts = db.parse(sql, session)
    if len(stmts) != 1:
        raise E.error_for(E.SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement")
    return stmts[0]


def prepare(db, session, plan, stmt, params) -> Result:
    from mzlite.describe import describe
    if plan.name in session.prepared:
        raise E.error_for("42P05", f'prepared statement "{plan.name}" already exists')
    inner = inner_statement(db, session, plan.sql)
    types, columns = describe(db, session, [inner], plan.declared)
    add(session, plan.name, PreparedStatement(plan.sql.strip(), types, columns, from_sql=True))
    return Result("PREPARE", None)


def execute(db, session, plan, stmt, params) -> Result:
    prepared = lookup(session, plan.name)
    args = plan.bind_arguments(plan.name, prepared.param_types)
    inner = inner_statement(db, session, prepared.sql)
    return db.execute_statement(session, inner, args)


def deallocate(db, session, plan, stmt, params) -> Result:
    if plan.name is None:
        session.prepared.clear()
        return Result("DEALLOCATE ALL", None)
    lookup(session, plan.name)
    del session.prepared[plan.name]
    return Result("DEALLOCATE", None)


def discard_all(db, session, plan, stmt, params) -> Result:
    from mzlite.subscribe import close_portals
    session.refuse_in_transaction(plan)
    close_portals(session)
    session.prepared.clear()
    for name in list(session.vars):
        session.set_var(name, None)
    return Result("DISCARD ALL", None)


def discard(db, session, plan, stmt, params) -> Result:
    return Result(f"DISCARD {plan.what}", None)


def describe_execute(session, plan) -> list:
    """The result columns of ``EXECUTE name(...)``: the prepared statement's."""
    return lookup(session, plan.name).columns
