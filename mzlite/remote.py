"""Remote connections: the embedded API, spoken over psycopg 3 to a server.

Owns ``connect_remote`` (what ``mzlite.connect("postgresql://...")`` and libpq keyword strings
open) and ``RemoteConnection``, with ``mzlite.remote_cursor.RemoteCursor`` the surface of
``mzlite.Connection`` and ``mzlite.Cursor`` (PEP 249, the ``?`` paramstyle, ``description`` type codes as display names,
``rowcount``/``statusmessage``, transactions opened by ``BEGIN``, ``interrupt``, ``copy``,
``subscribe``) over a connection to ``mzlite serve``, Materialize or PostgreSQL.

Invariants: every error a server or psycopg raises reaches the user as the ``mzlite.Error``
subclass of its SQLSTATE (``sql.errors.class_for``) with the server's message, detail, hint and
a position into the text the user wrote (``?`` placeholders are rewritten to ``$n`` before the
text is sent; the position is mapped back); values come back as the embedded cursor returns
them (``int`` for ``mz_timestamp``, ``repr.dates`` infinities, ``int4`` for small ``int``
parameters, ``jsonb`` for ``dict`` parameters); the connection runs in autocommit as the
embedded one does (each statement commits unless ``BEGIN`` opened a transaction).

Deliberately not here: the cursor and COPY (``mzlite.remote_cursor``), the statement texts
(``mzlite.remote_text``), the subscription over the wire (``mzlite.remote_subscribe``), the
server (``server``).  What a remote server cannot offer is refused with 0A000 rather than
ignored: ``clock=``, ``durability=``, ``system_parameters=`` (ALTER SYSTEM is the server's),
``max_buffered=``, ``cursor.execute`` of a COPY with STDIN/STDOUT (use ``cursor.copy``, as
embedded).  A ``SUBSCRIBE`` through ``cursor.execute`` streams from a session of its own
(``mzlite.remote_subscribe.RemoteStream``).
"""
from __future__ import annotations

from functools import lru_cache
import re
import threading
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from mzlite.connection import FixedSetting
from mzlite.remote_text import original_position, translate_placeholders
from mzlite.pg_catalog import JSON_OID, PG_TYPES
from sql import errors as _errors
from sql.errors import InterfaceError, NotSupportedError, ProgrammingError, class_for

if TYPE_CHECKING:  # pragma: no cover
    from mzlite.remote_cursor import RemoteCursor

__all__ = ["is_remote_target", "connect_remote", "RemoteConnection", "translate_error", "type_display"]

_URL = re.compile(r"^(postgresql|postgres)://", re.I)
_KEYWORDS = re.compile(r"^\s*(host|hostaddr|port|dbname|user|password|service|sslmode|options|application_name)"
                       r"\s*=", re.I)


def is_remote_target(database) -> bool:
    """Whether ``connect``'s argument names a server: a ``postgresql://``/``postgres://`` URL or
    a libpq keyword string (``"host=... port=..."``), never a data directory's path."""
    return isinstance(database, str) and bool(_URL.match(database) or _KEYWORDS.match(database))


# ---------------------------------------------------------------------- type names

#: OID -> display name (the embedded ``type_code``), arrays as ``name[]``
_DISPLAY: dict[int, str] = {JSON_OID: "json", 199: "json[]"}
#: PostgreSQL's short type name -> display name, for OIDs mzlite has no entry for
_SHORT_DISPLAY: dict[str, str] = {}
for _name, _display, _oid, _typname, _len, _cat, _arr in PG_TYPES:
    _DISPLAY[_oid] = _display
    _SHORT_DISPLAY[_typname] = _display
    if _arr:
        _DISPLAY[_arr] = _display + "[]"
MZ_TIMESTAMP_OID = 16552


def type_display(oid: int, adapters=None) -> str:
    """The display name of a result column's type OID, as the embedded cursor reports it."""
    name = _DISPLAY.get(oid)
    if name is not None:
        return name
    info = adapters.types.get(oid) if adapters is not None else None
    if info is None:
        return str(oid)
    base = _SHORT_DISPLAY.get(info.name, info.name)
    return base + "[]" if oid == getattr(info, "array_oid", None) else base


#: OID -> mzlite's short type name (``Connection.describe``'s), arrays as ``name[]``
_SHORT: dict[int, str] = {JSON_OID: "json"}
for _name, _display, _oid, _typname, _len, _cat, _arr in PG_TYPES:
    _SHORT[_oid] = _name
    if _arr:
        _SHORT[_arr] = _name + "[]"


def type_short_name(oid: int, adapters=None) -> str:
    """mzlite's short name of a type OID (``int4``), as the embedded ``describe`` gives it."""
    name = _SHORT.get(oid)
    if name is not None:
        return name
    info = adapters.types.get(oid) if adapters is not None else None
    if info is None:
        return str(oid)
    return info.name + "[]" if oid == getattr(info, "array_oid", None) else info.name


def typmod(display: str, fmod: int):
    """The embedded cursor's modifier (``planner.output_typmods``' shape) of a wire ``atttypmod``."""
    if fmod is None or fmod < 0:
        return None
    if display == "numeric":
        return ("numeric", ((fmod - 4) >> 16) & 0xFFFF, (fmod - 4) & 0xFFFF)
    if display in ("character varying", "character", "text"):  # mzlite serve: varchar(n) is text(n)
        return ("varchar", fmod - 4)
    if display in ("timestamp without time zone", "timestamp with time zone", "time without time zone"):
        return ("timestamp", fmod)
    if display == "interval":
        return ("interval", fmod)
    return None


# ---------------------------------------------------------------------- errors

def translate_error(e: BaseException, inserts: tuple = ()) -> _errors.Error:
    """The ``mzlite.Error`` for a psycopg error (its SQLSTATE's class, the server's fields)."""
    import psycopg
    if isinstance(e, _errors.Error):
        return e
    state = getattr(e, "sqlstate", None)
    if state is None:
        if isinstance(e, psycopg.OperationalError):
            msg = str(e).strip() or "the connection to the server was lost"
            if isinstance(e, psycopg.errors.ConnectionTimeout) or "connection" in msg:
                return _errors.OperationalError(msg, sqlstate="08006")
            return _errors.OperationalError(msg, sqlstate="08000")
        if isinstance(e, psycopg.InterfaceError):
            return InterfaceError(str(e))
        if isinstance(e, psycopg.ProgrammingError):
            return ProgrammingError(str(e))
        if isinstance(e, psycopg.DataError):
            return _errors.DataError(str(e))
        if isinstance(e, psycopg.NotSupportedError):
            return NotSupportedError(str(e))
        return _errors.DatabaseError(str(e), sqlstate="XX000")
    diag = e.diag
    pos = diag.statement_position
    position = original_position(int(pos), inserts) if pos else None
    msg = diag.message_primary or str(e)
    return class_for(state)(msg, sqlstate=state, position=position, detail=diag.message_detail,
                            hint=diag.message_hint, context=diag.context)


class Translating:
    """``with Translating(inserts):`` raises any psycopg error as its ``mzlite.Error``."""
    __slots__ = ("inserts",)

    def __init__(self, inserts: tuple = ()):
        self.inserts = inserts

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is None or isinstance(exc, _errors.Error) or not isinstance(exc, Exception):
            return False
        import psycopg
        if isinstance(exc, psycopg.Error):
            raise translate_error(exc, self.inserts) from None
        return False


# ---------------------------------------------------------------------- values

def _parameter(value):
    """A checked parameter as psycopg should send it: ``dict`` (and a list holding a dict or a
    list) as jsonb, a tuple as a list (an array), as the embedded engine binds them."""
    if isinstance(value, dict):
        from psycopg.types.json import Jsonb
        return Jsonb(value)
    if isinstance(value, (list, tuple)):
        if any(isinstance(x, (dict, list, tuple)) for x in value):
            from psycopg.types.json import Jsonb
            return Jsonb(list(value))
        return list(value)
    return value


def parameters(params: Optional[tuple]):
    if params is None:
        return None
    if any(isinstance(v, (dict, list, tuple)) for v in params):
        return tuple(_parameter(v) for v in params)
    return params


def _configure(pgcon) -> None:
    """Register the loaders and dumpers that give the embedded API's values."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format
    from psycopg.types.numeric import Int4Dumper, Int8Dumper, IntNumericDumper
    from repr.dates import INFINITY, NEG_INFINITY

    class IntDumper(Dumper):
        """``int`` as integer, bigint or numeric by size (the embedded rule; psycopg would pick
        smallint for small values)."""
        _int4, _int8, _num = Int4Dumper(int), Int8Dumper(int), IntNumericDumper(int)

        def dump(self, obj):  # pragma: no cover - upgrade always picks one of the three
            return self.upgrade(obj, None).dump(obj)

        def get_key(self, obj, format):
            return self.upgrade(obj, format).__class__

        def upgrade(self, obj, format):
            if -(2 ** 31) <= obj < 2 ** 31:
                return self._int4
            if -(2 ** 63) <= obj < 2 ** 63:
                return self._int8
            return self._num

    pgcon.prepare_threshold = None  # unnamed statements only: nothing to DEALLOCATE, as embedded
    adapters = pgcon.adapters
    adapters.register_dumper(int, IntDumper)

    class MzTimestampLoader(Loader):
        def load(self, data):
            return int(bytes(data))

    adapters.register_loader(MZ_TIMESTAMP_OID, MzTimestampLoader)
    for name in ("date", "timestamp", "timestamptz"):
        base = adapters.get_loader(adapters.types[name].oid, Format.TEXT)

        def make(base):
            class InfinityLoader(Loader):
                """PostgreSQL's text loader, but ``infinity``/``-infinity`` as ``repr.dates``'."""

                def __init__(self, oid, context=None):
                    super().__init__(oid, context)
                    self._base = base(oid, context)

                def load(self, data):
                    b = bytes(data)
                    if b == b"infinity":
                        return INFINITY
                    if b == b"-infinity":
                        return NEG_INFINITY
                    return self._base.load(data)
            return InfinityLoader
        adapters.register_loader(name, make(base))


# ---------------------------------------------------------------------- connect

def connect_remote(conninfo: str, *, session_parameters=None) -> "RemoteConnection":
    """Open a connection to the server ``conninfo`` names (a URL or libpq keywords)."""
    import psycopg
    try:
        pgcon = psycopg.connect(conninfo, autocommit=True, cursor_factory=psycopg.RawCursor)
    except psycopg.Error as e:
        err = translate_error(e)
        if getattr(e, "sqlstate", None) is None:
            err = _errors.OperationalError(f"could not connect to {_redacted(conninfo)}: {str(e).strip()}",
                                           sqlstate="08001")
        raise err from None
    _configure(pgcon)
    con = RemoteConnection(pgcon, conninfo)
    for name, value in (session_parameters or {}).items():
        try:
            con.execute(f"SET {_ident(name)} = {_literal(value)}")
        except _errors.Error:
            con.close()
            raise
    return con


def _redacted(conninfo: str) -> str:
    """``conninfo`` without its password."""
    s = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", conninfo)
    return re.sub(r"(password\s*=\s*)(\S+)", r"\1***", s, flags=re.I)


def _ident(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][\w.]*", str(name)):
        raise ProgrammingError(f"invalid session parameter name {name!r}")
    return str(name)


def _literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


class RemoteConnection:
    """A PEP 249 connection to a server, with the embedded ``Connection``'s surface (see the
    module docstring).  ``dsn`` is what it was opened with; ``pgconn`` the psycopg connection."""

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

    autocommit = FixedSetting(
        True, bool, "autocommit off is not supported: open a transaction with BEGIN "
        "(or execute('BEGIN')) and end it with commit() or rollback()",
        "Always True: each statement commits unless ``BEGIN`` opened a transaction.")
    isolation_level = FixedSetting(
        None, lambda v: v is None, "isolation_level (implicit transactions) is not supported: use BEGIN",
        "sqlite3's: None (autocommit), the only mode mzlite has.")
    row_factory = FixedSetting(
        None, lambda v: v is None, "row_factory is not supported: rows are tuples", "None: rows are tuples.")
    text_factory = FixedSetting(
        str, lambda v: v is str, "text_factory is not supported: text values are str", "str.")
    read_only = FixedSetting(
        False, lambda v: not v, "read_only connections are not supported: use BEGIN READ ONLY", "False.")

    def __init__(self, pgconn, dsn: str):
        self.pgconn = pgconn
        self.dsn = dsn
        self._closed = False
        #: one statement at a time on the psycopg connection (its cursors and subscriptions take it)
        self.statement_lock = threading.RLock()
        #: the subscriptions open on this connection (each removes itself when it ends)
        self.subscriptions: list = []

    @property
    def database(self) -> str:
        """The server's database name (the embedded connection's is its ``Database``)."""
        return self.pgconn.info.dbname

    def cursor(self) -> "RemoteCursor":
        if self._closed or self.pgconn.closed:
            raise InterfaceError("connection already closed")
        return _cursor_class()(self)

    def execute(self, sql: str, params: Optional[Sequence[Any]] = None) -> "RemoteCursor":
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> "RemoteCursor":
        return self.cursor().executemany(sql, seq_of_params)

    def executescript(self, sql: str) -> "RemoteCursor":
        return self.cursor().executescript(sql)

    def subscribe(self, query_or_name: str, *, snapshot: bool = True, progress: bool = False,
                  as_of: Optional[int] = None, up_to: Optional[int] = None, max_buffered: Optional[int] = None):
        """``Connection.subscribe`` over the wire: a ``mzlite.remote_subscribe.RemoteSubscription``
        on a session of its own, yielding the same ``Update``/``Progress`` items."""
        self._check_open()
        if max_buffered is not None:
            raise NotSupportedError("max_buffered is not supported on a remote connection: the server bounds "
                                    "what a subscription buffers (mzlite serve --subscribe-buffer)", sqlstate="0A000")
        from mzlite.remote_subscribe import RemoteSubscription
        sub = RemoteSubscription(self, query_or_name, snapshot=snapshot, progress=progress, as_of=as_of, up_to=up_to)
        self.subscriptions.append(sub)
        return sub

    def describe(self, sql: str, param_types=()):
        """``(parameter types, columns)`` of one statement without running it (the wire
        protocol's Describe): ``columns`` is ``[]`` for a statement without rows."""
        self._check_open()
        if param_types:
            raise NotSupportedError("describe() with param_types is not supported on a remote connection",
                                    sqlstate="0A000")
        text, inserts = translate_placeholders(sql)
        with self.statement_lock, Translating(inserts):
            from psycopg import generators, pq
            pg = self.pgconn.pgconn
            res = None
            for send in (lambda: pg.send_prepare(b"", text.encode()), lambda: pg.send_describe_prepared(b"")):
                send()  # psycopg's own way of waiting (its connection is non-blocking)
                for res in self.pgconn.wait(generators.execute(pg)):
                    if res.status == pq.ExecStatus.FATAL_ERROR:
                        raise _res_error(res, inserts)
            ad = self.pgconn.adapters
            params = tuple(type_short_name(res.param_type(i), ad) for i in range(res.nparams))
            cols = [(res.fname(i).decode(), type_short_name(res.ftype(i), ad)) for i in range(res.nfields)]
            return params, cols

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus as TS
        return not self._closed and self.pgconn.info.transaction_status in (TS.INTRANS, TS.INERROR)

    def commit(self) -> None:
        self._check_open()
        if self.in_transaction:
            self.execute("COMMIT")

    def rollback(self) -> None:
        self._check_open()
        if self.in_transaction:
            self.execute("ROLLBACK")

    def close(self) -> None:
        """Close the connection and its subscriptions (idempotent); a statement running on
        another thread is canceled first."""
        if self._closed:
            return
        self._closed = True
        for sub in list(self.subscriptions):
            sub.close()
        from psycopg.pq import TransactionStatus as TS
        if self.pgconn.info.transaction_status == TS.ACTIVE:
            self.cancel()
        got = self.statement_lock.acquire(timeout=10.0)  # the canceled statement finishes before libpq's is freed
        try:
            self.pgconn.close()
        finally:
            if got:
                self.statement_lock.release()

    @property
    def closed(self) -> bool:
        return self._closed or self.pgconn.closed

    def connect(self) -> "RemoteConnection":
        """Another session on the same server."""
        self._check_open()
        return connect_remote(self.dsn)

    def cancel(self) -> None:
        """Cancel the statement this connection runs (psycopg's cancel request): it raises
        ``QueryCanceled`` (57014) and the connection stays usable."""
        if self.pgconn.closed:
            return
        try:
            self.pgconn.cancel_safe(timeout=10.0)
        except Exception:  # noqa: BLE001 - a cancel that cannot be delivered cancels nothing
            pass

    interrupt = cancel

    def _check_open(self) -> None:
        if self.closed:
            raise InterfaceError("connection already closed")

    def __enter__(self):
        self._check_open()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if not self.closed:
                if exc_type is None:
                    self.commit()
                else:
                    self.rollback()
        finally:
            self.close()
        return False


@lru_cache(maxsize=1)
def _cursor_class():
    from mzlite.remote_cursor import RemoteCursor  # it imports this module: bound on first use
    return RemoteCursor


def _res_error(res, inserts) -> _errors.Error:
    from psycopg import pq
    f = pq.DiagnosticField

    def field(k):
        v = res.error_field(k)
        return None if v is None else v.decode()
    pos = field(f.STATEMENT_POSITION)
    state = field(f.SQLSTATE) or "XX000"
    return class_for(state)(field(f.MESSAGE_PRIMARY) or res.error_message.decode(), sqlstate=state,
                            position=original_position(int(pos), inserts) if pos else None,
                            detail=field(f.MESSAGE_DETAIL), hint=field(f.MESSAGE_HINT), context=field(f.CONTEXT))
