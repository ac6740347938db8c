"""The one seam between the runner and a database: a small engine adapter.

Owns: ``Engine`` (the protocol the runner speaks: ``execute`` returning a ``Result``,
``reset``, ``close``, and ``names`` for skipif/onlyif), ``EngineError`` (an error the
database answered with, carrying its SQLSTATE), ``GuardedEngine`` (a per-statement time
limit) and the adapters: ``MzliteEngine`` (the default: ``mzlite.connect(system_parameters
=...)``, answering to postgresql, mzlite and materialize), ``SqliteEngine`` (Python's
sqlite3, answering to sqlite; it must reproduce the SQLite corpus's expected answers and is
how the runner is tested without depending on the engine) and, in postgres.py,
``PostgresEngine`` (psycopg, one class for any server, by dialect: the PostgreSQL oracle for
our suites, ``--engine postgres``, and any server at ``--url``).  ``reset`` is what a file
starts from and what ``reset-server`` does; an engine may list in ``reset_notes`` what its
last reset could not do (the runner prints each as a NOTE).

Invariant: the runner never touches a database API directly; an exception that is not a
database error (a bug in the engine) becomes ``EngineError(internal=True)``, which never
satisfies an expected error.

Deliberately not here: rendering, comparison, and splitting SQL for anything but
`simple` blocks.
"""
from __future__ import annotations

import queue
import threading
import traceback
from dataclasses import dataclass
from typing import Optional

__all__ = ["Result", "EngineError", "EngineTimeout", "Engine", "GuardedEngine",
           "MzliteEngine", "SqliteEngine", "make_engine", "split_statements", "ENGINES"]


@dataclass
class Result:
    columns: Optional[list]   # [name, ...] when the statement returns rows, else None
    rows: Optional[list]      # list of tuples when it returns rows, else None
    rowcount: int = -1
    status: str = ""


class EngineError(Exception):
    def __init__(self, message: str, sqlstate: str = "XX000", *, detail: Optional[str] = None,
                 hint: Optional[str] = None, internal: bool = False):
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint
        self.internal = internal

    def full_text(self) -> str:
        """The error as Materialize's runner matches regexes against it."""
        s = f"db error: ERROR: {self.message}"
        if self.detail:
            s += f"\nDETAIL: {self.detail}"
        if self.hint:
            s += f"\nHINT: {self.hint}"
        return s


class EngineTimeout(EngineError):
    """A call did not return within the time limit; the engine is abandoned."""

    def __init__(self, seconds: float):
        super().__init__(f"timed out after {seconds:g}s (the rest of the file is not run)",
                         "57014", internal=True)


class Engine:
    """Protocol. ``names``: the engine names skipif/onlyif answer to."""

    names: frozenset = frozenset()

    def execute(self, sql: str, conn: Optional[str] = None) -> Result:  # pragma: no cover
        raise NotImplementedError

    def reset(self) -> None:  # pragma: no cover
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover
        pass


class _Call:
    __slots__ = ("done", "result", "exc")

    def __init__(self):
        self.done = threading.Event()
        self.result = self.exc = None


class GuardedEngine(Engine):
    """Runs every call of an engine on one worker thread and waits at most ``timeout``
    seconds for it, so a hung statement fails its record instead of hanging the run.
    After a timeout the engine is abandoned (a Python thread cannot be stopped): every
    further call raises ``EngineTimeout`` at once."""

    def __init__(self, factory, timeout: float):
        self._timeout = timeout
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._dead = False
        self._thread = threading.Thread(target=self._loop, name="slt-engine", daemon=True)
        self._thread.start()
        self._inner = self._call(factory)
        self.names = self._inner.names

    def _loop(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, args, call = item
            try:
                call.result = fn(*args)
            except BaseException as e:  # handed to the caller
                call.exc = e
            call.done.set()

    def _call(self, fn, *args):
        if self._dead:
            raise EngineTimeout(self._timeout)
        call = _Call()
        self._q.put((fn, args, call))
        if not call.done.wait(self._timeout):
            self._dead = True
            raise EngineTimeout(self._timeout)
        if call.exc is not None:
            raise call.exc
        return call.result

    @property
    def reset_notes(self) -> list:
        return getattr(self._inner, "reset_notes", [])

    @property
    def dead(self) -> bool:
        return self._dead

    def execute(self, sql, conn=None):
        return self._call(self._inner.execute, sql, conn)

    def reset(self):
        return self._call(self._inner.reset)

    def close(self):
        if not self._dead:
            try:
                self._call(self._inner.close)
            finally:
                self._q.put(None)


def _internal(exc: BaseException) -> EngineError:
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return EngineError(f"internal error: {type(exc).__name__}: {exc}\n" + "".join(tb[-4:]),
                       "XX000", internal=True)


class MzliteEngine(Engine):
    names = frozenset({"postgresql", "mzlite", "materialize"})

    def __init__(self, system_parameters: Optional[dict] = None):
        import mzlite  # imported here so the runner works (with other engines) without it
        self._mz = mzlite
        self._params = dict(system_parameters or {})
        self._conn = None
        self._sessions: dict = {}
        self.reset()

    def reset(self) -> None:
        self.close()
        self._conn = self._mz.connect(system_parameters=dict(self._params))
        self._sessions = {}

    def _connection(self, conn: Optional[str]):
        # A named connection of `simple conn=NAME` is a session of its own on the same
        # database, opened on first use and kept for the file (as Materialize's runner does)
        if conn is None:
            return self._conn
        c = self._sessions.get(conn)
        if c is None:
            c = self._sessions[conn] = self._conn.connect()
        return c

    def execute(self, sql: str, conn: Optional[str] = None) -> Result:
        c = self._connection(conn)
        try:
            cur = c.cursor()
            cur.intervals_as_timedelta = False  # intervals keep their months, as PostgreSQL prints them
            cur.documents_as_python = False  # jsonb/arrays printed as PostgreSQL's text below
            cur.execute(sql)
            desc = cur.description
            if desc is not None:
                rows = cur.fetchall()
                cols = [d[0] for d in desc]
                rows = self._datetime_text(desc, rows)
            else:
                rows = cols = None
            return Result(cols, rows, getattr(cur, "rowcount", -1),
                          getattr(cur, "statusmessage", "") or "")
        except self._mz.Error as e:
            return self._raise(e)
        except Exception as e:  # a bug in the engine, never an answer
            raise _internal(e) from e

    def _datetime_text(self, desc, rows):
        """Date/time columns as PostgreSQL's text (the PostgreSQL adapter receives text for them)."""
        from mzlite.types import pg_text
        cols = [i for i, d in enumerate(desc) if d[1] == self._mz.DATETIME and d[1] != "mz_timestamp"
                or d[1] in ("bytea", "uuid", "jsonb") or d[1].endswith("[]")  # as PostgreSQL's text
                or d[1].endswith(" list")]  # Materialize lists, as Materialize prints them
        if not cols or not rows:
            return rows
        out = []
        for row in rows:
            row = list(row)
            for i in cols:
                if row[i] is not None:
                    row[i] = pg_text(row[i])
            out.append(tuple(row))
        return out

    @staticmethod
    def _raise(e):
        msg = getattr(e, "message", None) or str(e)
        sqlstate = getattr(e, "sqlstate", None) or "XX000"
        # mzlite's own report of a Python exception that escaped (``Database.guard``) is a bug
        # in the engine, as one raised here would be: it never counts as an answer
        internal = sqlstate == "XX000" and msg.startswith("internal error: ")
        raise EngineError(msg, sqlstate, detail=getattr(e, "detail", None), hint=getattr(e, "hint", None),
                          internal=internal) from e

    def close(self) -> None:
        for c in list(self._sessions.values()):
            try:
                c.close()
            except Exception:
                pass
        self._sessions = {}
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None


class SqliteEngine(Engine):
    """Python's sqlite3, in autocommit mode; answers to skipif/onlyif ``sqlite``."""

    names = frozenset({"sqlite"})

    def __init__(self, system_parameters: Optional[dict] = None):
        import sqlite3
        self._sqlite3 = sqlite3
        self._conn = None
        self.reset()

    def reset(self) -> None:
        self.close()
        self._conn = self._sqlite3.connect(":memory:", isolation_level=None)

    def execute(self, sql: str, conn: Optional[str] = None) -> Result:
        try:
            cur = self._conn.execute(sql)
            if cur.description is not None:
                rows = cur.fetchall()
                return Result([d[0] for d in cur.description], rows, len(rows),
                              f"SELECT {len(rows)}")
            return Result(None, None, cur.rowcount, "")
        except self._sqlite3.Error as e:
            code = "42601" if "syntax" in str(e) else "XX000"
            raise EngineError(str(e), code) from e
        except Exception as e:
            raise _internal(e) from e

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _postgres(system_parameters=None, url=None):
    from .postgres import PostgresEngine
    return PostgresEngine(system_parameters, url=url)


ENGINES = {"mzlite": MzliteEngine, "sqlite": SqliteEngine, "postgres": _postgres}


def make_engine(name: str, system_parameters: Optional[dict] = None, *, url: Optional[str] = None) -> Engine:
    """A fresh engine ``name``; with ``url``, the PostgreSQL-protocol server there."""
    if url is not None:
        return _postgres(system_parameters, url=url)
    try:
        cls = ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown engine {name!r} (known: {', '.join(ENGINES)})") from None
    return cls(system_parameters)


def split_statements(sql: str) -> list:
    """Split SQL text at top-level semicolons (quotes, dollar quotes, comments respected)."""
    out, buf = [], []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in ("'", '"'):
            j = i + 1
            while j < n:
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            buf.append(sql[i:j + 1])
            i = j + 1
        elif ch == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            buf.append(sql[i:j])
            i = j
        elif ch == "/" and sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            j = n if j < 0 else j + 2
            buf.append(sql[i:j])
            i = j
        elif ch == "$":
            k = sql.find("$", i + 1)
            tag = sql[i:k + 1] if k > 0 else ""
            if tag and (tag == "$$" or tag[1:-1].isidentifier()):
                j = sql.find(tag, k + 1)
                j = n if j < 0 else j + len(tag)
                buf.append(sql[i:j])
                i = j
            else:
                buf.append(ch)
                i += 1
        elif ch == ";":
            stmt = "".join(buf).strip()
            if stmt:
                out.append(stmt)
            buf = []
            i += 1
        else:
            buf.append(ch)
            i += 1
    stmt = "".join(buf).strip()
    if stmt:
        out.append(stmt)
    return out
