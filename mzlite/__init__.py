"""mzlite: an embedded incremental database with Materialize's SQL.

The public API (PEP 249 shaped)::

    import mzlite
    con = mzlite.connect()                 # in memory
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (?)", (1,))
    con.execute("SELECT a FROM t").fetchall()

Only this package is public API; ``sql``, ``planner``, ``compute``, ``repl`` and
``slt`` are internals.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from sql.errors import (DatabaseError, DataError, Error, IntegrityError, InterfaceError, InternalError,
                        NotSupportedError, OperationalError, ProgrammingError, QueryCanceled, Warning)

apilevel = "2.0"
threadsafety = 2  # connections may be shared between threads; each runs one statement at a time
paramstyle = "qmark"

__all__ = [
    "connect", "Database", "Connection", "Cursor", "Error", "Warning", "InterfaceError", "DatabaseError",
    "DataError", "OperationalError", "IntegrityError", "InternalError", "ProgrammingError",
    "NotSupportedError", "QueryCanceled", "apilevel", "threadsafety", "paramstyle",
]


def connect(path: Optional[str] = None, *, system_parameters: Optional[Mapping[str, Any]] = None,
            clock: Optional[Callable[[], int]] = None) -> "Connection":
    """Open a new database (in memory when ``path`` is None) and return a connection to it.

    ``system_parameters`` sets system parameters such as
    ``enable_compute_interactive_runtime``; ``clock`` (a zero-argument callable returning
    milliseconds) replaces the wall clock, for tests.
    """
    from mzlite.coordinator import Database
    db = Database(path, system_parameters=system_parameters, clock=clock)
    return db.connect()


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
