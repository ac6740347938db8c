"""The PostgreSQL wire protocol, version 3: every message as a frozen dataclass.

Owns the one definition of every message mzlite's server reads or writes: the frontend
messages (client to server) with ``decode(payload)``, the backend messages (server to
client) with ``encode() -> bytes``, the framing (``read_startup``, ``read_message``) and
its limits.  Each class says what its sender and receiver must and must not do; the
receiving side (this module for frontend messages, which are all the server receives)
checks every "must" and raises ``ProtocolViolation`` (SQLSTATE 08P01), which the connection
answers with an ErrorResponse before closing.

Invariants: a message is never larger than ``max_message_bytes`` (checked from the length
word, before the payload is read, so an oversized message costs no memory); every string
is NUL-terminated UTF-8; a decoded message consumed its whole payload (trailing bytes are a
violation).  Deliberately not here: what a message means to a session (``server.session``),
sockets and TLS (``server.listener``), authentication exchanges (``server.auth``), value
encodings (``server.pgtypes``).  ``data_rows`` encodes many DataRow messages at once
without a dataclass per row: rows are the bulk of the traffic.

Over 600 lines: the project keeps one protocol module per protocol, so every message of
PostgreSQL's protocol that mzlite speaks is defined here and nowhere else.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import ClassVar, Optional

from sql.errors import Error

PROTOCOL_VERSION = 196608  # 3.0
SSL_REQUEST_CODE = 80877103
GSSENC_REQUEST_CODE = 80877104
CANCEL_REQUEST_CODE = 80877102
#: the largest message accepted unless the server is configured otherwise (PostgreSQL's is 1 GB)
DEFAULT_MAX_MESSAGE_BYTES = 64 << 20
#: a startup packet is small (PostgreSQL refuses more than 10,000 bytes)
MAX_STARTUP_BYTES = 10000

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")
_HDR = struct.Struct("!ci")


class ProtocolViolation(Error):
    """The client broke the protocol (08P01); the connection ends after the ErrorResponse."""
    default_sqlstate = "08P01"


class ConnectionClosed(Exception):
    """The client closed the socket (not an error to report: nobody is listening)."""


# ------------------------------------------------------------------ payload reading

class Reader:
    """Reads the fields of one payload; every read is bounds-checked (08P01 past the end)."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes):
        self.buf = buf
        self.pos = 0

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise ProtocolViolation("invalid message format: field runs past the end of the message")
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def int32(self) -> int:
        return _I32.unpack(self._take(4))[0]

    def int16(self) -> int:
        return _I16.unpack(self._take(2))[0]

    def byte(self) -> bytes:
        return self._take(1)

    def cstring(self) -> str:
        end = self.buf.find(b"\0", self.pos)
        if end < 0:
            raise ProtocolViolation("invalid message format: unterminated string")
        s = self.buf[self.pos:end]
        self.pos = end + 1
        try:
            return s.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolViolation("invalid byte sequence for encoding \"UTF8\"", sqlstate="22021") from None

    def bytes_(self, n: int) -> bytes:
        return self._take(n)

    def rest(self) -> bytes:
        b = self.buf[self.pos:]
        self.pos = len(self.buf)
        return b

    def done(self) -> None:
        if self.pos != len(self.buf):
            raise ProtocolViolation("invalid message format: trailing bytes")


def _cstr(s: str) -> bytes:
    return s.encode("utf-8") + b"\0"


def _message(tag: bytes, payload: bytes) -> bytes:
    return _HDR.pack(tag, len(payload) + 4) + payload


# ------------------------------------------------------------------ startup phase (frontend)

@dataclass(frozen=True)
class StartupMessage:
    """The first message of a session.  Sender: protocol 3.0 and ``user``; the parameters
    (``database``, ``application_name``, ``options``, other variables) are name/value pairs.
    Receiver: refuses another major version (08P01) and a missing user (28000)."""
    parameters: dict


@dataclass(frozen=True)
class SSLRequest:
    """Asks for TLS.  Receiver answers one byte, ``S`` (then the TLS handshake) or ``N``,
    and the client carries on with a new startup packet on the same socket."""


@dataclass(frozen=True)
class GSSENCRequest:
    """Asks for GSSAPI encryption: always answered ``N`` (mzlite has no Kerberos)."""


@dataclass(frozen=True)
class CancelRequest:
    """Sent on a new connection: cancel what backend ``process_id`` runs, if ``secret_key``
    matches the one its BackendKeyData gave.  Receiver: never answers (the socket is
    closed), and ignores a wrong key silently, as PostgreSQL does."""
    process_id: int
    secret_key: int


def decode_startup(payload: bytes):
    """A startup-phase packet (its payload, after the length word)."""
    r = Reader(payload)
    code = r.int32()
    if code == SSL_REQUEST_CODE:
        r.done()
        return SSLRequest()
    if code == GSSENC_REQUEST_CODE:
        r.done()
        return GSSENCRequest()
    if code == CANCEL_REQUEST_CODE:
        msg = CancelRequest(r.int32(), r.int32())
        r.done()
        return msg
    if code >> 16 != 3:
        raise ProtocolViolation(f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}: server supports "
                                f"3.0 to 3.0", sqlstate="0A000")
    params = {}
    while True:
        name = r.cstring()
        if not name:
            break
        params[name] = r.cstring()
    r.done()
    if "user" not in params:
        raise ProtocolViolation("no PostgreSQL user name specified in startup packet", sqlstate="28000")
    return StartupMessage(params)


# ------------------------------------------------------------------ session phase (frontend)

class _Bare:
    """A message without fields."""

    @classmethod
    def decode(cls, r: Reader):
        return cls()


class _Payload:
    """A message whose one field is the rest of its payload."""

    @classmethod
    def decode(cls, r: Reader):
        return cls(r.rest())


@dataclass(frozen=True)
class Query:
    """Simple query: one string of zero or more statements.  Receiver: answers each
    statement's results, then exactly one ReadyForQuery."""
    tag: ClassVar[bytes] = b"Q"
    sql: str

    @classmethod
    def decode(cls, r: Reader):
        return cls(r.cstring())


@dataclass(frozen=True)
class Parse:
    """Prepares ``sql`` (one statement) as ``name`` ("" the unnamed statement, replaced by
    the next Parse).  ``param_types`` are OIDs, 0 for "infer".  Receiver: a named statement
    must not already exist (42P05)."""
    tag: ClassVar[bytes] = b"P"
    name: str
    sql: str
    param_types: tuple

    @classmethod
    def decode(cls, r: Reader):
        name, sql = r.cstring(), r.cstring()
        n = r.int16()
        if n < 0:
            raise ProtocolViolation("invalid message format: negative parameter count")
        return cls(name, sql, tuple(r.int32() for _ in range(n)))


@dataclass(frozen=True)
class Bind:
    """Binds a prepared statement's parameters into portal ``portal``.  Format codes: none
    (all text), one (for all) or one per parameter/column; 0 text, 1 binary.  A value is
    None for NULL.  Receiver: the counts must agree (08P01)."""
    tag: ClassVar[bytes] = b"B"
    portal: str
    statement: str
    param_formats: tuple
    params: tuple
    result_formats: tuple

    @classmethod
    def decode(cls, r: Reader):
        portal, stmt = r.cstring(), r.cstring()
        pf = tuple(r.int16() for _ in range(max(r.int16(), 0)))
        n = r.int16()
        if n < 0:
            raise ProtocolViolation("invalid message format: negative parameter count")
        vals = []
        for _ in range(n):
            ln = r.int32()
            vals.append(None if ln == -1 else r.bytes_(ln))
        rf = tuple(r.int16() for _ in range(max(r.int16(), 0)))
        if any(f not in (0, 1) for f in pf + rf):
            raise ProtocolViolation("unsupported format code", sqlstate="22023")
        if len(pf) not in (0, 1, n):
            raise ProtocolViolation(f"bind message has {len(pf)} parameter formats but {n} parameters")
        return cls(portal, stmt, pf, tuple(vals), rf)


@dataclass(frozen=True)
class Describe:
    """Describe statement (``kind`` b"S": ParameterDescription then RowDescription or NoData)
    or portal (b"P": RowDescription or NoData)."""
    tag: ClassVar[bytes] = b"D"
    kind: bytes
    name: str

    @classmethod
    def decode(cls, r: Reader):
        kind = r.byte()
        if kind not in (b"S", b"P"):
            raise ProtocolViolation(f"invalid DESCRIBE message subtype {kind!r}")
        return cls(kind, r.cstring())


@dataclass(frozen=True)
class Execute:
    """Runs portal ``portal`` for at most ``max_rows`` rows (0: all).  Receiver: answers
    PortalSuspended when rows remain, CommandComplete when done."""
    tag: ClassVar[bytes] = b"E"
    portal: str
    max_rows: int

    @classmethod
    def decode(cls, r: Reader):
        return cls(r.cstring(), r.int32())


@dataclass(frozen=True)
class Sync(_Bare):
    """Ends an extended-protocol batch: the implicit transaction commits (or, after an
    error, the batch's remaining messages were skipped) and ReadyForQuery follows."""
    tag: ClassVar[bytes] = b"S"


@dataclass(frozen=True)
class Flush(_Bare):
    """Asks the server to send what it has buffered (no reply of its own)."""
    tag: ClassVar[bytes] = b"H"


@dataclass(frozen=True)
class Close:
    """Closes a prepared statement (b"S") or portal (b"P"); closing one that does not exist
    is not an error.  Receiver: answers CloseComplete."""
    tag: ClassVar[bytes] = b"C"
    kind: bytes
    name: str

    @classmethod
    def decode(cls, r: Reader):
        kind = r.byte()
        if kind not in (b"S", b"P"):
            raise ProtocolViolation(f"invalid CLOSE message subtype {kind!r}")
        return cls(kind, r.cstring())


@dataclass(frozen=True)
class Terminate(_Bare):
    """The client is leaving: the receiver closes the session without answering."""
    tag: ClassVar[bytes] = b"X"


@dataclass(frozen=True)
class PasswordMessage(_Payload):
    """A password, or a SASL message (``server.auth`` reads ``data`` by the exchange it is in)."""
    tag: ClassVar[bytes] = b"p"
    data: bytes


@dataclass(frozen=True)
class CopyData(_Payload):
    """A chunk of COPY data (either direction)."""
    tag: ClassVar[bytes] = b"d"
    data: bytes

    def encode(self) -> bytes:
        return _message(b"d", bytes(self.data))


@dataclass(frozen=True)
class CopyDone(_Bare):
    """The end of COPY data (either direction)."""
    tag: ClassVar[bytes] = b"c"

    def encode(self) -> bytes:
        return _message(b"c", b"")


@dataclass(frozen=True)
class CopyFail:
    """The client aborts COPY FROM STDIN with ``message``: the statement fails (57014)."""
    tag: ClassVar[bytes] = b"f"
    message: str

    @classmethod
    def decode(cls, r: Reader):
        return cls(r.cstring())


@dataclass(frozen=True)
class FunctionCall(_Payload):
    """The fastpath function call: refused (0A000), as Materialize refuses it."""
    tag: ClassVar[bytes] = b"F"
    payload: bytes


#: tag -> frontend message class (the session phase)
FRONTEND = {cls.tag: cls for cls in (Query, Parse, Bind, Describe, Execute, Sync, Flush, Close, Terminate,
                                      PasswordMessage, CopyData, CopyDone, CopyFail, FunctionCall)}


def decode_message(tag: bytes, payload: bytes):
    """A session-phase frontend message; 08P01 for an unknown tag or a malformed payload."""
    cls = FRONTEND.get(tag)
    if cls is None:
        raise ProtocolViolation(f"invalid frontend message type {tag[0] if tag else 0}")
    r = Reader(payload)
    msg = cls.decode(r)
    r.done()
    return msg


# ------------------------------------------------------------------ framing

def read_exact(stream, n: int) -> bytes:
    """``n`` bytes from a buffered binary stream; ``ConnectionClosed`` at end of file."""
    b = stream.read(n)
    if b is None or len(b) < n:
        raise ConnectionClosed()
    return b


def read_startup(stream) -> object:
    """One startup-phase packet (length word, then payload)."""
    n = _I32.unpack(read_exact(stream, 4))[0]
    if n < 8 or n > MAX_STARTUP_BYTES:
        raise ProtocolViolation("invalid length of startup packet")
    return decode_startup(read_exact(stream, n - 4))


def read_message(stream, max_bytes: int):
    """One session-phase message: ``(tag, payload)``; 08P01 when its length is invalid or
    larger than ``max_bytes`` (54000 is PostgreSQL's code for an oversized message)."""
    tag, n = _HDR.unpack(read_exact(stream, 5))
    if n < 4:
        raise ProtocolViolation("invalid message length")
    if n - 4 > max_bytes:
        raise ProtocolViolation(f"message of {n - 4} bytes exceeds the limit of {max_bytes} bytes",
                                sqlstate="54000")
    return tag, read_exact(stream, n - 4)


# ------------------------------------------------------------------ backend messages

@dataclass(frozen=True)
class AuthenticationRequest:
    """``code`` 0 ok, 3 cleartext password, 10 SASL (``data``: the mechanism list), 11 SASL
    continue, 12 SASL final.  Sender: nothing but authentication until AuthenticationOk."""
    code: int
    data: bytes = b""

    def encode(self) -> bytes:
        return _message(b"R", _I32.pack(self.code) + self.data)


@dataclass(frozen=True)
class ParameterStatus:
    """A reported run-time parameter: every one in ``server.session.REPORTED`` at startup,
    and again whenever SET changes one."""
    name: str
    value: str

    def encode(self) -> bytes:
        return _message(b"S", _cstr(self.name) + _cstr(self.value))


@dataclass(frozen=True)
class BackendKeyData:
    """The key a CancelRequest must quote: sent once, after authentication."""
    process_id: int
    secret_key: int

    def encode(self) -> bytes:
        return _message(b"K", _I32.pack(self.process_id) + _I32.pack(self.secret_key))


@dataclass(frozen=True)
class ReadyForQuery:
    """Ends every simple query and every Sync.  ``status``: b"I" idle, b"T" in a transaction
    block, b"E" in a failed transaction block (only COMMIT/ROLLBACK are accepted)."""
    status: bytes

    def encode(self) -> bytes:
        return _message(b"Z", self.status)


@dataclass(frozen=True)
class FieldDescription:
    name: str
    type_oid: int
    type_size: int
    type_modifier: int
    format: int
    table_oid: int = 0
    column: int = 0


@dataclass(frozen=True)
class RowDescription:
    """The columns of the rows that follow (or that a portal will return)."""
    fields: tuple

    def encode(self) -> bytes:
        parts = [_I16.pack(len(self.fields))]
        for f in self.fields:
            parts.append(_cstr(f.name) + struct.pack("!ihihih", f.table_oid, f.column, f.type_oid, f.type_size,
                                                     f.type_modifier, f.format))
        return _message(b"T", b"".join(parts))


@dataclass(frozen=True)
class DataRow:
    """One row: each value already encoded in its column's format, None for NULL.  Sender:
    exactly as many values as the RowDescription has fields (``data_rows`` for many)."""
    values: tuple

    def encode(self) -> bytes:
        return data_rows([self.values])


def data_rows(rows) -> bytes:
    """Many DataRow messages, each row a sequence of encoded values (bytes, or None)."""
    out = []
    pack_i32 = _I32.pack
    for row in rows:
        parts = [_I16.pack(len(row))]
        for v in row:
            if v is None:
                parts.append(b"\xff\xff\xff\xff")
            else:
                parts.append(pack_i32(len(v)))
                parts.append(v)
        body = b"".join(parts)
        out.append(b"D" + pack_i32(len(body) + 4) + body)
    return b"".join(out)


@dataclass(frozen=True)
class CommandComplete:
    """A statement finished: ``tag`` is its command tag ("SELECT 2", "INSERT 0 1", ...)."""
    tag: str

    def encode(self) -> bytes:
        return _message(b"C", _cstr(self.tag))


@dataclass(frozen=True)
class EmptyQueryResponse:
    """The query string (or portal) was empty."""

    def encode(self) -> bytes:
        return _message(b"I", b"")


def _fields(severity: str, code: str, message: str, detail, hint, position) -> bytes:
    parts = [b"S" + _cstr(severity), b"V" + _cstr(severity), b"C" + _cstr(code), b"M" + _cstr(message)]
    if detail:
        parts.append(b"D" + _cstr(detail))
    if hint:
        parts.append(b"H" + _cstr(hint))
    if position:
        parts.append(b"P" + _cstr(str(position)))
    return b"".join(parts) + b"\0"


@dataclass(frozen=True)
class ErrorResponse:
    """An error: ``severity`` ERROR (the statement failed; the session goes on) or FATAL
    (the session ends); SQLSTATE ``code``, ``message``, and ``detail``, ``hint`` and
    ``position`` (1-based, into the query string) where known."""
    code: str
    message: str
    severity: str = "ERROR"
    detail: Optional[str] = None
    hint: Optional[str] = None
    position: Optional[int] = None

    def encode(self) -> bytes:
        return _message(b"E", _fields(self.severity, self.code, self.message, self.detail, self.hint, self.position))


@dataclass(frozen=True)
class NoticeResponse:
    """A notice (``severity`` NOTICE, WARNING, ...): information, never a failure."""
    code: str
    message: str
    severity: str = "NOTICE"
    detail: Optional[str] = None
    hint: Optional[str] = None

    def encode(self) -> bytes:
        return _message(b"N", _fields(self.severity, self.code, self.message, self.detail, self.hint, None))


@dataclass(frozen=True)
class ParseComplete:
    def encode(self) -> bytes:
        return _message(b"1", b"")


@dataclass(frozen=True)
class BindComplete:
    def encode(self) -> bytes:
        return _message(b"2", b"")


@dataclass(frozen=True)
class CloseComplete:
    def encode(self) -> bytes:
        return _message(b"3", b"")


@dataclass(frozen=True)
class NoData:
    """Describe of something that returns no rows."""

    def encode(self) -> bytes:
        return _message(b"n", b"")


@dataclass(frozen=True)
class PortalSuspended:
    """Execute stopped at its row limit; the portal may be executed again for more."""

    def encode(self) -> bytes:
        return _message(b"s", b"")


@dataclass(frozen=True)
class ParameterDescription:
    """The parameter type OIDs of a prepared statement (Describe statement)."""
    type_oids: tuple

    def encode(self) -> bytes:
        return _message(b"t", _I16.pack(len(self.type_oids)) + b"".join(_I32.pack(o) for o in self.type_oids))


@dataclass(frozen=True)
class CopyResponse:
    """CopyInResponse (``tag`` b"G": the client sends CopyData then CopyDone or CopyFail) or
    CopyOutResponse (b"H": CopyData then CopyDone follow).  ``format`` 0 text, 1 binary;
    ``column_formats`` one per column."""
    tag: bytes
    format: int
    column_formats: tuple = field(default=())

    def encode(self) -> bytes:
        body = bytes([self.format]) + _I16.pack(len(self.column_formats)) + \
            b"".join(_I16.pack(f) for f in self.column_formats)
        return _message(self.tag, body)
