"""One client connection: the protocol's state machine over one adapter session.

Owns ``WireSession``: the startup phase (SSL/GSSENC negotiation, authentication, parameter
status, the cancel key), then the simple and extended query protocols, streamed SUBSCRIBE
(as ``COPY ... TO STDOUT``), the statuses of ReadyForQuery, and turning every engine error
into an ErrorResponse.  Each connection is an ``mzlite.Connection`` on the server's one
``Database`` (the public API fits: a session's variables, transaction and cursors are
the connection's), so SQL semantics stay in the adapter.

Invariants: exactly one ReadyForQuery ends every simple query and every Sync; after an
error in an extended-protocol batch every message up to Sync is skipped; the transaction
status reported is the session's (``I``, ``T``, ``E``); no engine lock is held while the
server waits for the client (results are complete before they are sent, and a SUBSCRIBE's
rows are read from its buffer, which the engine fills without waiting); a client that
stops reading is disconnected once a write waits longer than the server's write timeout.
Deliberately not here: the socket listener, limits on connections and TLS
(``server.listener``), message layout (``server.messages``), value formats
(``server.pgtypes``), SCRAM (``server.auth``).

Over 600 lines: the simple protocol, the extended protocol, COPY and streamed SUBSCRIBE
share one connection's state (statements, portals, the skip-to-Sync rule, the cancel flag
and the output buffer); split, each part would reach into the others' state.
"""
from __future__ import annotations

import logging
import re
import socket
import struct
import threading
import time
from typing import Optional

from mzlite.prepared import PreparedStatement
from server import copy_binary, messages as M
from server import pgtypes
from sql.errors import Error, error_for

log = logging.getLogger("mzlite.server")

#: the run-time parameters reported at startup and whenever SET changes one; the values
#: of those mzlite has no variable for are fixed
REPORTED = ("server_version", "server_encoding", "client_encoding", "DateStyle", "TimeZone",
            "integer_datetimes", "standard_conforming_strings", "IntervalStyle", "is_superuser",
            "application_name", "session_authorization", "mz_version", "transaction_isolation",
            "cluster", "database", "search_path")
FIXED = {"server_version": "9.5.0", "server_encoding": "UTF8", "integer_datetimes": "on",
         "standard_conforming_strings": "on", "IntervalStyle": "postgres", "is_superuser": "off",
         "mz_version": "v0.1.0 (mzlite)"}
#: reported name -> the session variable that holds it
VARIABLE = {"client_encoding": "client_encoding", "DateStyle": "datestyle", "TimeZone": "timezone",
            "application_name": "application_name", "transaction_isolation": "transaction_isolation",
            "cluster": "cluster", "database": "database", "search_path": "search_path"}
_VARIABLE_NAMES = tuple(VARIABLE.values())
_ENCODINGS = {"utf8", "utf-8", "unicode"}
#: how often a waiting SUBSCRIBE stream checks for a cancel and for the end of the server
STREAM_POLL_SECONDS = 0.02
#: the client socket's timeout: how often a read waiting for the client checks for shutdown
READ_POLL_SECONDS = 0.5
_COPY_TO = re.compile(r"^\s*COPY\s*\((?P<q>.*)\)\s*TO\s+STDOUT\s*(?:WITH\s*)?(?P<opts>\(.*\))?\s*;?\s*$",
                      re.I | re.S)
_COPY = re.compile(r"^\s*COPY\b", re.I)
_SUBSCRIBE = re.compile(r"^\s*SUBSCRIBE\b", re.I)
_WRITES = ("insert", "update", "delete")


class Portal:
    """A bound statement: parameters, result formats, and once executed its rows."""
    __slots__ = ("stmt", "params", "formats", "cursor", "rows", "pos", "encoders", "tag", "fields", "done")

    def __init__(self, stmt, params, formats):
        self.stmt, self.params, self.formats = stmt, params, formats
        self.cursor = None
        self.rows = None
        self.pos = 0
        self.encoders = None
        self.tag = None
        self.fields = None
        self.done = False


class SocketIO:
    """Buffered reads and writes on the client's socket.  Reads retry on the socket's
    timeout (an idle client is fine) until the server stops; a write that makes no progress
    for the write timeout ends the connection (a client that stopped reading).  The socket's
    timeout is the read poll (``READ_POLL_SECONDS``) throughout: a flush is ``send`` calls
    under it, never a ``settimeout`` per write."""

    def __init__(self, sock, stopping, write_timeout: float):
        self.sock = sock
        self.stopping = stopping
        self.write_timeout = write_timeout
        self.buf = bytearray()
        self.pos = 0  # what is read of ``buf`` (consumed bytes are dropped when it refills)
        self.out: list = []
        self.out_bytes = 0
        self.sends = 0  # flushes that reached the socket (one per ReadyForQuery in a batch)

    def read(self, n: int) -> bytes:
        pos = self.pos
        if len(self.buf) - pos < n:
            self._fill(n)
            pos = self.pos
        self.pos = pos + n
        return bytes(self.buf[pos:pos + n])

    def _fill(self, n: int) -> None:
        """Receive until ``n`` unread bytes are buffered."""
        if self.pos:
            del self.buf[:self.pos]
            self.pos = 0
        while len(self.buf) < n:
            try:
                chunk = self.sock.recv(max(65536, n - len(self.buf)))
            except socket.timeout:
                if self.stopping():
                    raise M.ConnectionClosed() from None
                continue
            except (OSError, ValueError):
                raise M.ConnectionClosed() from None
            if not chunk:
                raise M.ConnectionClosed()
            self.buf += chunk

    def write(self, data: bytes) -> None:
        self.out.append(data)
        self.out_bytes += len(data)
        if self.out_bytes >= 1 << 16:
            self.flush()

    def flush(self) -> None:
        if not self.out:
            return
        data = b"".join(self.out) if len(self.out) > 1 else self.out[0]
        self.out.clear()
        self.out_bytes = 0
        self.sends += 1
        view = memoryview(data)
        deadline = None
        while view:
            try:
                sent = self.sock.send(view)
            except socket.timeout:  # the client is not reading: wait up to the write timeout
                now = time.monotonic()
                if deadline is None:
                    deadline = now + max(0.0, self.write_timeout - READ_POLL_SECONDS)
                if now >= deadline or self.stopping():
                    raise M.ConnectionClosed() from None
                continue
            except (OSError, ValueError):
                raise M.ConnectionClosed() from None
            view = view[sent:]
            deadline = None


class WireSession:
    """One client (see the module docstring)."""

    def __init__(self, server, sock, peer, process_id: int, secret_key: int):
        self.server = server
        self.sock = sock
        self.peer = peer
        self.process_id = process_id
        self.secret_key = secret_key
        self.io = SocketIO(sock, lambda: server.stopping, server.write_timeout)
        self.con = None
        #: the unnamed statement; named ones are the session's (``Session.prepared``), shared
        #: with SQL's PREPARE / EXECUTE / DEALLOCATE as in PostgreSQL
        self.unnamed: Optional[PreparedStatement] = None
        self.portals: dict[str, Portal] = {}
        self.canceled = threading.Event()
        self.user = None
        self.reported: dict = {}
        #: the session variables behind ``reported`` as they were last compared (``_report_changes``)
        self._reported_raw = None
        #: (columns, id(described columns), result formats) -> (described columns,
        #: FieldDescriptions, encoders): a prepared statement's result is described once, not
        #: per Execute (bounded: emptied when full)
        self._fields_cache: dict = {}
        #: the message being processed (its type's name), None while waiting for the client
        self.active: Optional[str] = None

    # ------------------------------------------------------------------ plumbing
    def send(self, msg) -> None:
        self.io.write(msg.encode())

    def flush(self) -> None:
        self.io.flush()

    def read_password(self) -> bytes:
        tag, payload = M.read_message(self.io, self.server.max_message_bytes)
        if tag != b"p":
            raise M.ProtocolViolation("expected a password response")
        return payload

    def cancel(self) -> None:
        """A CancelRequest with this session's key arrived (on another connection)."""
        self.canceled.set()
        con = self.con
        if con is not None:
            con.cancel()

    def send_error(self, e: Error, severity: str = "ERROR", offset: int = 0) -> None:
        pos = e.position + offset if getattr(e, "position", None) else None
        self.send(M.ErrorResponse(e.sqlstate, e.message, severity, getattr(e, "detail", None),
                                  getattr(e, "hint", None), pos))

    def status(self) -> bytes:
        session = self.con.session
        txn = session.txn
        if txn is None or not txn.explicit:
            return b"I"
        return b"E" if txn.failed else b"T"

    # ------------------------------------------------------------------ lifecycle
    def run(self) -> None:
        """Serve the client until it leaves; never raises."""
        try:
            if not self.startup():
                return
            self.loop()
        except M.ConnectionClosed:
            pass
        except M.ProtocolViolation as e:
            self._fatal(e)
        except Exception as e:  # a bug: report it to the client and the log, close this connection only
            log.exception("internal error in connection %s", self.process_id)
            self._fatal(error_for("XX000", f"internal error: {type(e).__name__}: {e}"))
        finally:
            self.close()

    def _fatal(self, e: Error) -> None:
        try:
            self.send_error(e, "FATAL")
            self.flush()
        except Exception:  # the client went away too
            pass

    def close(self) -> None:
        for p in list(self.portals.values()):
            self._close_portal(p)
        self.portals.clear()
        if self.con is not None:
            try:
                self.con.close()
            except Exception:  # closing must not raise into the listener
                log.exception("closing connection %s", self.process_id)
            self.con = None
        try:
            self.sock.close()
        except OSError:
            pass

    def startup(self) -> bool:
        """The startup phase; False when the connection was a CancelRequest or refused."""
        tls_done = False
        while True:
            msg = M.read_startup(self.io)
            if isinstance(msg, M.CancelRequest):
                self.server.cancel(msg.process_id, msg.secret_key)
                return False
            if isinstance(msg, M.GSSENCRequest):
                self.io.sock.sendall(b"N")
                continue
            if isinstance(msg, M.SSLRequest):
                if self.server.tls is not None and not tls_done:
                    self.sock.sendall(b"S")
                    self.sock = self.server.tls.wrap_socket(self.sock, server_side=True)
                    self.sock.settimeout(READ_POLL_SECONDS)
                    self.io.sock = self.sock
                    tls_done = True
                else:
                    self.sock.sendall(b"N")
                continue
            break
        if self.server.require_tls and not tls_done:
            raise M.ProtocolViolation("the server requires TLS (connect with sslmode=require)", sqlstate="28000")
        params = msg.parameters
        self.user = params["user"]
        if self.server.credentials is not None:
            from server.auth import scram_exchange
            scram_exchange(self, self.user, self.server.credentials)
        self.send(M.AuthenticationRequest(0))
        self.con = self.server.open_session()
        self.con.session.copy_binary = True  # COPY's binary format: server.copy_binary
        notices = self._apply_startup_parameters(params)
        for name in REPORTED:
            value = self._reported_value(name)
            self.reported[name] = value
            self.send(M.ParameterStatus(name, value))
        self.send(M.BackendKeyData(self.process_id, self.secret_key))
        for n in notices:
            self.send(n)
        self.send(M.ReadyForQuery(b"I"))
        self.flush()
        log.info("connection %s: %s@%s from %s", self.process_id, self.user, params.get("database", self.user),
                 self.peer)
        return True

    def _apply_startup_parameters(self, params: dict) -> list:
        notices = []
        options = params.get("options", "")
        pairs = [(k, v) for k, v in params.items() if k not in ("user", "database", "options", "replication")]
        for m in re.finditer(r"(?:-c\s*|--)([\w.]+)=((?:\\ |\S)+)", options):
            pairs.append((m.group(1), m.group(2).replace("\\ ", " ")))
        db = params.get("database", self.user)
        if db != "materialize":
            notices.append(M.NoticeResponse("00000", f'session database "{db}" does not exist; mzlite has one '
                                            f'database, "materialize"'))
        for name, value in pairs:
            if name.lower() == "client_encoding":
                if value.strip("'\"").lower() not in _ENCODINGS:
                    raise M.ProtocolViolation(f'invalid value for parameter "client_encoding": "{value}"',
                                              sqlstate="22023")
                continue
            try:
                self.con.session.set_var(name, value)
            except Error as e:
                notices.append(M.NoticeResponse(e.sqlstate, f"startup parameter {name!r} ignored: {e.message}",
                                                "WARNING"))
        return notices

    def _reported_value(self, name: str) -> str:
        if name in FIXED:
            return FIXED[name]
        if name == "session_authorization":
            return self.user
        return self.con.session.show_var(VARIABLE[name])

    def _report_changes(self) -> None:
        vars_ = self.con.session.vars
        raw = tuple([vars_.get(v) for v in _VARIABLE_NAMES])  # show_var formats these alone
        if raw == self._reported_raw:
            return
        self._reported_raw = raw
        for name in VARIABLE:
            value = self._reported_value(name)
            if self.reported.get(name) != value:
                self.reported[name] = value
                self.send(M.ParameterStatus(name, value))

    # ------------------------------------------------------------------ the session loop
    def loop(self) -> None:
        skipping = False  # an extended-protocol error: skip to Sync
        while True:
            self.active = None
            tag, payload = M.read_message(self.io, self.server.max_message_bytes)
            msg = M.decode_message(tag, payload)
            self.active = type(msg).__name__
            if isinstance(msg, M.Terminate):
                return
            if isinstance(msg, M.Sync):
                skipping = False
                self._end_batch()
                self.send(M.ReadyForQuery(self.status()))
                self.flush()
                continue
            if isinstance(msg, M.Query):
                skipping = False
                self.canceled.clear()
                self.unnamed = None  # a simple query destroys the unnamed statement, as PostgreSQL's
                self.simple_query(msg.sql)
                self._report_changes()
                self.send(M.ReadyForQuery(self.status()))
                self.flush()
                continue
            if isinstance(msg, M.Flush):
                self.flush()
                continue
            if isinstance(msg, (M.CopyData, M.CopyDone, M.CopyFail)):
                continue  # stray COPY messages outside COPY FROM STDIN are ignored, as PostgreSQL does
            if skipping:
                continue
            try:
                self.canceled.clear()
                self.extended(msg)
            except Error as e:
                self.send_error(e)
                skipping = True

    def _end_batch(self) -> None:
        """Sync outside a transaction block ends the portals (they belong to the implicit transaction)."""
        if self.status() == b"I":
            for p in list(self.portals.values()):
                self._close_portal(p)
            self.portals.clear()

    # ------------------------------------------------------------------ simple query
    def simple_query(self, sql: str) -> None:
        if not sql.strip().strip(";").strip():
            self.send(M.EmptyQueryResponse())
            return
        if _COPY.match(sql):
            try:
                self.copy(sql)
            except Error as e:
                self.send_error(e)
            return
        try:
            pieces = self._split(sql)
        except Error as e:
            self.send_error(e)
            return
        implicit = (len(pieces) > 1 and self.status() == b"I" and all(k in _WRITES for k, _, _ in pieces))
        if implicit:  # several writes in one string commit together, as PostgreSQL's implicit transaction
            self.con.cursor().execute("BEGIN")
        for kind, text, offset in pieces:
            try:
                if kind == "subscribe":
                    self.stream_subscribe(text, ())
                else:
                    cur = self._execute(text, None)
                    self._send_result(cur, None, describe=True)
                self._report_changes()
            except Error as e:
                self.send_error(e, offset=offset)
                if implicit:
                    self.con.cursor().execute("ROLLBACK")
                return
        if implicit:
            try:
                self.con.cursor().execute("COMMIT")
            except Error as e:
                self.send_error(e)

    def _split(self, sql: str) -> list:
        """``(kind, text, offset)`` per statement; the whole string when it is one statement
        or not PostgreSQL's dialect (the engine splits and translates it)."""
        if self.con.session.vars.get("sql_dialect", "postgres") != "postgres":
            return [("", sql, 0)]
        if _SUBSCRIBE.match(sql) and sql.count(";") <= 1:
            return [("subscribe", sql, 0)]
        stmts = self.con.database.parse(sql)  # cached: the engine does not parse it again
        if len(stmts) <= 1:
            return [(stmts[0].kind if stmts else "", sql, 0)]
        return [(s.kind, s.text, s.offset) for s in stmts]

    def _execute(self, sql: str, params):
        cur = self.con.cursor()
        cur.intervals_as_timedelta = False  # engine values: the wire formats are PostgreSQL's
        cur.documents_as_python = False
        cur.execute(sql, params)
        return cur

    def _fields_and_encoders(self, desc, formats):
        fields, encs = [], []
        n = len(desc)
        for i, col in enumerate(desc):
            fmt = formats[0] if len(formats) == 1 else (formats[i] if i < len(formats) else 0)
            t = pgtypes.pg_type(col[1])
            encs.append(pgtypes.encoder(col[1], fmt))
            fields.append(M.FieldDescription(col[0], t.oid, t.typlen, _atttypmod(col), fmt))
        if len(formats) > 1 and len(formats) != n:
            raise M.ProtocolViolation(f"bind message has {len(formats)} result formats but query has {n} columns")
        return tuple(fields), encs

    def _send_result(self, cur, formats, describe: bool):
        desc = cur.description
        if desc is None:
            self.send(M.CommandComplete(_tag(cur.statusmessage)))
            return
        fields, encs = self._fields_and_encoders(desc, formats or ())
        if describe:
            self.send(M.RowDescription(fields))
        rows = cur.fetchall()
        self.io.write(encode_rows(rows, encs))
        self.send(M.CommandComplete(_tag(cur.statusmessage, len(rows))))

    # ------------------------------------------------------------------ SUBSCRIBE and COPY out
    def stream_subscribe(self, sql: str, params) -> None:
        """Run a SUBSCRIBE and stream its rows as COPY data (Materialize's way: text format,
        one line per row), until it ends (UP TO), fails, is canceled or the client leaves."""
        from mzlite.subscribe import flat_row, output_columns
        if params:
            raise error_for("0A000", "SUBSCRIBE with parameters is not supported")
        con = self.con
        sub = con.database.subscribe(con.session, sql, max_buffered=self.server.subscribe_buffer)
        try:
            desc = output_columns(sub)
            encs = [pgtypes.encoder(t, 0) for _, t in desc]
            self.send(M.CopyResponse(b"H", 0, (0,) * len(desc)))
            self.flush()
            n = 0
            while True:
                if self.canceled.is_set():
                    raise error_for("57014", "canceling statement due to user request")
                if self.server.stopping:
                    raise error_for("57P01", "terminating connection due to administrator command")
                items = sub.fetch(STREAM_POLL_SECONDS, 4096)
                if items:
                    self.io.write(b"".join(M.CopyData(copy_text_row(flat_row(sub, x), encs)).encode()
                                           for x in items))
                    n += len(items)
                    self.flush()
                elif sub.done:
                    break
        finally:
            sub.close()
        self.send(M.CopyDone())
        self.send(M.CommandComplete(f"SUBSCRIBE {n}"))

    def copy(self, sql: str) -> None:
        """``COPY (SUBSCRIBE ...) TO STDOUT`` streams; any other COPY runs through the engine's
        ``mzlite.copy`` objects: CopyData in chunks into a ``CopyIn``, a ``CopyOut``'s chunks out."""
        m = _COPY_TO.match(sql)
        if m is not None and _SUBSCRIBE.match(m.group("q")):
            if re.search(r"\b(binary|csv)\b", (m.group("opts") or ""), re.I):
                raise error_for("0A000", "COPY (SUBSCRIBE ...) TO STDOUT supports the text format only")
            self.stream_subscribe(m.group("q"), ())
            return
        from mzlite.copy import CopyIn
        cur = self.con.cursor()
        cur.intervals_as_timedelta = False
        cur.documents_as_python = False
        copy = cur.copy(sql)
        eng = copy.engine
        fmt = eng.fmt
        ncols = len(fmt.columns)
        f = 1 if fmt.binary else 0
        if isinstance(eng, CopyIn):
            parser = copy_binary.BinaryCopyIn(fmt.types) if fmt.binary else None
            self.send(M.CopyResponse(b"G", f, (f,) * ncols))
            self.flush()
            self.copy_in(copy, parser)
            return
        if fmt.binary:
            encode = copy_binary.row_encoder(fmt.types)  # before CopyOutResponse: a type may refuse
            self.send(M.CopyResponse(b"H", 1, (1,) * ncols))
            self.copy_out_binary(eng, encode)
            return
        self.send(M.CopyResponse(b"H", 0, (0,) * ncols))
        if fmt.header:
            self.io.write(M.CopyData(fmt.header_line().encode()).encode())
        for row in eng.rows:  # one row per CopyData, as PostgreSQL sends them (psycopg's rows() needs it)
            self.io.write(M.CopyData(fmt.format_rows([row]).encode()).encode())
        self.send(M.CopyDone())
        self.send(M.CommandComplete(f"COPY {eng.rowcount}"))

    def copy_out_binary(self, eng, encode) -> None:
        """COPY TO STDOUT (FORMAT BINARY): the header with the first row, one row per CopyData
        (as PostgreSQL sends them), the trailer in the last."""
        try:
            pending = copy_binary.HEADER
            for row in eng.rows:
                self.io.write(M.CopyData(pending + encode(row)).encode())
                pending = b""
        except (struct.error, OverflowError) as e:
            raise error_for("22003", f"value out of range for its column's type: {e}") from None
        self.io.write(M.CopyData(pending + copy_binary.TRAILER).encode())
        self.send(M.CopyDone())
        self.send(M.CommandComplete(f"COPY {eng.rowcount}"))

    def copy_in(self, copy, binary=None) -> None:
        """COPY FROM STDIN: CopyData until CopyDone (load) or CopyFail (nothing loaded);
        Flush and Sync are ignored meanwhile, as PostgreSQL ignores them.  ``binary``: the
        parser of the binary format, whose rows go in with ``write_row``."""
        while True:
            tag, payload = M.read_message(self.io, self.server.max_message_bytes)
            msg = M.decode_message(tag, payload)
            if isinstance(msg, M.CopyData):
                try:
                    if binary is None:
                        copy.write(msg.data)
                    else:
                        for row in binary.feed(msg.data):
                            copy.write_row(row)
                except Error:
                    copy.engine.abort()
                    self._drain_copy()
                    raise
            elif isinstance(msg, M.CopyDone):
                if binary is not None:
                    try:
                        binary.finish()
                    except Error:
                        copy.engine.abort()
                        raise
                n = copy.finish()
                self.send(M.CommandComplete(f"COPY {n}"))
                return
            elif isinstance(msg, M.CopyFail):
                copy.engine.abort()
                raise error_for("57014", f"COPY from stdin failed: {msg.message}")
            elif isinstance(msg, (M.Flush, M.Sync)):
                continue
            elif isinstance(msg, M.Terminate):
                copy.engine.abort()
                raise M.ConnectionClosed()
            else:
                copy.engine.abort()
                raise M.ProtocolViolation(f"unexpected message type {tag!r} during COPY from stdin")

    def _drain_copy(self) -> None:
        """After a failed COPY FROM STDIN, read the client's remaining CopyData up to its end."""
        while True:
            tag, payload = M.read_message(self.io, self.server.max_message_bytes)
            if tag in (b"c", b"f"):
                return
            if tag not in (b"d", b"H", b"S"):
                raise M.ProtocolViolation(f"unexpected message type {tag!r} during COPY from stdin")

    # ------------------------------------------------------------------ extended protocol
    def extended(self, msg) -> None:
        if isinstance(msg, M.Parse):
            self.parse(msg)
        elif isinstance(msg, M.Bind):
            self.bind(msg)
        elif isinstance(msg, M.Describe):
            self.describe(msg)
        elif isinstance(msg, M.Execute):
            self.execute(msg)
        elif isinstance(msg, M.Close):
            if msg.kind == b"S":
                if msg.name:
                    self.con.session.prepared.pop(msg.name, None)
                else:
                    self.unnamed = None
            else:
                p = self.portals.pop(msg.name, None)
                if p is not None:
                    self._close_portal(p)
            self.send(M.CloseComplete())
        elif isinstance(msg, M.FunctionCall):
            raise error_for("0A000", "the fastpath function call protocol is not supported")
        elif isinstance(msg, M.PasswordMessage):
            raise M.ProtocolViolation("unexpected password message")

    def _statement(self, name: str) -> PreparedStatement:
        stmt = self.con.session.prepared.get(name) if name else self.unnamed
        if stmt is None:
            raise error_for("26000", f'prepared statement "{name}" does not exist')
        return stmt

    def parse(self, msg: M.Parse) -> None:
        if msg.name and msg.name in self.con.session.prepared:
            raise error_for("42P05", f'prepared statement "{msg.name}" already exists')
        declared = tuple(pgtypes.type_name_for_oid(o) for o in msg.param_types)
        if not msg.sql.strip().strip(";").strip():
            stmt = PreparedStatement(msg.sql, (), [])
        elif _COPY.match(msg.sql):
            raise error_for("0A000", "COPY in the extended query protocol is not supported; use a simple query")
        else:
            types, columns = self.server.describe(self.con, msg.sql, declared)
            stmt = PreparedStatement(msg.sql, types, columns)
        if msg.name:
            self.con.session.prepared[msg.name] = stmt
        else:
            self.unnamed = stmt
        self.send(M.ParseComplete())

    def bind(self, msg: M.Bind) -> None:
        stmt = self._statement(msg.statement)
        if len(msg.params) != len(stmt.param_types):
            raise M.ProtocolViolation(f"bind message supplies {len(msg.params)} parameters, but prepared "
                                      f"statement \"{msg.statement}\" requires {len(stmt.param_types)}")
        pf = msg.param_formats
        params = []
        for i, (t, v) in enumerate(zip(stmt.param_types, msg.params)):
            fmt = pf[0] if len(pf) == 1 else (pf[i] if pf else 0)
            params.append(pgtypes.decode_parameter(t, fmt, v))
        if msg.portal and msg.portal in self.portals:
            raise error_for("42P03", f'portal "{msg.portal}" already exists')
        old = self.portals.pop(msg.portal, None)
        if old is not None:
            self._close_portal(old)
        self.portals[msg.portal] = Portal(stmt, tuple(params), msg.result_formats)
        self.send(M.BindComplete())

    def describe(self, msg: M.Describe) -> None:
        if msg.kind == b"S":
            stmt = self._statement(msg.name)
            self.send(M.ParameterDescription(tuple(pgtypes.pg_type(t).oid for t in stmt.param_types)))
            if stmt.columns:
                fields, _ = self._fields_and_encoders([(n, t) for n, t in stmt.columns], ())
                self.send(M.RowDescription(fields))
            else:
                self.send(M.NoData())
            return
        portal = self.portals.get(msg.name)
        if portal is None:
            cursor = self.con.session.portals.get(msg.name)  # a SQL cursor (DECLARE) is a portal too
            if cursor is None:
                raise error_for("34000", f'portal "{msg.name}" does not exist')
            fields, _ = self._fields_and_encoders(list(cursor.columns), ())
            self.send(M.RowDescription(fields))
            return
        if _SUBSCRIBE.match(portal.stmt.sql):
            self._start_subscribe(portal)
        else:
            self._run_portal(portal)  # the columns of what actually runs (a FETCH's, a SHOW's)
        self.send(M.RowDescription(portal.fields) if portal.fields else M.NoData())

    def _run_portal(self, portal: Portal) -> None:
        if portal.rows is not None or portal.done:
            return
        if not portal.stmt.sql.strip().strip(";").strip():
            portal.rows, portal.fields, portal.tag = [], (), None
            return
        cur = self._execute(portal.stmt.sql, portal.params or None)
        self._report_changes()
        desc = cur.description
        if desc is None:
            portal.rows, portal.fields, portal.tag = [], (), _tag(cur.statusmessage)
            return
        described = portal.stmt.columns
        key = (tuple(desc), id(described), portal.formats)
        hit = self._fields_cache.get(key)
        if hit is None or hit[0] is not described:
            cols = [(d[0], d[1]) for d in desc]
            if described and len(described) == len(cols):  # the types a Describe statement announced
                cols = [(n, t) for (n, _), (_, t) in zip(cols, described)]
            hit = (described, *self._fields_and_encoders(cols, portal.formats))
            if len(self._fields_cache) > 64:
                self._fields_cache.clear()
            self._fields_cache[key] = hit
        portal.fields, portal.encoders = hit[1], hit[2]
        portal.cursor = cur
        portal.rows = cur.fetchall()
        portal.tag = cur.statusmessage

    def execute(self, msg: M.Execute) -> None:
        portal = self.portals.get(msg.portal)
        if portal is None:
            raise error_for("34000", f'portal "{msg.portal}" does not exist')
        if _SUBSCRIBE.match(portal.stmt.sql):
            self._start_subscribe(portal)
            self._stream_portal(portal, msg.max_rows)
            return
        if portal.tag is None and portal.rows is not None and portal.fields == ():
            self.send(M.EmptyQueryResponse())
            return
        self._run_portal(portal)
        if not portal.fields:
            self.send(M.CommandComplete(_tag(portal.tag)))
            return
        rows = portal.rows
        start = portal.pos
        end = len(rows) if msg.max_rows <= 0 else min(len(rows), start + msg.max_rows)
        self.io.write(encode_rows(rows[start:end], portal.encoders))
        portal.pos = end
        if end < len(rows):
            self.send(M.PortalSuspended())
        else:
            self.send(M.CommandComplete(_tag(portal.tag, end - start)))

    def _start_subscribe(self, portal: Portal) -> None:
        """A SUBSCRIBE portal (the extended protocol): started once, its rows then streamed
        as DataRows by Execute, as Materialize does for ``cursor.stream``."""
        from mzlite.subscribe import output_columns
        if portal.cursor is not None:
            return
        if portal.params:
            raise error_for("0A000", "SUBSCRIBE with parameters is not supported")
        con = self.con
        sub = con.database.subscribe(con.session, portal.stmt.sql, max_buffered=self.server.subscribe_buffer)
        portal.cursor = sub
        portal.fields, portal.encoders = self._fields_and_encoders(output_columns(sub), portal.formats)

    def _stream_portal(self, portal: Portal, max_rows: int) -> None:
        """Execute of a SUBSCRIBE portal: rows as they arrive, flushed as they come, until the
        row limit (PortalSuspended), the end (CommandComplete), a cancel or shutdown (error)."""
        from mzlite.subscribe import flat_row
        sub = portal.cursor
        self.flush()
        sent = 0
        while max_rows <= 0 or sent < max_rows:
            if self.canceled.is_set():
                raise error_for("57014", "canceling statement due to user request")
            if self.server.stopping:
                raise error_for("57P01", "terminating connection due to administrator command")
            want = 4096 if max_rows <= 0 else min(4096, max_rows - sent)
            items = sub.fetch(STREAM_POLL_SECONDS, want)
            if items:
                self.io.write(encode_rows([flat_row(sub, x) for x in items], portal.encoders))
                sent += len(items)
                self.flush()
            elif sub.done:
                portal.done = True
                self.send(M.CommandComplete(f"SUBSCRIBE {sent}"))
                return
        self.send(M.PortalSuspended())

    def _close_portal(self, portal: Portal) -> None:
        if portal.cursor is not None:
            try:
                portal.cursor.close()
            except Error:
                pass
            portal.cursor = None


def _tag(status: Optional[str], n: Optional[int] = None) -> str:
    """The command tag of a result (``SELECT n`` counts the rows sent)."""
    if not status:
        return "OK"
    if n is not None and (status.startswith("SELECT") or status.startswith("FETCH") or status.startswith("SHOW")):
        word = status.split()[0]
        return f"{'SELECT' if word == 'SHOW' else word} {n}"
    return status


def encode_rows(rows, encoders) -> bytes:
    """DataRow messages for ``rows`` with one encoder per column (NULL stays None)."""
    encs = list(encoders)
    try:
        return M.data_rows([[None if v is None else e(v) for v, e in zip(row, encs)] for row in rows])
    except (struct.error, OverflowError) as e:
        raise error_for("22003", f"value out of range for its column's type: {e}") from None


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\b": "\\b", "\f": "\\f",
                               "\v": "\\v"})


def copy_text_row(row, encoders) -> bytes:
    """One row of COPY's text format: tab-separated, ``\\N`` for NULL, backslash escapes."""
    parts = []
    for v, e in zip(row, encoders):
        if v is None:
            parts.append("\\N")
        else:
            parts.append(e(v).decode("utf-8").translate(_COPY_ESCAPES))
    return ("\t".join(parts) + "\n").encode("utf-8")


def _atttypmod(col) -> int:
    """PostgreSQL's ``atttypmod`` of a description 7-tuple (``-1``: none), from the sizes the
    cursor reports: numeric(p,s) ``((p << 16) | s) + 4``, varchar(n)/char(n) ``n + 4`` (mzlite's
    varchar columns are text with a display size), timestamp(p)/time(p) ``p``, interval(p) the
    full field range with precision p."""
    if len(col) < 7:  # (name, type) of a statement described before it runs: no sizes known
        return -1
    type_code, display, precision, scale = col[1], col[2], col[4], col[5]
    if type_code == "numeric" and precision is not None:
        return ((precision << 16) | (scale or 0)) + 4
    if display is not None and type_code in ("text", "character varying", "character"):
        return display + 4
    if precision is not None and type_code.startswith(("timestamp", "time ")):
        return precision
    if precision is not None and type_code == "interval":
        return (0x7FFF << 16) | precision
    return -1
