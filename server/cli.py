"""The ``mzlite serve`` command line: options in the style of ``postgres``/``materialized``.

Owns parsing ``mzlite serve [DIR] [--host H] [--port P] [--http-port P] ...``, opening the
database, starting the webhook listener (``server.webhook``) when ``--http-port`` is given,
installing the SIGINT/SIGTERM handlers that shut the server down cleanly, and logging (one
line per connection event at the default level).  Deliberately not here: serving
(``server.listener``).
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Optional, Sequence

from server.listener import (DEFAULT_MAX_CONNECTIONS, DEFAULT_PORT, DEFAULT_SUBSCRIBE_BUFFER,
                             DEFAULT_WRITE_TIMEOUT, Server)
from server.messages import DEFAULT_MAX_MESSAGE_BYTES


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mzlite serve",
        description="Serve an mzlite database over the PostgreSQL wire protocol (psql, psycopg, asyncpg, ...).",
        epilog="Example: mzlite serve, then psql -h 127.0.0.1 -p 6875 -U materialize materialize")
    p.add_argument("path", nargs="?", metavar="DIR", help="data directory (default: an in-memory database)")
    p.add_argument("--host", "--listen-addr", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; any other requires --password-file)")
    p.add_argument("-p", "--port", type=int, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    p.add_argument("--password-file", metavar="FILE",
                   help="require SCRAM-SHA-256 authentication for the users in FILE (user:password lines)")
    p.add_argument("--tls-cert", metavar="FILE", help="TLS certificate (PEM); with --tls-key, enables TLS")
    p.add_argument("--tls-key", metavar="FILE", help="TLS private key (PEM)")
    p.add_argument("--require-tls", action="store_true", help="refuse clients that do not use TLS")
    p.add_argument("-N", "--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                   help=f"most concurrent clients (default {DEFAULT_MAX_CONNECTIONS})")
    p.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_BYTES, metavar="BYTES",
                   help=f"largest protocol message accepted (default {DEFAULT_MAX_MESSAGE_BYTES})")
    p.add_argument("--write-timeout", type=float, default=DEFAULT_WRITE_TIMEOUT, metavar="SECONDS",
                   help="disconnect a client that reads nothing for this long while the server writes "
                        f"(default {DEFAULT_WRITE_TIMEOUT:g})")
    p.add_argument("--subscribe-buffer", type=int, default=DEFAULT_SUBSCRIBE_BUFFER, metavar="ROWS",
                   help=f"unread SUBSCRIBE updates per connection before it fails (default {DEFAULT_SUBSCRIBE_BUFFER})")
    p.add_argument("--system-parameter", action="append", default=[], metavar="NAME=VALUE",
                   help="set a system parameter, e.g. enable_compute_interactive_runtime=false")
    p.add_argument("--http-port", type=int, default=None, metavar="PORT",
                   help="serve webhook sources over HTTP on this port (POST /api/webhook/materialize/public/"
                        "<source>; Materialize uses 6876; default: no HTTP listener)")
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(message)s",
                        stream=sys.stderr)
    log = logging.getLogger("mzlite.server")
    params = {}
    for item in args.system_parameter:
        name, sep, value = item.partition("=")
        if not sep:
            sys.stderr.write(f"mzlite serve: error: --system-parameter expects NAME=VALUE, got {item!r}\n")
            return 2
        params[name] = value
    import mzlite
    credentials = None
    try:
        if args.password_file:
            from server.auth import Credentials
            credentials = Credentials.from_file(args.password_file)
        con = mzlite.connect(args.path if args.path else ":memory:", system_parameters=params)
    except (mzlite.Error, OSError, ValueError) as e:
        sys.stderr.write(f"mzlite serve: error: {getattr(e, 'message', None) or e}\n")
        return 1
    try:
        server = Server(con, args.host, args.port, credentials=credentials, tls_cert=args.tls_cert,
                        tls_key=args.tls_key, require_tls=args.require_tls, max_connections=args.max_connections,
                        max_message_bytes=args.max_message_size, write_timeout=args.write_timeout,
                        subscribe_buffer=args.subscribe_buffer)
    except (OSError, ValueError) as e:
        con.close()
        sys.stderr.write(f"mzlite serve: error: {e}\n")
        return 1

    hook = None
    if args.http_port is not None:
        from server.webhook import WebhookServer
        try:
            hook = WebhookServer(con, args.host, args.http_port)
        except OSError as e:
            server.shutdown()
            sys.stderr.write(f"mzlite serve: error: --http-port: {e}\n")
            return 1

    def shut_down():
        if hook is not None:
            hook.shutdown()
        server.shutdown()

    def stop(signum, frame):
        log.info("received %s", signal.Signals(signum).name)
        threading.Thread(target=shut_down, daemon=True).start()

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    if hook is not None:
        hook.start()
        print(f"mzlite serve: webhooks on http://{hook.host}:{hook.port}/api/webhook/", flush=True)
    print(f"mzlite serve: listening on {server.host}:{server.port}", flush=True)
    server.serve_forever()
    shut_down()
    return 0
