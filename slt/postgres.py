"""A PostgreSQL-protocol engine for the runner, through psycopg 3.

Owns ``PostgresEngine``, the one engine class for every server that speaks PostgreSQL's
protocol, parameterised by the dialect the server reports (``dialect``): "postgres" for
PostgreSQL itself, the oracle for suites that avoid Materialize-only syntax (``--engine
postgres`` with ``MZLITE_SLT_PG=host:port[:user[:database]]``, default 127.0.0.1:5432:postgres),
and "materialize" for a server that reports ``mz_version`` (``--url postgres://...``: ``mzlite
serve``, Materialize).  The dialect decides the skipif/onlyif names (``postgresql`` and
``pgoracle``; ``postgresql``, ``mzlite`` and ``materialize``) and how a reset cleans up.
Our suites (slt/test/) mark Materialize-only syntax with ``skipif pgoracle`` and
oracle-only helpers (REFRESH MATERIALIZED VIEW) with ``onlyif pgoracle``.

Invariants: values come back as mzlite's engine returns them to the runner (bool, int,
Decimal for numeric, float, and PostgreSQL's text for every other type), chosen by the
column's type OID, so rendering is the same code path for every engine; each file, and the
rest of a file after ``reset-server``, starts from Materialize's runner's clean state (see
``PostgresEngine.reset``: a server cannot be restarted from here, so reset-server is that
reset, and what the server refuses of it is in ``reset_notes``); ``simple conn=NAME`` blocks
run on a session of their own, reopened by a reset.
Deliberately not here: rendering, comparison (``slt.render``, ``slt.runner``).
"""
from __future__ import annotations

import os
import re
import select
from decimal import Decimal
from typing import Optional

from .engines import Engine, EngineError, Result

__all__ = ["PostgresEngine"]

_SUBSCRIBE = re.compile(r"\s*SUBSCRIBE\b", re.I)
_FLOAT_SPECIAL = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _install_loaders(conn) -> None:
    """Make ``conn`` read ints, bools, floats and numerics as Python values and every other
    type as its text (PostgreSQL's output, which the runner renders)."""
    import psycopg
    from psycopg.adapt import Loader

    class IntLoader(Loader):
        def load(self, data):
            return int(bytes(data))

    class BoolLoader(Loader):
        def load(self, data):
            return bytes(data) == b"t"

    class FloatLoader(Loader):
        def load(self, data):
            s = bytes(data).decode()
            return _FLOAT_SPECIAL[s] if s in _FLOAT_SPECIAL else float(s)

    class NumericLoader(Loader):
        def load(self, data):
            return Decimal(bytes(data).decode())

    class TextLoader(Loader):
        def load(self, data):
            return bytes(data).decode("utf-8")

    m = conn.adapters
    for t in psycopg.postgres.types:
        for oid in (t.oid, getattr(t, "array_oid", 0)):
            if oid:
                m.register_loader(oid, TextLoader)
    for oid in (20, 21, 23, 26):
        m.register_loader(oid, IntLoader)
    m.register_loader(16, BoolLoader)
    for oid in (700, 701):
        m.register_loader(oid, FloatLoader)
    m.register_loader(1700, NumericLoader)


def _convert(oid: int, raw: bytes):
    s = bytes(raw).decode("utf-8")
    if oid in (20, 21, 23, 26):
        return int(s)
    if oid == 16:
        return s == "t"
    if oid in (700, 701):
        return _FLOAT_SPECIAL[s] if s in _FLOAT_SPECIAL else float(s)
    if oid == 1700:
        return Decimal(s)
    return s


_SYSTEM_SCHEMAS = frozenset({"public", "pg_catalog", "information_schema"})
_DROP_ORDER = {"sink": 0, "materialized-view": 1, "view": 2, "index": 3, "table": 4, "source": 5,
               "connection": 6, "secret": 7, "type": 8}


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def oracle_url() -> str:
    spec = os.environ.get("MZLITE_SLT_PG", "127.0.0.1:5432").split(":")
    host = spec[0] or "127.0.0.1"
    port = int(spec[1]) if len(spec) > 1 else 5432
    user = spec[2] if len(spec) > 2 else "postgres"
    database = spec[3] if len(spec) > 3 else user
    return f"host={host} port={port} user={user} dbname={database}"


def _results(pgconn):
    """The results of the query sent on ``pgconn`` (in psycopg's non-blocking mode), waiting on
    its socket with ``select``: a blocking ``get_result`` of psycopg's C implementation holds
    the GIL, so with ``mzlite serve`` in this process the server could never answer it."""
    while pgconn.flush() != 0:
        select.select([pgconn.socket], [pgconn.socket], [])
    while True:
        while pgconn.is_busy():
            select.select([pgconn.socket], [], [])
            pgconn.consume_input()
        res = pgconn.get_result()
        if res is None:
            return
        yield res


class PostgresEngine(Engine):
    """See the module docstring.  ``url``: a libpq connection string or URL; None is the oracle."""

    def __init__(self, system_parameters=None, url: Optional[str] = None, *, reset: bool = True):
        try:
            import psycopg
        except ImportError:  # pragma: no cover - psycopg is in the test extra
            raise EngineError("the PostgreSQL engine needs psycopg (pip install 'psycopg[binary]')", "08000",
                              internal=True) from None
        self._psycopg = psycopg
        self.url = url or oracle_url()
        self._params = dict(system_parameters or {})
        self._conns: dict = {}
        #: what the last reset could not do on this server (the runner reports each)
        self.reset_notes: list = []
        main = self._connection(None)
        #: the server's dialect: "materialize" (it reports mz_version: Materialize, mzlite
        #: serve) or "postgres"; it decides skipif/onlyif names and how a reset cleans up
        self.dialect = "materialize" if main.info.parameter_status("mz_version") is not None else "postgres"
        self.materialize_like = self.dialect == "materialize"
        self.names = frozenset({"postgresql", "mzlite", "materialize"} if self.materialize_like
                               else {"postgresql", "pgoracle"})
        if reset:
            self.reset()
        elif self.materialize_like:
            self._apply_system_parameters()

    def _apply_system_parameters(self) -> None:
        """The runner's system parameters, where the server's differ (ALTER SYSTEM SET)."""
        for name, value in self._params.items():
            shown = self.execute(f"SHOW {name}").rows[0][0]
            if str(shown).lower() != str(value).lower() and {str(shown).lower(), str(value).lower()} not in (
                    {"on", "true"}, {"off", "false"}):
                self.execute(f"ALTER SYSTEM SET {name} = '{value}'")

    def _connection(self, name: Optional[str]):
        c = self._conns.get(name)
        if c is None or c.closed:
            try:
                c = self._psycopg.connect(self.url, autocommit=True)
            except self._psycopg.Error as e:
                raise EngineError(f"cannot connect to {self.url}: {e}", "08001", internal=True) from None
            _install_loaders(c)
            self._conns[name] = c
        return c

    def execute(self, sql: str, conn: Optional[str] = None) -> Result:
        c = self._connection(conn)
        psycopg = self._psycopg
        try:
            cur = c.cursor()
            if self.materialize_like and _SUBSCRIBE.match(sql):
                return self._subscribe(c, sql)
            cur.execute(sql, prepare=False)  # no parameters: the simple protocol, several statements allowed
            while cur.nextset():  # several statements: the runner reads the last result
                pass
            if cur.description is not None:
                rows = cur.fetchall()
                return Result([d.name for d in cur.description], rows, cur.rowcount, cur.statusmessage or "")
            return Result(None, None, cur.rowcount, cur.statusmessage or "")
        except psycopg.OperationalError as e:
            if c.closed:
                raise EngineError(f"connection lost: {e}", "08006", internal=True) from None
            raise self._error(e) from None
        except psycopg.Error as e:
            raise self._error(e) from None
        finally:
            if not c.closed and c.pgconn.transaction_status == psycopg.pq.TransactionStatus.ACTIVE:
                c.close()  # a statement left half-read (an aborted stream): the next call reconnects

    def _subscribe(self, c, sql: str) -> Result:
        """A (bounded) SUBSCRIBE through the extended protocol, which streams it as rows (a
        simple query gets COPY data); libpq directly, as psycopg's ``stream`` drops the
        columns of an empty result."""
        pgconn = c.pgconn
        pgconn.send_query_params(sql.encode("utf-8"), None)
        last = None
        for res in _results(pgconn):
            last = res
        pq = self._psycopg.pq
        if last is None or last.status == pq.ExecStatus.FATAL_ERROR:
            if last is None:
                raise EngineError("no result", "XX000", internal=True)
            e = self._psycopg.errors.error_from_result(last, encoding="utf-8")
            raise self._error(e)
        cols = [last.fname(i).decode() for i in range(last.nfields)]
        rows = []
        for r in range(last.ntuples):
            rows.append(tuple(None if last.get_value(r, i) is None else
                              _convert(last.ftype(i), last.get_value(r, i)) for i in range(last.nfields)))
        return Result(cols, rows, len(rows), (last.command_status or b"").decode())

    @staticmethod
    def _error(e) -> EngineError:
        d = e.diag
        return EngineError(d.message_primary or str(e), d.sqlstate or "XX000", detail=d.message_detail,
                           hint=d.message_hint)

    def reset(self) -> None:
        """A clean database, as Materialize's runner's ``reset_database`` leaves it before each
        file and at ``reset-server``: every session closed and the default one reopened (no
        session state, no open transaction), and then, on a Materialize-like server, ``ALTER
        SYSTEM RESET ALL`` (the runner's system parameters applied again), every user cluster
        but the session's dropped, every user schema dropped, and ``public`` emptied (``DROP
        SCHEMA public CASCADE; CREATE SCHEMA public``, or, where the server refuses that,
        every object SHOW OBJECTS lists dropped); on PostgreSQL every user schema dropped and
        a fresh ``public``.
        A step the server refuses is noted in ``reset_notes``; an object that cannot be
        dropped raises (the file would not start clean)."""
        self.reset_notes = []
        self.close()
        if not self.materialize_like:
            for (name,) in self._rows("SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
                                      "AND nspname NOT IN ('information_schema', 'public')"):
                self.execute(f"DROP SCHEMA {_ident(name)} CASCADE")
            self.execute("DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public")
            return
        try:
            self.execute("ALTER SYSTEM RESET ALL")
        except EngineError as e:
            if e.internal:
                raise
            self.reset_notes.append(f"ALTER SYSTEM RESET ALL refused ({e.sqlstate}: {e.message}); "
                                    f"system parameters keep the server's values")
        self._apply_system_parameters()
        keep = str(self.execute("SHOW cluster").rows[0][0])
        for row in self._rows("SHOW CLUSTERS"):
            if row[0] != keep and not row[0].startswith("mz_"):
                self.execute(f"DROP CLUSTER {_ident(row[0])} CASCADE")
        for row in self._rows("SHOW SCHEMAS"):
            if row[0] not in _SYSTEM_SCHEMAS and not row[0].startswith("mz_"):
                self.execute(f"DROP SCHEMA {_ident(row[0])} CASCADE")
        try:
            self.execute("DROP SCHEMA public CASCADE")
            self.execute("CREATE SCHEMA public")
            return
        except EngineError as e:
            if e.internal or e.sqlstate != "0A000":
                raise
        for _ in range(8):  # views first; what a CASCADE already took is gone the next round
            objects = [(r[0], r[1]) for r in self._rows("SHOW OBJECTS")]
            if not objects:
                return
            for name, kind in sorted(objects, key=lambda o: _DROP_ORDER.get(o[1], 9)):
                self.execute(f"DROP {kind.replace('-', ' ').upper()} IF EXISTS {_ident(name)} CASCADE")
        raise EngineError("reset: objects are left after dropping every user object", "XX000", internal=True)

    def _rows(self, sql: str) -> list:
        return self.execute(sql).rows or []

    def close(self) -> None:
        for c in self._conns.values():
            try:
                c.close()
            except Exception:
                pass
        self._conns.clear()
