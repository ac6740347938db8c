"""PEP 249 cursors.

Owns a cursor's result state: ``description``, the rows not yet fetched, ``rowcount``
and ``statusmessage`` (psql's command tag).  Invariant: a cursor holds the complete
result of its last statement (results are computed eagerly by the coordinator), so
fetching never touches the engine.  Deliberately not here: execution (the
``Database`` does it), streaming results of SUBSCRIBE (a later issue).
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from sql.errors import InterfaceError, ProgrammingError


class Column(tuple):
    """A ``description`` entry: PEP 249's 7-tuple with names."""

    def __new__(cls, name, type_code, display_size=None, internal_size=None, precision=None, scale=None,
                null_ok=None):
        return super().__new__(cls, (name, type_code, display_size, internal_size, precision, scale, null_ok))

    name = property(lambda self: self[0])
    type_code = property(lambda self: self[1])
    null_ok = property(lambda self: self[6])


class Result:
    """What one statement produced."""
    __slots__ = ("columns", "rows", "rowcount", "status")

    def __init__(self, status: str, columns=None, rows=None, rowcount: int = -1):
        self.status = status
        #: ``[(name, display_type)]`` for statements that return rows, else ``None``
        self.columns = columns
        self.rows = rows if rows is not None else []
        self.rowcount = rowcount


class Cursor:
    arraysize = 1

    def __init__(self, connection):
        self.connection = connection
        self._result: Optional[Result] = None
        self._pos = 0
        self._closed = False
        self.lastrowid = None

    # ------------------------------------------------------------ execution
    def execute(self, sql: str, params: Optional[Sequence[Any]] = None) -> "Cursor":
        self._check_open()
        self._result = self.connection._execute(sql, params)
        self._pos = 0
        return self

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> "Cursor":
        self._check_open()
        self._result = self.connection._executemany(sql, seq_of_params)
        self._pos = 0
        return self

    # ------------------------------------------------------------ results
    @property
    def description(self):
        if self._result is None or self._result.columns is None:
            return None
        return [Column(name, typ) for name, typ in self._result.columns]

    @property
    def rowcount(self) -> int:
        return -1 if self._result is None else self._result.rowcount

    @property
    def statusmessage(self) -> Optional[str]:
        return None if self._result is None else self._result.status

    def _rows(self) -> list:
        if self._result is None or self._result.columns is None:
            raise ProgrammingError("no results to fetch")
        return self._result.rows

    def fetchone(self):
        rows = self._rows()
        if self._pos >= len(rows):
            return None
        self._pos += 1
        return rows[self._pos - 1]

    def fetchmany(self, size: Optional[int] = None) -> list:
        rows = self._rows()
        n = self.arraysize if size is None else size
        out = rows[self._pos:self._pos + n]
        self._pos += len(out)
        return out

    def fetchall(self) -> list:
        rows = self._rows()
        out = rows[self._pos:]
        self._pos = len(rows)
        return out

    def __iter__(self):
        while True:
            row = self.fetchone()
            if row is None:
                return
            yield row

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        pass

    def close(self) -> None:
        self._closed = True
        self._result = None

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("cursor already closed")
        self.connection._check_open()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
