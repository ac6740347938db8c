"""Connections: one session on a ``Database``, and how ``connect()`` finds its database.

Owns a session's identity and its lifecycle (open/closed), the PEP 249 connection
methods (``cursor``, ``commit``, ``rollback``, ``close``, the context manager) with
sqlite3's conveniences (``execute``, ``executemany``, ``executescript``, ``interrupt``),
and the registry of named in-memory databases (``open_database``: ``":memory:name"``
names one database shared by every connection that opens the same name, until its last
connection closes; ``None``, ``""`` and ``":memory:"`` are a fresh private database).
Invariants: every statement a connection runs goes through its own ``Session``
(variables, transaction state); several connections on one database share its catalog,
storage and replica; a closed connection refuses every operation with
``InterfaceError``; a named database is never handed out after its last connection
closed it (a new one is made instead).
Deliberately not here: execution (``mzlite.coordinator``), durable data directories (a
later issue: a path raises ``NotSupportedError``), autocommit control (mzlite commits
each statement unless ``BEGIN`` opened a transaction, as DuckDB does).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from mzlite.cursor import Cursor, Result
from sql import errors as _errors
from sql.errors import InterfaceError

MEMORY = ":memory:"


class Connection:
    """A PEP 249 connection: one session on a database (see the module docstring).

    The exception classes are also attributes (``con.Error``, ``con.ProgrammingError``, ...),
    as PEP 249's optional extension and sqlite3 have them."""

    Warning = _errors.Warning
    Error = _errors.Error
    InterfaceError = _errors.InterfaceError
    DatabaseError = _errors.DatabaseError
    DataError = _errors.DataError
    OperationalError = _errors.OperationalError
    IntegrityError = _errors.IntegrityError
    InternalError = _errors.InternalError
    ProgrammingError = _errors.ProgrammingError
    NotSupportedError = _errors.NotSupportedError

    def __init__(self, database, session):
        self.database = database
        self.session = session
        self._closed = False

    def cursor(self) -> Cursor:
        """A new cursor on this connection."""
        self._check_open()
        return Cursor(self)

    def execute(self, sql: str, params: Optional[Sequence[Any]] = None) -> Cursor:
        """Run ``sql`` (one or more statements; parameters ``?`` or ``$1`` bound from ``params``)
        on a new cursor and return it."""
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> Cursor:
        """Run one statement once per parameter sequence (a plain INSERT's rows commit together)."""
        return self.cursor().executemany(sql, seq_of_params)

    def executescript(self, sql: str) -> Cursor:
        """Run a script of several ``;``-separated statements, without parameters (as sqlite3's
        ``executescript``); statements before a failing one stay applied.  Returns the cursor,
        holding the last statement's result."""
        return self.cursor().executescript(sql)

    def subscribe(self, query_or_name: str, *, snapshot: bool = True, progress: bool = False,
                  as_of: Optional[int] = None, up_to: Optional[int] = None,
                  max_buffered: Optional[int] = None):
        """Stream the changes of a query (or a table, view or materialized view, by name) as
        ``SUBSCRIBE`` does.  Returns a ``mzlite.subscribe.Subscription``: iterate it for
        ``Update(timestamp, diff, row)`` items in timestamp order (and ``Progress(timestamp)``
        items with ``progress=True``), ending at ``up_to``; ``.fetch(timeout, max_rows)``
        returns what is ready; ``.frontier``; ``.close()`` or ``with``.  ``max_buffered``
        caps the unread updates (see ``mzlite.subscribe``)."""
        from mzlite.subscribe import open_subscription, subscribe_sql
        self._check_open()
        sql = subscribe_sql(query_or_name, snapshot=snapshot, progress=progress, as_of=as_of, up_to=up_to)
        sub = open_subscription(self.database, self.session, sql, max_buffered=max_buffered)
        sub.python_values = True  # rows as cursor.fetch* returns them (timedelta, dict/list, list)
        return sub

    @property
    def in_transaction(self) -> bool:
        """True between ``BEGIN`` and ``COMMIT``/``ROLLBACK`` (sqlite3's attribute)."""
        return self.session.in_transaction()

    def commit(self) -> None:
        """Commit the open transaction, if any (outside ``BEGIN`` every statement commits itself)."""
        self._check_open()
        if self.session.in_transaction():
            self.database.execute_sql(self.session, "COMMIT", None)

    def rollback(self) -> None:
        """Roll back the open transaction, if any."""
        self._check_open()
        if self.session.in_transaction():
            self.database.execute_sql(self.session, "ROLLBACK", None)

    def close(self) -> None:
        """Close the connection (idempotent), discarding an open transaction; the database
        goes away with its last connection."""
        if not self._closed:
            self._closed = True
            self.session.cancel_requested = True  # a statement still running on another thread stops
            self.database._session_closed(self.session)
            if self.database._closed:
                _forget(self.database)

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    def connect(self) -> "Connection":
        """Another session on the same database (``InterfaceError`` once this one is closed)."""
        self._check_open()
        return self.database.connect()

    def cancel(self) -> None:
        """Cancel the statement this connection is running (from another thread): it raises
        ``QueryCanceled`` (57014, an ``OperationalError``) and the connection stays usable.
        Waits for reads and for another connection's statement are canceled; a call that
        starts afterwards is not affected.  psycopg's name; ``interrupt`` is sqlite3's."""
        self.session.cancel_requested = True

    interrupt = cancel

    # ------------------------------------------------------------ internals used by Cursor
    def _execute(self, sql: str, params) -> Result:
        self._check_open()
        return self.database.execute_sql(self.session, sql, params)

    def _executemany(self, sql: str, seq_of_params) -> Result:
        self._check_open()
        return self.database.execute_many(self.session, sql, seq_of_params)

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("connection already closed")

    def __enter__(self):
        self._check_open()
        return self

    def __exit__(self, exc_type, exc, tb):
        """Commit on success, roll back on an exception, and close either way."""
        try:
            if not self._closed:
                if exc_type is None:
                    self.commit()
                else:
                    self.rollback()
        finally:
            self.close()
        return False


# ---------------------------------------------------------------- finding the database

_named: dict = {}
_named_lock = threading.RLock()  # reentrant: a close inside open_database (tests force one) forgets


def open_database(database: Optional[str], *, system_parameters: Optional[Mapping[str, Any]] = None,
                  clock: Optional[Callable[[], int]] = None) -> Connection:
    """A connection to the database ``database`` names: ``None``, ``""`` or ``":memory:"``
    is a new private in-memory database; ``":memory:NAME"`` is the named in-memory database
    NAME, created by its first connection and shared by later ones until its last connection
    closes (DuckDB's spelling).  Anything else is a data directory: ``NotSupportedError``.

    ``system_parameters`` and ``clock`` configure a database when it is created; given again
    for an existing named database they must agree with it (``ProgrammingError`` otherwise;
    use ``ALTER SYSTEM SET`` to change a running database)."""
    from mzlite.coordinator import Database
    if database is not None and not isinstance(database, (str, os.PathLike)):
        raise _errors.ProgrammingError(f"database must be a string, not {type(database).__name__}")
    name = os.fspath(database) if database is not None else MEMORY
    if name in ("", MEMORY):
        return Database(None, system_parameters=system_parameters, clock=clock).connect()
    if not name.startswith(MEMORY):
        raise _errors.NotSupportedError(
            f"durable databases (data directory {name!r}) are not supported yet; use connect() or "
            f"connect(':memory:NAME') for an in-memory database", sqlstate=_errors.FEATURE_NOT_SUPPORTED)
    with _named_lock:
        db = _named.get(name)
        if db is not None and not db._closed:
            _check_same_configuration(db, name, system_parameters, clock)
            try:
                return db.connect()
            except InterfaceError:  # its last connection closed it just now
                pass
        db = Database(None, system_parameters=system_parameters, clock=clock)
        _named[name] = db
        return db.connect()


def _forget(db) -> None:
    """Drop a closed database from the registry, so its memory goes with it."""
    with _named_lock:
        for name in [n for n, d in _named.items() if d is db]:
            del _named[name]


def _check_same_configuration(db, name: str, system_parameters, clock) -> None:
    from mzlite.session import SystemParameters
    if clock is not None and clock is not db.oracle.clock:
        raise _errors.ProgrammingError(f"database {name!r} is already open with another clock")
    if system_parameters:
        wanted = SystemParameters(system_parameters)
        for key in system_parameters:
            k = key.lower()
            if wanted[k] != db.system[k]:
                raise _errors.ProgrammingError(
                    f"database {name!r} is already open with {k} = {db.system.show(k)}; use ALTER SYSTEM SET "
                    f"to change it")
