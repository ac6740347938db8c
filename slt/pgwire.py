"""A PostgreSQL engine adapter over the simple-query wire protocol (stdlib only).

Owns: ``PostgresEngine``, which lets the runner use a real PostgreSQL server as the oracle
for suites that avoid Materialize-only syntax: ``python -m slt --engine postgres PATH``
with ``MZLITE_SLT_PG=host:port[:user[:database]]`` (default 127.0.0.1:5432:postgres).
Each file gets a fresh ``public`` schema (dropped and recreated on reset).

It answers skipif/onlyif to ``postgresql`` and ``pgoracle``.  Our suites (slt/test/) mark
Materialize-only syntax with ``skipif pgoracle`` (Materialize and mzlite run it; the
oracle skips it) and oracle-only helpers such as REFRESH MATERIALIZED VIEW with
``onlyif pgoracle`` (Materialize and mzlite skip them).

Invariant: values come back as mzlite returns them (bool, int, Decimal for numeric, float,
str), chosen by the column's type OID, so rendering is the same code path as for mzlite.

Deliberately not here: authentication other than trust, TLS, the extended protocol,
parameters.  This is a test oracle, not a driver.
"""
from __future__ import annotations

import os
import socket
import struct
from decimal import Decimal

from .engines import Engine, EngineError, Result

__all__ = ["PostgresEngine"]

_BOOL, _INTS, _FLOATS, _NUMERIC = 16, {20, 21, 23, 26}, {700, 701}, 1700
_FLOAT_SPECIAL = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _convert(oid, raw: bytes):
    s = raw.decode("utf-8")
    if oid in _INTS:
        return int(s)
    if oid == _BOOL:
        return s == "t"
    if oid in _FLOATS:
        return _FLOAT_SPECIAL.get(s) if s in _FLOAT_SPECIAL else float(s)
    if oid == _NUMERIC:
        return Decimal(s)
    return s


def _rowcount(tag: str) -> int:
    parts = tag.split()
    if parts and parts[0] in ("INSERT", "UPDATE", "DELETE", "SELECT", "MOVE", "FETCH",
                              "COPY", "MERGE") and parts[-1].isdigit():
        return int(parts[-1])
    return -1


class PostgresEngine(Engine):
    names = frozenset({"postgresql", "pgoracle"})

    def __init__(self, system_parameters=None):
        spec = os.environ.get("MZLITE_SLT_PG", "127.0.0.1:5432").split(":")
        self.host = spec[0] or "127.0.0.1"
        self.port = int(spec[1]) if len(spec) > 1 else 5432
        self.user = spec[2] if len(spec) > 2 else "postgres"
        self.database = spec[3] if len(spec) > 3 else self.user
        self.sock = None
        self._buf = b""
        self._connect()
        self.reset()

    # -- protocol ---------------------------------------------------------------------
    def _connect(self):
        self.sock = socket.create_connection((self.host, self.port))
        body = struct.pack("!i", 196608)
        for k, v in (("user", self.user), ("database", self.database),
                     ("client_encoding", "UTF8")):
            body += k.encode() + b"\0" + v.encode() + b"\0"
        body += b"\0"
        self.sock.sendall(struct.pack("!i", len(body) + 4) + body)
        while True:
            kind, payload = self._read()
            if kind == b"R" and struct.unpack("!i", payload[:4])[0] != 0:
                raise EngineError("PostgresEngine supports only trust authentication",
                                  "28000", internal=True)
            if kind == b"E":
                raise EngineError(self._error_fields(payload).get("M", "?"), "08000",
                                  internal=True)
            if kind == b"Z":
                return

    def _recv_exact(self, n):
        while len(self._buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EngineError("connection to PostgreSQL closed", "08006", internal=True)
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _read(self):
        head = self._recv_exact(5)
        kind, length = head[:1], struct.unpack("!i", head[1:])[0]
        return kind, self._recv_exact(length - 4)

    @staticmethod
    def _error_fields(payload):
        fields = {}
        for part in payload.split(b"\0"):
            if part:
                fields[chr(part[0])] = part[1:].decode("utf-8", "replace")
        return fields

    def execute(self, sql, conn=None) -> Result:
        data = sql.encode("utf-8") + b"\0"
        self.sock.sendall(b"Q" + struct.pack("!i", len(data) + 4) + data)
        result = Result(None, None, -1, "")
        cols = oids = None
        rows = None
        error = None
        while True:
            kind, p = self._read()
            if kind == b"T":
                (n,) = struct.unpack("!h", p[:2])
                pos, cols, oids = 2, [], []
                for _ in range(n):
                    end = p.index(b"\0", pos)
                    cols.append(p[pos:end].decode())
                    pos = end + 1
                    oids.append(struct.unpack("!i", p[pos + 6:pos + 10])[0])
                    pos += 18
                rows = []
            elif kind == b"D":
                (n,) = struct.unpack("!h", p[:2])
                pos, row = 2, []
                for i in range(n):
                    (ln,) = struct.unpack("!i", p[pos:pos + 4])
                    pos += 4
                    if ln < 0:
                        row.append(None)
                    else:
                        row.append(_convert(oids[i], p[pos:pos + ln]))
                        pos += ln
                rows.append(tuple(row))
            elif kind == b"C":
                tag = p.rstrip(b"\0").decode()
                result = Result(cols, rows, _rowcount(tag), tag)
                cols = rows = None
            elif kind == b"E":
                f = self._error_fields(p)
                error = EngineError(f.get("M", "?"), f.get("C", "XX000"), detail=f.get("D"),
                                    hint=f.get("H"))
            elif kind == b"Z":
                break
        if error is not None:
            raise error
        return result

    def reset(self) -> None:
        self.execute("ROLLBACK; DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public")

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.sendall(b"X" + struct.pack("!i", 4))
                self.sock.close()
            except OSError:
                pass
            self.sock = None
