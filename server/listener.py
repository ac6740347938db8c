"""The listener: accepts clients, enforces the limits, routes cancel requests, shuts down.

Owns ``Server`` (``mzlite serve``): the listening socket, one thread per client
(``server.session.WireSession`` on its own ``mzlite`` connection to the one database), the
cancel keys (process id -> session, each with a random secret), the connection-count
limit, TLS configuration, and a clean shutdown (stop accepting, cancel what runs, close
every session, then the database).

Invariants: a non-loopback address is refused unless authentication is configured (an
unauthenticated database is reachable only from this machine); every accepted socket is
closed exactly once by its own thread; a CancelRequest with a wrong key does nothing; a
connection beyond ``max_connections`` gets a FATAL 53300 and is closed before it reaches
the engine.  Deliberately not here: the protocol (``server.session``), authentication
exchanges (``server.auth``).
"""
from __future__ import annotations

import ipaddress
import itertools
import logging
import secrets
import socket
import ssl
import threading
from typing import Optional

from server import messages as M
from server.session import READ_POLL_SECONDS, WireSession

log = logging.getLogger("mzlite.server")

DEFAULT_PORT = 6875
DEFAULT_MAX_CONNECTIONS = 100
#: a write to a client that waits longer than this ends that connection (seconds)
DEFAULT_WRITE_TIMEOUT = 30.0
#: unread SUBSCRIBE updates a connection may buffer before its subscription fails (53000)
DEFAULT_SUBSCRIBE_BUFFER = 100_000


def is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Server:
    """Serves one database to many clients over the PostgreSQL protocol."""

    def __init__(self, connection, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *, credentials=None,
                 tls_cert: Optional[str] = None, tls_key: Optional[str] = None, require_tls: bool = False,
                 max_connections: int = DEFAULT_MAX_CONNECTIONS,
                 max_message_bytes: int = M.DEFAULT_MAX_MESSAGE_BYTES,
                 write_timeout: float = DEFAULT_WRITE_TIMEOUT, subscribe_buffer: int = DEFAULT_SUBSCRIBE_BUFFER):
        if not is_loopback(host) and credentials is None:
            raise ValueError(f"refusing to listen on {host} without authentication: pass --password-file (SCRAM-"
                             f"SHA-256), or listen on 127.0.0.1")
        #: the connection that keeps the database open; every client gets its own from it
        self.root = connection
        self.credentials = credentials
        self.tls = None
        if tls_cert or tls_key:
            if not (tls_cert and tls_key):
                raise ValueError("--tls-cert and --tls-key go together")
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(tls_cert, tls_key)
        self.require_tls = require_tls
        self.max_connections = max_connections
        self.max_message_bytes = max_message_bytes
        self.write_timeout = write_timeout
        self.subscribe_buffer = subscribe_buffer
        self.stopping = False
        self._sessions: dict[int, WireSession] = {}
        self._threads: set = set()
        self._lock = threading.Lock()
        self._pids = itertools.count(1)
        self._describe_cache: dict = {}
        self.sock = socket.create_server((host, port), reuse_port=False, backlog=128)
        self.sock.settimeout(0.2)
        self.host, self.port = self.sock.getsockname()[:2]

    # ------------------------------------------------------------------ what sessions ask
    def open_session(self):
        return self.root.connect()

    def cancel(self, process_id: int, secret_key: int) -> None:
        with self._lock:
            s = self._sessions.get(process_id)
        if s is not None and secrets.compare_digest(s.secret_key.to_bytes(4, "big", signed=True),
                                                    secret_key.to_bytes(4, "big", signed=True)):
            log.info("connection %s: cancel request", process_id)
            s.cancel()

    def describe(self, con, sql: str, declared: tuple):
        """``Connection.describe``, cached per catalog version (a point read re-described on
        every execution would be planned twice)."""
        key = (sql, declared, con.database.catalog_version, con.session.vars.get("sql_dialect"))
        hit = self._describe_cache.get(key)
        if hit is None:
            hit = con.describe(sql, declared)
            if len(self._describe_cache) > 1024:
                self._describe_cache.clear()
            if hit[1] is not None and not sql.lstrip()[:4].lower() in ("show", "expl"):
                self._describe_cache[key] = hit
        return hit

    # ------------------------------------------------------------------ accept loop
    def serve_forever(self) -> None:
        log.info("listening on %s:%s", self.host, self.port)
        while not self.stopping:
            try:
                client, addr = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                if self.stopping:
                    break
                raise
            client.settimeout(READ_POLL_SECONDS)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            t = threading.Thread(target=self._serve_client, args=(client, addr), daemon=True,
                                 name=f"mzlite-conn-{addr[1]}")
            with self._lock:
                self._threads.add(t)
            t.start()

    def _serve_client(self, client, addr) -> None:
        pid = next(self._pids)
        session = WireSession(self, client, f"{addr[0]}:{addr[1]}", pid, secrets.randbits(31))
        with self._lock:
            full = len(self._sessions) >= self.max_connections
            if not full:
                self._sessions[pid] = session
        try:
            if full:
                log.info("connection refused from %s: too many clients", session.peer)
                try:
                    M.read_startup(session.io)  # answer after the client spoke, as PostgreSQL does
                    client.sendall(M.ErrorResponse("53300", "sorry, too many clients already", "FATAL").encode())
                except (M.ConnectionClosed, M.ProtocolViolation, OSError):
                    pass
                finally:
                    client.close()
                return
            session.run()
            if session.user is not None:
                log.info("connection %s: closed", pid)
        finally:
            with self._lock:
                self._sessions.pop(pid, None)
                self._threads.discard(threading.current_thread())

    def session(self, process_id: int):
        """The live ``WireSession`` with this backend process id, or None."""
        with self._lock:
            return self._sessions.get(process_id)

    def connection_count(self) -> int:
        with self._lock:
            return len(self._sessions)

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop accepting, cancel running statements, end every session, close the database."""
        if self.stopping:
            return
        self.stopping = True
        log.info("shutting down")
        try:
            self.sock.close()
        except OSError:
            pass
        with self._lock:
            sessions = list(self._sessions.values())
            threads = list(self._threads)
        for s in sessions:
            s.cancel()
        for t in threads:
            t.join(timeout)
        self.root.close()
