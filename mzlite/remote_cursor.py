"""The cursor of a remote connection (``mzlite.remote``): the embedded ``Cursor``'s surface over psycopg.

Owns ``RemoteCursor`` (execute with the ``?``/``$n`` paramstyle, executemany, executescript,
fetch*, ``description`` with the embedded type codes and sizes, ``rowcount``,
``statusmessage``, SUBSCRIBE streamed from a session of its own) and ``RemoteCopy``
(psycopg's ``Copy`` with mzlite's errors).

Invariants: every call on a cursor is atomic with respect to the others (``self._lock``) and
runs one statement at a time on the connection (``connection.statement_lock``); nothing is sent that
psycopg's ``execute`` could not bring back (COPY with STDIN/STDOUT goes through ``copy``); a
parameter count that does not fit the text is refused before anything is sent, with the
embedded engine's SQLSTATE (08P01 too many, 42P02 a missing ``$n``); a plain INSERT's
parameter sets commit together (executemany wraps them in one transaction).
Deliberately not here: connecting and errors (``mzlite.remote``), the statement texts
(``mzlite.remote_text``).
"""
from __future__ import annotations

import threading
from typing import Any, Iterable, Optional, Sequence

import psycopg

from mzlite.cursor import Column, checked_parameter_sets
from mzlite.remote import RemoteConnection, parameters, Translating, typmod, translate_error, type_display
from mzlite.remote_text import (check_count, check_sendable, placeholders, statement_words, prepared,
                                split_statements, translate_placeholders)
from mzlite.connection import FixedSetting
from mzlite.types import check_parameters, column_sizes
from sql import errors as _errors
from sql.errors import InterfaceError, NotSupportedError, ProgrammingError

__all__ = ["RemoteCursor", "RemoteCopy"]

#: ``_status``/``_rowcount``: read them from the psycopg cursor of the last statement
_FROM_CURSOR = object()


class RemoteCursor:
    """A PEP 249 cursor over a ``RemoteConnection`` (the embedded ``Cursor``'s surface)."""

    arraysize = 1
    #: ``interval`` columns come back as ``datetime.timedelta`` (a month is 30 days); False
    #: gives the server's text (``1 mon 2 days``), months kept, as a shell prints it
    intervals_as_timedelta = True
    documents_as_python = FixedSetting(
        True, lambda v: bool(v), "documents_as_python = False is not supported on a remote connection",
        "True: jsonb and arrays come back as Python values.")

    def __init__(self, connection: RemoteConnection):
        self.connection = connection
        self.lastrowid = None
        self._cur = None  # the psycopg cursor holding the last result
        self._stream = None  # a SUBSCRIBE's RemoteStream (mzlite.remote_subscribe)
        self._closed = False
        self._lock = threading.RLock()
        self._status: Optional[str] = None
        self._rowcount = -1
        self._description = None

    # ------------------------------------------------------------ execution
    def _reset(self) -> None:
        if self._cur is not None:
            self._cur.close()
        if self._stream is not None:
            self._stream.close()
        self._cur = self._stream = None
        self._status, self._rowcount, self._description = None, -1, None

    def _done(self, cur) -> None:
        self._cur = cur  # statusmessage and rowcount are read from it when asked for
        self._status = self._rowcount = _FROM_CURSOR
        self._description = None

    def execute(self, sql: str, params: Optional[Sequence[Any]] = None) -> "RemoteCursor":
        """Run ``sql`` with ``params`` bound to its ``?`` (or ``$1``) placeholders; returns the cursor."""
        with self._lock:
            self._check_open()
            params = None if params is None else check_parameters(params)
            if not isinstance(sql, str):
                raise ProgrammingError(f"the statement must be a string, not {type(sql).__name__}")
            if self._cur is not None or self._stream is not None:
                self._reset()
            text, inserts, used, subscribe = prepared(sql)
            if params is not None:
                check_count(used, len(params))
            con = self.connection
            if subscribe is not None:
                if params:
                    raise NotSupportedError("SUBSCRIBE takes no parameters on a remote connection",
                                            sqlstate="0A000")
                from mzlite.remote_subscribe import RemoteStream
                self._stream = RemoteStream(con, sql.strip().rstrip(";"), bounded="UP" in subscribe)
                self._status = "SUBSCRIBE"
                return self
            with con.statement_lock:
                cur = con.pgconn.cursor()
                if not self.intervals_as_timedelta:
                    from psycopg.types.string import TextLoader
                    cur.adapters.register_loader("interval", TextLoader)
                try:
                    cur.execute(text, parameters(params) if params else None, prepare=False)
                    while cur.nextset():  # several statements: the last one's result, as embedded
                        pass
                except BaseException as e:
                    cur.close()
                    if isinstance(e, psycopg.Error):
                        raise translate_error(e, inserts) from None
                    raise
            self._done(cur)
            return self

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> "RemoteCursor":
        """Run one statement per parameter sequence; ``rowcount`` is the total affected.  A plain
        INSERT's rows commit together (in one transaction), as embedded."""
        with self._lock:
            self._check_open()
            if isinstance(seq_of_params, (str, bytes)):
                raise ProgrammingError("executemany takes a sequence of parameter sequences")
            param_sets = checked_parameter_sets(seq_of_params, check_parameters)
            self._reset()
            words = statement_words(sql)
            if len(words) != 1:
                raise ProgrammingError(f"executemany runs exactly one statement, got {len(words)}",
                                       sqlstate="42601")
            check_sendable(sql)
            text, inserts, used = placeholders(sql)
            for p in param_sets:
                check_count(used, len(p))
            con = self.connection
            wrap = words[0][0] == "INSERT" and not con.in_transaction and len(param_sets) > 1
            with con.statement_lock, Translating(inserts):
                cur = con.pgconn.cursor()
                try:
                    if not param_sets:
                        self._status, self._rowcount = None, 0
                        cur.close()
                        return self
                    if wrap:
                        cur.execute("BEGIN")
                    try:
                        cur.executemany(text, [parameters(p) for p in param_sets])
                    except BaseException:
                        if wrap and not con.pgconn.closed:
                            _quiet(lambda: cur.execute("ROLLBACK"))
                        raise
                    rowcount = cur.rowcount
                    if wrap:
                        cur.execute("COMMIT")
                    self._status, self._rowcount = None, rowcount
                finally:
                    cur.close()
            return self

    def executescript(self, sql: str) -> "RemoteCursor":
        """Run ``;``-separated statements one by one, without parameters (sqlite3's method):
        statements before a failing one stay applied."""
        with self._lock:
            self._check_open()
            if not isinstance(sql, str):
                raise ProgrammingError(f"the script must be a string, not {type(sql).__name__}")
            for stmt in split_statements(sql):
                self.execute(stmt)
            return self

    def copy(self, sql: str, params: Optional[Sequence[Any]] = None):
        """``COPY ... FROM STDIN`` / ``TO STDOUT`` in psycopg's shape (``with cur.copy(...) as
        copy: copy.write_row(...)``; iterate it, ``read()`` or ``rows()`` for TO STDOUT)."""
        with self._lock:
            self._check_open()
            params = None if params is None else check_parameters(params)
            self._reset()
            text, inserts = translate_placeholders(sql)
            words = statement_words(sql)
            if len(words) != 1 or words[0][0] != "COPY" or not ({"STDIN", "STDOUT"} & set(words[0][1])):
                raise ProgrammingError("copy() runs a COPY ... FROM STDIN or COPY ... TO STDOUT statement")
            return RemoteCopy(self, text, parameters(params) if params else None, inserts,
                              is_from="STDIN" in words[0][1])

    # ------------------------------------------------------------ results
    @property
    def description(self):
        if self._stream is not None:
            return self._stream.description  # already the remote cursor's Column tuples
        cur = self._cur
        if cur is None or cur.description is None:
            return None
        if self._description is None:
            ad = self.connection.pgconn.adapters
            out = []
            for c in cur.description:
                display = type_display(c.type_code, ad)
                sizes = column_sizes(display, typmod(display, c._fmod))
                out.append(Column(c.name, display, *sizes))
            self._description = out
        return self._description

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount if self._rowcount is _FROM_CURSOR else self._rowcount

    @property
    def statusmessage(self) -> Optional[str]:
        return self._cur.statusmessage if self._status is _FROM_CURSOR else self._status

    def _rows_cursor(self):
        self._check_open()
        if self._stream is not None:
            return None
        if self._cur is None or self._cur.description is None:
            raise ProgrammingError("no results to fetch")
        return self._cur

    def fetchone(self):
        """The next row, or None when there are no more (SUBSCRIBE: waits for the next row)."""
        with self._lock:
            cur = self._rows_cursor()
            if cur is None:
                got = self._stream.fetch(1)
                return got[0] if got else None
            try:
                return cur.fetchone()
            except psycopg.Error as e:
                raise translate_error(e) from None

    def fetchmany(self, size: Optional[int] = None) -> list:
        with self._lock:
            cur = self._rows_cursor()
            n = self.arraysize if size is None else size
            if n < 0:
                raise ProgrammingError(f"fetchmany size must not be negative, got {n}")
            if cur is None:
                return self._stream.fetch(n) if n else []
            try:
                return cur.fetchmany(n) if n else []
            except psycopg.Error as e:
                raise translate_error(e) from None

    def fetchall(self) -> list:
        """All remaining rows.  SUBSCRIBE: only when UP TO bounds it (waits for the end)."""
        with self._lock:
            cur = self._rows_cursor()
            if cur is None:
                if not self._stream.bounded:
                    raise ProgrammingError("fetchall() on a SUBSCRIBE without UP TO would never return: use "
                                           "fetchmany() or iterate the cursor, or bound the SUBSCRIBE with UP TO")
                out = []
                while True:
                    got = self._stream.fetch(None)
                    if not got:
                        return out
                    out.extend(got)
            try:
                return cur.fetchall()
            except psycopg.Error as e:
                raise translate_error(e) from None

    def __iter__(self):
        return self

    def __next__(self):
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    def setinputsizes(self, sizes) -> None:
        """Does nothing (PEP 249 allows that)."""

    def setoutputsize(self, size, column=None) -> None:
        """Does nothing (PEP 249 allows that)."""

    def copy_done(self, status: Optional[str], rowcount: int) -> None:
        self._status, self._rowcount = status, rowcount

    def close(self) -> None:
        """Close the cursor (idempotent); a SUBSCRIBE it streams ends first, without the
        cursor's lock, so a fetch waiting on another thread returns."""
        stream = self._stream
        if stream is not None:
            stream.close()
        with self._lock:
            self._closed = True
            self._reset()

    @property
    def closed(self) -> bool:
        return self._closed or self.connection.closed

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("cursor already closed")
        if self.connection.closed:
            raise InterfaceError("connection already closed")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _quiet(fn) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - cleanup after an error that is being raised
        pass


class RemoteCopy:
    """What ``RemoteCursor.copy`` returns: psycopg's ``Copy`` with mzlite's errors; leaving the
    ``with`` block ends the COPY (FROM STDIN loads what was written; an exception loads nothing)."""

    def __init__(self, cursor: RemoteCursor, text: str, params, inserts: tuple, is_from: bool):
        self.cursor = cursor
        self._inserts = inserts
        self._is_from = is_from
        con = cursor.connection
        con.statement_lock.acquire()
        try:
            self._pgcur = con.pgconn.cursor()
            self._cm = self._pgcur.copy(text, params)
            with Translating(inserts):
                self._copy = self._cm.__enter__()
        except BaseException:
            con.statement_lock.release()
            raise

    def __enter__(self) -> "RemoteCopy":
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        con = self.cursor.connection
        try:
            with Translating(self._inserts):
                self._cm.__exit__(kind, exc, tb)
            self.cursor.copy_done(self._pgcur.statusmessage, self._pgcur.rowcount)
        except _errors.Error as e:
            if kind is None:
                raise
            if e.sqlstate != "57014":  # psycopg's own abort of the COPY the block's exception ended
                raise
        finally:
            self._pgcur.close()
            con.statement_lock.release()
        return False

    def _need(self, sending: bool) -> None:
        if sending and not self._is_from:
            raise ProgrammingError("this COPY sends data (TO STDOUT): read it instead")
        if not sending and self._is_from:
            raise ProgrammingError("this COPY receives data (FROM STDIN): write it instead")

    def write(self, data) -> None:
        self._need(True)
        with Translating(self._inserts):
            self._copy.write(data)

    def write_row(self, row) -> None:
        self._need(True)
        with Translating(self._inserts):
            self._copy.write_row(row)

    def __iter__(self):
        self._need(False)
        with Translating(self._inserts):
            for chunk in self._copy:
                yield bytes(chunk)

    def read(self) -> bytes:
        self._need(False)
        with Translating(self._inserts):
            return bytes(self._copy.read())

    def rows(self):
        self._need(False)
        with Translating(self._inserts):
            for row in self._copy.rows():
                yield tuple(row)
