"""Connections: one session on a ``Database``.

Owns a session's identity and its lifecycle (open/closed).  Invariant: every
statement a connection runs goes through its own ``Session`` (variables, transaction
state); several connections on one database share its catalog, storage and replica.
Deliberately not here: execution (``mzlite.coordinator``).
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from mzlite.cursor import Cursor, Result
from sql.errors import InterfaceError


class Connection:
    def __init__(self, database, session):
        self.database = database
        self.session = session
        self._closed = False

    def cursor(self) -> Cursor:
        self._check_open()
        return Cursor(self)

    def execute(self, sql: str, params: Optional[Sequence[Any]] = None) -> Cursor:
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> Cursor:
        return self.cursor().executemany(sql, seq_of_params)

    def commit(self) -> None:
        self._check_open()
        if self.session.in_transaction():
            self.database.execute_sql(self.session, "COMMIT", None)

    def rollback(self) -> None:
        self._check_open()
        if self.session.in_transaction():
            self.database.execute_sql(self.session, "ROLLBACK", None)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.database._session_closed(self.session)

    @property
    def closed(self) -> bool:
        return self._closed

    def connect(self) -> "Connection":
        """Another session on the same database."""
        return self.database.connect()

    def cancel(self) -> None:
        """Cancel the statement this connection is running (from another thread)."""
        self.session.cancel_requested = True

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
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
        self.close()
        return False
