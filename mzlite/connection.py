"""Connections: one session on a ``Database``, and how ``connect()`` finds its database.

Owns a session's identity and its lifecycle (open/closed), the PEP 249 connection
methods (``cursor``, ``commit``, ``rollback``, ``close``, the context manager) with
sqlite3's conveniences (``execute``, ``executemany``, ``executescript``, ``interrupt``).
Invariants: every statement a connection runs goes through its own ``Session``
(variables, transaction state); several connections on one database share its catalog,
storage and replica; a closed connection refuses every operation with
``InterfaceError``.
Deliberately not here: execution and finding the database ``connect()`` names
(``mzlite.coordinator``: ``open_database``), durable data directories (a later issue: a
path raises ``NotSupportedError``), autocommit control (mzlite commits each statement
unless ``BEGIN`` opened a transaction, as DuckDB does: ``autocommit``, sqlite3's
``isolation_level``, ``row_factory`` and ``text_factory``, psycopg's ``read_only`` report that mode and refuse
any other value rather than ignore it).
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from mzlite.cursor import Cursor
from mzlite.subscribe import subscribe_sql
from sql import errors as _errors
from sql.errors import InterfaceError


class FixedSetting:
    """A driver setting with one value in mzlite: reading gives it, setting a value ``accepts``
    takes (and changes nothing), any other raises NotSupportedError (0A000)."""

    def __init__(self, value, accepts, refusal: str, doc: str):
        self.value, self.accepts, self.refusal, self.__doc__ = value, accepts, refusal, doc

    def __get__(self, obj, owner=None):
        return self if obj is None else self.value

    def __set__(self, obj, value) -> None:
        if not self.accepts(value):
            raise _errors.NotSupportedError(self.refusal, sqlstate="0A000")


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

    # Settings other drivers have, which a user may set expecting their effect: the value
    # mzlite has is accepted, any other is refused (never set and ignored).
    autocommit = FixedSetting(
        True, bool, "autocommit off is not supported: open a transaction with BEGIN "
        "(or execute('BEGIN')) and end it with commit() or rollback()",
        "Always True: each statement commits unless ``BEGIN`` opened a transaction.")
    isolation_level = FixedSetting(
        None, lambda v: v is None, "isolation_level (implicit transactions) is not supported: use BEGIN; "
        "SET transaction_isolation chooses how reads see time",
        "sqlite3's: None (autocommit), the only mode mzlite has.")
    row_factory = FixedSetting(
        None, lambda v: v is None, "row_factory is not supported: rows are tuples",
        "sqlite3's: None (rows are tuples), the only one mzlite has.")
    text_factory = FixedSetting(
        str, lambda v: v is str, "text_factory is not supported: text values are str (cast to bytea for bytes)",
        "sqlite3's: str (text values are str), the only one mzlite has.")
    read_only = FixedSetting(
        False, lambda v: not v, "read_only connections are not supported: use BEGIN READ ONLY",
        "psycopg's: False; use BEGIN READ ONLY for a read-only transaction.")

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
        self._check_open()
        sql = subscribe_sql(query_or_name, snapshot=snapshot, progress=progress, as_of=as_of, up_to=up_to)
        sub = self.database.subscribe(self.session, sql, max_buffered=max_buffered)
        sub.python_values = True  # rows as cursor.fetch* returns them (timedelta, dict/list, list)
        return sub

    def describe(self, sql: str, param_types=()):
        """``(parameter types, columns)`` of the one statement ``sql`` without running it:
        the SQL type name of each ``$n`` (``param_types[k]`` where given, else inferred as
        PostgreSQL infers it) and its result's ``(name, type)`` columns (``[]``: no rows;
        None: known only once it runs, as for SUBSCRIBE).  The wire protocol's Describe."""
        self._check_open()
        return self.database.describe(self.session, sql, tuple(param_types))

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
            self.database.session_closed(self.session)

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
