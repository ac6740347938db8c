"""Test-only helpers for the wire-protocol server: an in-process ``mzlite serve``.

Owns ``running_server``, which serves a fresh in-memory database (``server.listener.Server``
on an ephemeral 127.0.0.1 port, its accept loop on a thread) and shuts it down afterwards,
``dsn`` for psycopg, and ``raw_connect``, a socket that has completed the startup phase,
for tests that speak the protocol byte by byte.
"""
from __future__ import annotations

import contextlib
import socket
import struct
import threading

import mzlite
from server.listener import Server


@contextlib.contextmanager
def running_server(system_parameters=None, **kwargs):
    con = mzlite.connect(system_parameters=system_parameters or {})
    srv = Server(con, "127.0.0.1", 0, **kwargs)
    t = threading.Thread(target=srv.serve_forever, name="test-server", daemon=True)
    t.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        t.join(10)


def dsn(srv, user: str = "materialize", **extra) -> str:
    parts = [f"host=127.0.0.1 port={srv.port} user={user} dbname=materialize"]
    parts += [f"{k}={v}" for k, v in extra.items()]
    return " ".join(parts)


def startup_packet(user: str = "materialize", **params) -> bytes:
    body = struct.pack("!i", 196608)
    for k, v in dict(user=user, database="materialize", **params).items():
        body += k.encode() + b"\0" + v.encode() + b"\0"
    body += b"\0"
    return struct.pack("!i", len(body) + 4) + body


def read_messages_until_ready(sock) -> list:
    """``[(tag, payload)]`` up to and including ReadyForQuery (or until the socket closes)."""
    out = []
    buf = b""
    while True:
        while len(buf) < 5:
            chunk = sock.recv(65536)
            if not chunk:
                return out
            buf += chunk
        tag, n = buf[:1], struct.unpack("!i", buf[1:5])[0]
        while len(buf) < 1 + n:
            chunk = sock.recv(65536)
            if not chunk:
                return out
            buf += chunk
        out.append((tag, buf[5:1 + n]))
        buf = buf[1 + n:]
        if tag == b"Z":
            return out


def raw_connect(srv, timeout: float = 10.0):
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)
    s.sendall(startup_packet())
    msgs = read_messages_until_ready(s)
    assert msgs and msgs[-1][0] == b"Z", msgs
    return s


def message(tag: bytes, payload: bytes = b"") -> bytes:
    return tag + struct.pack("!i", len(payload) + 4) + payload


def query(sql: str) -> bytes:
    return message(b"Q", sql.encode() + b"\0")
