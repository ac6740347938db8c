"""PEP 249 cursors.

Owns a cursor's result state: ``description``, the rows not yet fetched, ``rowcount``
and ``statusmessage`` (psql's command tag), and checking parameters before they reach
the engine (``mzlite.types.check_parameters``).  Fetching slices the result's one list;
``fetchall`` of a whole SELECT result hands that list over (``Result.owned``), no copy.  Invariants: a cursor holds the complete
result of its last statement (results are computed eagerly by the coordinator), so
fetching never touches the engine, except a SUBSCRIBE's, which streams; every call on a cursor is atomic with respect to the
others (``self._lock``), so a cursor shared between threads hands each row out exactly
once; a closed cursor, or one whose connection is closed, refuses everything with
``InterfaceError``.  Deliberately not here: execution (the ``Database`` does it),
how SUBSCRIBE streams (``mzlite.subscribe``: a SUBSCRIBE's result carries a ``stream`` that
``fetchone``/``fetchmany``/iteration read as rows arrive, waiting for at least one;
``fetchall`` only when ``UP TO`` bounds it, else ``ProgrammingError``).
"""
from __future__ import annotations

from itertools import chain
import threading
from typing import Any, Iterable, Optional, Sequence

from mzlite.types import EXACT_TYPES, check_parameters, column_sizes, python_value
from sql.errors import InterfaceError, ProgrammingError


class Column(tuple):
    """A ``description`` entry: PEP 249's 7-tuple (name, type_code, display_size,
    internal_size, precision, scale, null_ok) with names.  ``type_code`` is the type's
    display name (``"integer"``), equal to one of ``mzlite.NUMBER``/``STRING``/..."""

    def __new__(cls, name, type_code, display_size=None, internal_size=None, precision=None, scale=None,
                null_ok=None):
        return super().__new__(cls, (name, type_code, display_size, internal_size, precision, scale, null_ok))

    name = property(lambda self: self[0])
    type_code = property(lambda self: self[1])
    null_ok = property(lambda self: self[6])


class Result:
    """What one statement produced."""
    __slots__ = ("columns", "rows", "rowcount", "status", "stream", "typmods", "copy", "owned")

    def __init__(self, status: str, columns=None, rows=None, rowcount: int = -1):
        self.status = status
        #: ``[(name, display_type)]`` for statements that return rows, else ``None``
        self.columns = columns
        self.rows = rows if rows is not None else []
        self.rowcount = rowcount
        #: SUBSCRIBE: the ``mzlite.subscribe.SubscribeStream`` the rows come from (``rows`` unused)
        self.stream = None
        #: the columns' type modifiers (``planner.output_typmods``), or a function computing
        #: them when ``description`` is first read; None when unknown
        self.typmods = None
        #: COPY FROM STDIN / TO STDOUT: the ``mzlite.copy.CopyIn`` / ``CopyOut`` to drive
        self.copy = None
        #: ``rows`` is a list built for this result alone (a SELECT's): ``fetchall`` may hand
        #: it over instead of copying it
        self.owned = False


class Cursor:
    """A PEP 249 cursor (see the module docstring)."""

    #: rows ``fetchmany()`` returns when called without a size
    arraysize = 1

    def __init__(self, connection):
        #: the connection this cursor runs on (PEP 249 extension)
        self.connection = connection
        self._result: Optional[Result] = None
        self._pos = 0
        self._closed = False
        #: always None: mzlite tables have no row ids
        self.lastrowid = None
        self._lock = threading.RLock()

    # ------------------------------------------------------------ execution
    def execute(self, sql: str, params: Optional[Sequence[Any]] = None) -> "Cursor":
        """Run ``sql`` with ``params`` bound to its ``?`` (or ``$1``) placeholders; returns the cursor.

        Parameters may be ``None``, ``bool``, ``int``, ``float``, ``Decimal`` or ``str``;
        anything else is a ``ProgrammingError`` naming its type."""
        with self._lock:
            self._check_open()
            params = None if params is None else check_parameters(params)
            self._drop_stream()
            self._result = None
            self._result = self._database().execute_sql(self.connection.session, sql, params)
            self._pos = 0
            self._convert_values()
            return self

    def copy(self, sql: str, params: Optional[Sequence[Any]] = None):
        """Run a ``COPY ... FROM STDIN`` or ``COPY ... TO STDOUT`` and return its
        ``mzlite.copy.Copy``, in psycopg's shape: ``with cur.copy("COPY t FROM STDIN") as
        copy: copy.write_row((1, "a"))`` (or ``copy.write(b"1\ta\n")``), loaded when the
        block ends (nothing when it raises); ``with cur.copy("COPY t TO STDOUT") as copy:
        for data in copy: ...`` (bytes), or ``copy.rows()`` (tuples of text)."""
        from mzlite.copy import Copy
        with self._lock:
            self._check_open()
            params = None if params is None else check_parameters(params)
            self._drop_stream()
            self._result = None
            session = self.connection.session
            session.copy_driver = True
            try:
                result = self._database().execute_sql(session, sql, params)
            finally:
                session.copy_driver = False
            if result.copy is None:
                from sql.errors import ProgrammingError as _PE
                raise _PE("copy() runs a COPY ... FROM STDIN or COPY ... TO STDOUT statement")
            self._result = result
            self._pos = 0
            return Copy(self, result)

    def copy_done(self, status: str, rowcount: int) -> None:
        """A ``Copy`` finished: the cursor reports its tag and row count."""
        self._result = Result(status, None, rowcount=rowcount)

    #: ``interval`` columns come back as ``datetime.timedelta`` (a month is 30 days, as
    #: psycopg converts); False keeps the engine's ``repr.dates.Interval`` (months kept)
    intervals_as_timedelta = True

    #: ``jsonb`` columns come back as dict/list/str/int/float/bool/None and arrays as lists;
    #: False keeps the engine's values (``repr.jsonb.Jsonb``, ``repr.arrays.Array``)
    documents_as_python = True

    def _convert_values(self) -> None:
        """Convert the columns whose engine values are not what the Python API returns
        (interval -> timedelta, jsonb -> dict/list/..., arrays and lists -> list, maps -> dict;
        docs/API.md), in
        one pass over the rows and only when such a column exists."""
        r = self._result
        if r is None or r.columns is None or r.stream is not None or not r.rows:
            return
        convs = {}
        for i, (_, t) in enumerate(r.columns):
            if t == "interval" and self.intervals_as_timedelta:
                convs[i] = _to_timedelta
            elif (t == "jsonb" or t.endswith("[]")) and self.documents_as_python:
                convs[i] = python_value
            elif (t.endswith(" list") or t.startswith("map[")) and self.documents_as_python:  # lists -> list, maps -> dict
                convs[i] = python_value
        if not convs:
            return
        out = []
        for row in r.rows:
            row = list(row)
            for i, conv in convs.items():
                if row[i] is not None:
                    row[i] = conv(row[i])
            out.append(tuple(row))
        r.rows = out

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> "Cursor":
        """Run one statement for each parameter sequence; ``rowcount`` is the total affected.
        A plain INSERT's rows are written together, at one timestamp."""
        with self._lock:
            self._check_open()
            if isinstance(seq_of_params, (str, bytes)):
                raise ProgrammingError("executemany takes a sequence of parameter sequences")
            param_sets = checked_parameter_sets(seq_of_params, check_parameters)
            self._drop_stream()
            self._result = None
            self._result = self._database().execute_many(self.connection.session, sql, param_sets)
            self._pos = 0
            self._convert_values()
            return self

    def executescript(self, sql: str) -> "Cursor":
        """Run a script of ``;``-separated statements without parameters (sqlite3's method)."""
        with self._lock:
            self._check_open()
            if not isinstance(sql, str):
                raise ProgrammingError(f"the script must be a string, not {type(sql).__name__}")
            self._drop_stream()
            self._result = None
            self._result = self._database().execute_sql(self.connection.session, sql, None, atomic=False)
            self._pos = 0
            self._convert_values()
            return self

    # ------------------------------------------------------------ results
    @property
    def description(self):
        """One ``Column`` 7-tuple per result column, or None when the last statement returned no rows."""
        r = self._result
        if r is None or r.columns is None:
            return None
        if callable(r.typmods):
            r.typmods = r.typmods()
        mods = r.typmods or ()
        return [Column(name, typ, *column_sizes(typ, mods[i] if i < len(mods) else None))
                for i, (name, typ) in enumerate(r.columns)]

    @property
    def rowcount(self) -> int:
        """Rows returned (SELECT), rows affected (INSERT/UPDATE/DELETE), else -1."""
        return -1 if self._result is None else self._result.rowcount

    @property
    def statusmessage(self) -> Optional[str]:
        """psql's command tag of the last statement ("SELECT 2", "INSERT 0 3", ...)."""
        return None if self._result is None else self._result.status

    def _rows(self) -> list:
        self._check_open()
        if self._result is None or self._result.columns is None:
            raise ProgrammingError("no results to fetch")
        return self._result.rows

    def fetchone(self):
        """The next row, or None when there are no more (SUBSCRIBE: waits for the next row)."""
        with self._lock:
            rows = self._rows()
            if self._result.stream is not None:
                got = self._result.stream.fetch(1)
                return got[0] if got else None
            if self._pos >= len(rows):
                return None
            self._pos += 1
            return rows[self._pos - 1]

    def fetchmany(self, size: Optional[int] = None) -> list:
        """Up to ``size`` (default ``arraysize``) next rows; an empty list when there are no more."""
        with self._lock:
            rows = self._rows()
            n = self.arraysize if size is None else size
            if n < 0:
                raise ProgrammingError(f"fetchmany size must not be negative, got {n}")
            if self._result.stream is not None:  # SUBSCRIBE: what is ready, waiting for at least one
                return self._result.stream.fetch(n)
            out = rows[self._pos:self._pos + n]
            self._pos += len(out)
            return out

    def fetchall(self) -> list:
        """All remaining rows.  SUBSCRIBE: only when UP TO bounds it (waits for the end)."""
        with self._lock:
            rows = self._rows()
            if self._result.stream is not None:
                return self._stream_all(self._result.stream)
            if self._pos == 0 and self._result.owned and rows.__class__ is list:
                # the whole result: handed over, not copied (the cursor keeps nothing to fetch)
                self._result.rows = []
                return rows
            out = rows[self._pos:]
            self._pos = len(rows)
            return out

    def __iter__(self):
        """Iterate over the remaining rows (``fetchone`` until None)."""
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

    def _drop_stream(self) -> None:
        """End the SUBSCRIBE this cursor streams, if any (a new statement or close)."""
        if self._result is not None and self._result.stream is not None:
            self._result.stream.close()

    @staticmethod
    def _stream_all(stream) -> list:
        if not stream.bounded:
            raise ProgrammingError("fetchall() on a SUBSCRIBE without UP TO would never return: use "
                                   "fetchmany() or iterate the cursor, or bound the SUBSCRIBE with UP TO")
        out = []
        while True:
            got = stream.fetch(None)
            if not got:
                return out
            out.extend(got)

    def close(self) -> None:
        """Close the cursor (idempotent); it refuses every later call.  A SUBSCRIBE this
        cursor streams ends first, without the cursor's lock, so a fetch waiting on another
        thread returns (it raises ``InterfaceError``)."""
        result = self._result
        if result is not None and result.stream is not None:
            result.stream.close()
        with self._lock:
            self._drop_stream()
            self._closed = True
            self._result = None

    @property
    def closed(self) -> bool:
        """True once the cursor or its connection was closed."""
        return self._closed or self.connection.closed

    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("cursor already closed")
        if self.connection.closed:
            raise InterfaceError("connection already closed")

    def _database(self):
        """The database this cursor's connection runs on (``InterfaceError`` once it is closed)."""
        if self.connection.closed:
            raise InterfaceError("connection already closed")
        return self.connection.database

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _to_timedelta(interval):
    return interval.to_timedelta()


def checked_parameter_sets(seq_of_params, check_parameters) -> list:
    """``[check_parameters(p) for p in seq_of_params]``, with the common case (a list of
    plain tuples of plain values) checked by two C-level passes instead of a call per set."""
    if type(seq_of_params) is list and set(map(type, seq_of_params)) == {tuple}:
        if EXACT_TYPES.issuperset(map(type, chain.from_iterable(seq_of_params))):
            return seq_of_params
    return [check_parameters(p) for p in seq_of_params]
