"""A prepared point read over the wire does only its own work: the result is described once
per statement (not per Execute), the reported run-time parameters are compared as raw
session values (not formatted per statement), and each Sync's answer leaves in one socket
send with no change of the socket's timeout; a client that stops reading is still cut off
after the write timeout.

Sabotages seen red: calling ``_fields_and_encoders`` on every Execute (20 calls after the first
execution instead of none); dropping the raw comparison in ``_report_changes`` (176 formatted values instead of 8);
``SocketIO.flush`` setting the write timeout around each send as before (42 ``settimeout``
calls instead of 0); a flush that retries a timed-out send forever (the stalled client's
connection was still alive after 30 s).
"""
from __future__ import annotations

import socket
import threading

import pytest

psycopg = pytest.importorskip("psycopg")

from server import session as wire_session  # noqa: E402
from tests.support.wire import dsn, message, running_server, startup_packet, read_messages_until_ready  # noqa: E402


class CountingSocket:
    """The session's socket, counting the calls a flush makes."""

    def __init__(self, sock):
        self._sock = sock
        self.settimeouts = 0
        self.sends = 0

    def settimeout(self, t):
        self.settimeouts += 1
        self._sock.settimeout(t)

    def send(self, data):
        self.sends += 1
        return self._sock.send(data)

    def __getattr__(self, name):
        return getattr(self._sock, name)


def _point_reads(srv, monkeypatch, n=20):
    calls, shown = [], []
    real = wire_session.WireSession._fields_and_encoders
    monkeypatch.setattr(wire_session.WireSession, "_fields_and_encoders",
                        lambda self, *a: calls.append(a) or real(self, *a))
    real_shown = wire_session.WireSession._reported_value
    monkeypatch.setattr(wire_session.WireSession, "_reported_value",
                        lambda self, name: shown.append(name) or real_shown(self, name))
    with psycopg.connect(dsn(srv), autocommit=True) as c:
        c.execute("CREATE TABLE kv (k int NOT NULL, v text)")
        c.execute("INSERT INTO kv SELECT g, 'v' || g FROM generate_series(1, 50) g")
        c.execute("CREATE INDEX kv_k ON kv (k)")
        cur = c.cursor()
        cur.execute("SELECT v FROM kv WHERE k = %s", (1,), prepare=True)
        assert cur.fetchall() == [("v1",)]
        ws = srv.session(c.info.backend_pid)
        counting = CountingSocket(ws.io.sock)
        ws.io.sock = counting
        calls.clear()
        shown.clear()
        for k in range(2, 2 + n):
            cur.execute("SELECT v FROM kv WHERE k = %s", (k,), prepare=True)
            assert cur.fetchall() == [(f"v{k}",)]
        c.execute("SET application_name = 'changed'")  # a change is still reported
        assert c.info.parameter_status("application_name") == "changed"
    return calls, shown, counting


def test_a_prepared_point_read_is_described_once_and_sent_once(monkeypatch):
    with running_server() as srv:
        calls, shown, counting = _point_reads(srv, monkeypatch)
    assert calls == []  # described at the first execution, before the count started
    assert set(shown) <= {"application_name"} | set(wire_session.VARIABLE)
    assert len(shown) == len(wire_session.VARIABLE)  # only for the SET: every reported name compared once
    assert counting.sends == 21  # one per Sync (20 reads, the SET)
    assert counting.settimeouts == 0


def test_a_client_that_stops_reading_is_disconnected_after_the_write_timeout():
    with running_server(write_timeout=1.0) as srv:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", srv.port))
        s.settimeout(10)
        s.sendall(startup_packet())
        assert read_messages_until_ready(s)[-1][0] == b"Z"
        port = s.getsockname()[1]
        (conn,) = [t for t in threading.enumerate() if t.name == f"mzlite-conn-{port}"]
        sql = "SELECT repeat('x', 1000) FROM generate_series(1, 20000)"
        s.sendall(message(b"Q", sql.encode() + b"\0"))  # then never read: 20 MB wait in the server
        conn.join(30)
        assert not conn.is_alive()
        s.close()
