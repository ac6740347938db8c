"""The HTTP listener of ``mzlite serve --http-port``: webhook requests into webhook sources.

Owns ``WebhookServer``: a standard-library ``ThreadingHTTPServer`` (one thread per request)
serving Materialize's URL shape ``POST /api/webhook/<database>/<schema>/<source>``, each
request handed to ``mzlite.webhooks.receive`` on the handler thread's own ``mzlite``
connection.  Responses, as Materialize's: 200 with an empty body when the row was appended;
400 with the reason as text when the request was rejected (CHECK not true or failed, a body
that does not decode); 404 for a path that names no webhook source; 405 for any method but
POST; 411 for a chunked body (only ``Content-Length`` bodies are read); 413 for a body over
``max_body_bytes``.  Invariants: a request gets exactly one
response and an engine error never escapes as a stack trace (it is a 400 or, for a bug,
500); shutting down stops accepting and closes the connections it opened.  Deliberately not
here: what a request becomes (``mzlite.webhooks``), the PostgreSQL protocol
(``server.listener``).
"""
from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

import mzlite
from mzlite import webhooks

log = logging.getLogger("mzlite.server")

#: Materialize's HTTP port
DEFAULT_HTTP_PORT = 6876
#: the largest request body accepted (Materialize's default limit is 2 MiB)
DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    server: "_HTTPServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args) -> None:  # one line per request at debug level
        log.debug("webhook %s - %s", self.address_string(), format % args)

    def _reply(self, status: int, text: str = "", allow: bool = False) -> None:
        data = text.encode()
        self.send_response(status)
        if allow:
            self.send_header("Allow", "POST")
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _refuse_method(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= self.server.max_body_bytes:
            self.rfile.read(length)
        self._reply(405, "method not allowed: webhooks take POST\n", allow=True)

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _refuse_method

    def do_POST(self) -> None:
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            self._reply(411, "chunked request bodies are not supported: send Content-Length\n")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self._reply(400, "invalid Content-Length\n")
            return
        if length > self.server.max_body_bytes or length < 0:
            self.close_connection = True
            self._reply(413, f"request body over {self.server.max_body_bytes} bytes\n")
            return
        body = self.rfile.read(length) if length else b""
        if len(parts) != 5 or parts[:2] != ["api", "webhook"]:
            self._reply(404, "not found: webhooks are POSTed to /api/webhook/<database>/<schema>/<source>\n")
            return
        database, schema, name = (unquote(p) for p in parts[2:])
        try:
            webhooks.receive(self.server.connection(), database, schema, name, self.headers.items(), body)
        except webhooks.NotFound as e:
            self._reply(404, e.message + "\n")
        except mzlite.Error as e:
            self._reply(400, e.message + "\n")
        except Exception:  # a bug: said, not a stack trace to the sender
            log.exception("webhook request to %s failed", self.path)
            self._reply(500, "internal error\n")
        else:
            self._reply(200)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, root, max_body_bytes: int):
        super().__init__(address, _Handler)
        self.root = root
        self.max_body_bytes = max_body_bytes
        self._local = threading.local()
        self._opened: list = []
        self._lock = threading.Lock()

    def connection(self):
        """The handler thread's own connection to the database (opened on first use)."""
        con = getattr(self._local, "con", None)
        if con is None or con.closed:
            con = self.root.connect()
            self._local.con = con
            with self._lock:
                self._opened.append(con)
        return con

    def close_connections(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for con in opened:
            try:
                con.close()
            except mzlite.Error:
                pass


class WebhookServer:
    """Serves webhook sources over HTTP on ``host:port`` (port 0: any free port)."""

    def __init__(self, connection, host: str, port: int = DEFAULT_HTTP_PORT,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES):
        self.httpd = _HTTPServer((host, port), connection, max_body_bytes)
        self.host, self.port = self.httpd.server_address[:2]
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        daemon=True, name="mzlite-webhook")

    def start(self) -> None:
        log.info("webhooks on http://%s:%s/api/webhook/", self.host, self.port)
        self._thread.start()

    def shutdown(self) -> None:
        if self._thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()
        self.httpd.close_connections()
