"""mzlite: an embedded incremental database with Materialize's SQL.

The public API (PEP 249, with what sqlite3, DuckDB and psycopg users expect; see
``docs/API.md``)::

    import mzlite
    con = mzlite.connect()                 # a private in-memory database
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (?)", (1,))
    con.execute("SELECT a FROM t").fetchall()

Owns the module-level PEP 249 surface: ``connect``, ``apilevel``, ``threadsafety``,
``paramstyle``, the exception hierarchy (defined in ``sql.errors``), the type objects and
constructors (``mzlite.types``).  Invariant: ``import mzlite`` stays cheap (the engine is
imported on first ``connect``).  Deliberately not here: anything that executes.
Only this package is public API; ``sql``, ``planner``, ``compute``, ``repl`` and
``slt`` are internals.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from mzlite.types import (BINARY, DATETIME, NUMBER, ROWID, STRING, Binary, Date, DateFromTicks, Time,
                          TimeFromTicks, Timestamp, TimestampFromTicks)
from sql.errors import (DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
                        NotSupportedError, OperationalError, ProgrammingError, QueryCanceled, Warning)

#: the package's version (pyproject.toml's, as installed; the source tree's when run from it)
__version__ = "0.1.0"
#: PEP 249 version implemented
apilevel = "2.0"
#: 2: threads may share the module and connections (statements run one at a time per database;
#: cursors may be shared too, each call on one is atomic)
threadsafety = 2
#: ``?`` placeholders; PostgreSQL's ``$1`` placeholders are accepted as well.  psycopg's ``%s``
#: and ``%(name)s`` are not (``%`` is also the modulo operator): a syntax error in text holding
#: one carries a hint saying so
paramstyle = "qmark"

__all__ = [
    "connect", "Database", "Connection", "Cursor", "Error", "Warning", "InterfaceError", "DatabaseError",
    "DataError", "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
    "NotSupportedError", "QueryCanceled", "__version__", "apilevel", "threadsafety", "paramstyle",
    "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp", "DateFromTicks",
    "TimeFromTicks", "TimestampFromTicks", "Binary",
]


def connect(database: Optional[str] = ":memory:", *, system_parameters: Optional[Mapping[str, Any]] = None,
            clock: Optional[Callable[[], int]] = None,
            session_parameters: Optional[Mapping[str, Any]] = None,
            durability: Optional[str] = None) -> "Connection":
    """Open a database and return a connection to it.

    ``database``: ``":memory:"`` (the default; also ``None``) is a new private in-memory
    database; ``":memory:NAME"`` is the named in-memory database NAME, shared by every
    connection that opens that name until the last one closes; any other string is the path
    of a data directory, opened (or created) as a durable database: its catalog, tables,
    materialized views' outputs, ALTER SYSTEM values and timestamps persist, and reopening it
    brings them all back (one process at a time: another gets 55006).  ``durability``
    (data directories only): ``"full"`` (the default) acknowledges a write once it survives
    power loss (fsync at every commit); ``"normal"`` once it survives a crash of the process.
    ``con.connect()`` opens another session on the same database.

    ``system_parameters`` sets system parameters such as
    ``enable_compute_interactive_runtime``; ``clock`` (a zero-argument callable returning
    milliseconds) replaces the wall clock, for tests.

    ``session_parameters`` sets this connection's session variables as ``SET`` would, e.g.
    ``{"sql_dialect": "sqlite"}`` to run SQLite's SQL (translated with sqlglot).

    A ``postgresql://`` (or ``postgres://``) URL or a libpq keyword string (``"host=h
    port=6875 user=u dbname=d"``) connects to a server (``mzlite serve``, Materialize,
    PostgreSQL) over psycopg 3 and returns a ``mzlite.remote.RemoteConnection`` with this
    surface; ``system_parameters``, ``clock`` and ``durability`` are the server's, and are
    refused there (``NotSupportedError``, 0A000).
    """
    from mzlite.remote import is_remote_target
    if is_remote_target(database):
        for name, given in (("system_parameters", system_parameters), ("clock", clock),
                            ("durability", durability)):
            if given is not None:
                raise NotSupportedError(f"{name}= is not supported for a remote connection: the server "
                                        f"has its own" + (" (ALTER SYSTEM SET on the server)"
                                                          if name == "system_parameters" else ""),
                                        sqlstate="0A000")
        from mzlite.remote import connect_remote
        return connect_remote(database, session_parameters=session_parameters)
    from mzlite.coordinator import open_database
    con = open_database(database, system_parameters=system_parameters, clock=clock, durability=durability)
    for name, value in (session_parameters or {}).items():
        try:
            con.session.set_var(name, value)
        except Error:
            con.close()
            raise
    return con


def __getattr__(name):  # lazy: keep `import mzlite` cheap
    if name == "Database":
        from mzlite.coordinator import Database
        return Database
    if name == "Connection":
        from mzlite.connection import Connection
        return Connection
    if name == "Cursor":
        from mzlite.cursor import Cursor
        return Cursor
    raise AttributeError(name)
