"""The ``mzlite`` command: argument parsing, dispatch, and running scripts in batch.

Owns: the command line (``mzlite [PATH | URL] [-h HOST] [-p PORT] [-U USER] [-d DBNAME]
[-c SQL]... [-f FILE]... [--format F] [-x] [--system-parameter NAME=VALUE]...``; a URL or
psql's -h/-p/-U/-d connect to a server through ``mzlite.connect``'s remote connection), ``mzlite slt ...``, ``mzlite serve ...``, ``mzlite dump ...``), the choice between batch mode
(``-c``/``-f``/piped stdin) and the interactive shell, exit statuses, and ``Runner``: runs
one statement or a script through the public API (``mzlite.connect`` and the DB-API cursor)
and writes psql-formatted results to stdout and psql-formatted errors to stderr.

Exit statuses, as psql's: 0 success, also when a statement of a ``-f`` file or stdin failed
and the script went on (psql goes on after an error unless ``ON_ERROR_STOP`` is set, with
``-v ON_ERROR_STOP=1`` or ``\\set``); 1 when a ``-c`` statement fails (the rest of its string
is skipped), when a file cannot be read, or when the database cannot be opened; 2 for bad
usage (argparse's convention); 3 when ``ON_ERROR_STOP`` stopped a script; 130 after Ctrl-C
in batch mode.

Invariant: the engine is reached only through ``mzlite``'s public API, imported lazily so
that ``mzlite --help`` and the shell's first prompt do not pay for it.

``\\set`` variables are substituted into each statement (``interpolate``: ``:name``,
``:'name'``, ``:"name"``) before it runs.  ``SUBSCRIBE`` is not fetched but streamed
(``stream``): its rows print as they arrive.

Deliberately not here: output formats (``format``), the completeness rule (``complete``),
backslash commands (``meta``), the interactive loop (``shell``), paging (``pager``: only
the shell installs ``Runner.pager``, so batch mode never pages).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable, Optional, Sequence, TextIO

from repl import format as fmt
from repl import stream
from repl.complete import split_script
from repl.interpolate import interpolate

PROG = "mzlite"


class Result:
    """A fully fetched result: column names and display types (empty when the statement
    returns no rows), rows, and the command tag."""

    __slots__ = ("names", "types", "rows", "status")

    def __init__(self, names, types, rows, status):
        self.names, self.types, self.rows, self.status = names, types, rows, status

    @property
    def has_rows(self) -> bool:
        return self.names is not None


def fetch(conn, sql: str) -> Result:
    """Execute one statement through the DB-API and fetch everything it returns."""
    make_cursor = getattr(conn, "cursor", None)
    if make_cursor is not None:
        cur = make_cursor()
        cur.intervals_as_timedelta = False  # print intervals as PostgreSQL does, months kept
        cur.execute(sql)
    else:
        cur = conn.execute(sql)
    desc = cur.description
    status = getattr(cur, "statusmessage", None)
    if desc is None:
        return Result(None, None, None, status)
    rows = cur.fetchall()
    return Result([d[0] for d in desc], [d[1] for d in desc], rows, status)


class Runner:
    """Runs statements and scripts against a connection, printing as psql prints.

    ``executor(sql) -> Result`` is ``fetch`` bound to the connection unless a caller (the
    shell, which runs statements on a cancellable worker thread) passes its own."""

    def __init__(self, conn, settings: Optional[fmt.Settings] = None, out: TextIO = None,
                 err: TextIO = None, executor: Optional[Callable[[str], Result]] = None,
                 terminal_width: Optional[Callable[[], Optional[int]]] = None,
                 connection: Optional[Callable[[], Any]] = None):
        self.conn = conn
        #: the connection a SUBSCRIBE streams on (the shell's opens in the background)
        self.connection = connection or (lambda: self.conn)
        self.settings = settings or fmt.Settings()
        self.out = out or sys.stdout
        self.stdout = self.out  # where \\o without a file sends results back to
        self.err = err or sys.stderr
        self.executor = executor or (lambda sql: fetch(self.conn, sql))
        self.terminal_width = terminal_width or (lambda: None)
        self.timing = False
        self.variables: dict[str, str] = {}
        self.quit_requested = False
        self.last_query: Optional[str] = None
        self.after_statement: Optional[Callable[[str, Result], None]] = None
        #: the shell's pager: takes a rendered result, True when it showed it (batch: None)
        self.pager: Optional[Callable[[str], bool]] = None
        #: a file could not be read (psql's exit status 1, whatever ON_ERROR_STOP says)
        self.file_failed = False

    # -- output -------------------------------------------------------------------------

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def error(self, text: str) -> None:
        self.err.write(text)
        self.err.flush()

    def render(self, result: Result) -> str:
        json_out = self.settings.format == "json"  # stdout stays a stream of JSON documents
        if not result.has_rows:
            return (result.status + "\n") if result.status and not json_out else ""
        text = fmt.format_result(result.names, result.types, result.rows, self.settings,
                                 self.terminal_width())
        status = result.status or ""
        if status.split(" ", 1)[0] in ("INSERT", "UPDATE", "DELETE", "MERGE") and not json_out:
            text += status + "\n"  # psql prints the tag after RETURNING rows
        return text

    def report(self, exc: BaseException, query: Optional[str], position_base: int = 0,
               prefix: str = "") -> None:
        """Print an error as psql does.  ``query``/``position_base`` say which text the
        caret line refers to (the statement, or the whole ``-c`` string)."""
        message = getattr(exc, "message", None) or str(exc)
        if not _is_db_error(exc):
            message = f"internal error: {type(exc).__name__}: {exc}"
        pos = getattr(exc, "position", None)
        self.error(fmt.format_error(
            message, query=query, position=(pos + position_base) if pos else None,
            detail=getattr(exc, "detail", None), hint=getattr(exc, "hint", None), prefix=prefix))

    # -- running ------------------------------------------------------------------------

    def run_statement(self, sql: str, *, error_query: Optional[str] = None, position_base: int = 0,
                      prefix: str = "") -> bool:
        """Run one SQL statement; print its result or its error.  True on success."""
        if self.variables:
            typed, sql = sql, interpolate(sql, self.variables)
            if sql != typed:  # caret positions refer to the text that ran
                error_query, position_base = None, 0
        self.last_query = sql
        start = time.perf_counter()
        try:
            if stream.is_subscribe(sql):
                stream.stream_statement(self.connection(), sql, self.settings, self.write)
                result = Result(None, None, None, None)  # the rows and footer are written already
            else:
                result = self.executor(sql)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is reported, never fatal
            self.report(exc, error_query if error_query is not None else sql, position_base, prefix)
            return False
        elapsed = time.perf_counter() - start
        text = self.render(result)
        if self.pager is None or not self.pager(text):
            self.write(text)
        if self.timing:
            self.write(format_timing(elapsed))
        if self.after_statement is not None:
            self.after_statement(sql, result)
        return True

    def run_meta(self, line: str) -> bool:
        from repl import meta
        return meta.run(self, line)

    def run_piece(self, piece, **kw) -> bool:
        """Run one piece of a script or buffer (``complete.Piece``): a backslash command, a
        statement, or a statement ended by ``\\g`` / ``\\gx`` / ``\\watch`` (its ``via``)."""
        if piece.meta:
            return self.run_meta(piece.text)
        if not piece.via:
            return self.run_statement(piece.text, **kw)
        from repl import meta
        return meta.run_via(self, piece.text, piece.via, **kw)

    def run_script(self, text: str, *, source: Optional[str] = None, whole_text_positions: bool = False,
                   stop_on_error: bool = True) -> bool:
        """Run every statement (and backslash command) of ``text``.  ``source`` names the
        file for psql's ``mzlite:FILE:LINE:`` error prefix; with ``whole_text_positions``
        (``-c``), caret lines refer to the whole text, as psql's do."""
        ok = True
        for piece in split_script(text):
            if self.quit_requested:
                break
            prefix = ""
            if source is not None:
                line = text.count("\n", 0, piece.offset + len(piece.text)) + 1
                prefix = f"{PROG}:{source}:{line}: "
            if piece.meta:
                good = self.run_meta(piece.text)
            elif whole_text_positions:
                good = self.run_piece(piece, error_query=text, position_base=piece.offset, prefix=prefix)
            else:
                good = self.run_piece(piece, prefix=prefix)
            if not good:
                ok = False
                if stop_on_error:
                    break
        return ok

    def run_file(self, path: str, *, stop_on_error: bool = True) -> bool:
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            self.error(f"{PROG}: error: {path}: {exc.strerror or exc}\n")
            self.file_failed = True
            return False
        return self.run_script(text, source=path, stop_on_error=stop_on_error)


def _is_db_error(exc: BaseException) -> bool:
    return hasattr(exc, "sqlstate")


def format_timing(seconds: float) -> str:
    """psql's ``\\timing`` line."""
    ms = seconds * 1000.0
    if ms < 1000.0:
        return f"Time: {ms:.3f} ms\n"
    total = seconds
    mins, secs = divmod(total, 60)
    hours, mins = divmod(int(mins), 60)
    days, hours = divmod(hours, 24)
    if days:
        tail = f"{days} d {hours:02d}:{mins:02d}:{secs:06.3f}"
    elif hours:
        tail = f"{hours:02d}:{mins:02d}:{secs:06.3f}"
    else:
        tail = f"{mins:02d}:{secs:06.3f}"
    return f"Time: {ms:.3f} ms ({tail})\n"


# ---------------------------------------------------------------- command line

class _Action(argparse.Action):
    """Keeps ``-c`` and ``-f`` in the order given, as psql runs them."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = getattr(namespace, "actions", None) or []
        items.append((self.dest, values))
        namespace.actions = items


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, add_help=False,  # -h is psql's --host; --help stays
        description="mzlite: an embedded incremental database with Materialize's SQL. "
                    "Without -c/-f, opens an interactive shell (or runs statements piped on stdin). "
                    "PATH may also be a postgresql:// URL, or -h/-p/-U/-d name a server (mzlite serve, "
                    "Materialize), as psql spells them.",
        epilog="'mzlite slt ...' runs the sqllogictest runner; 'mzlite serve ...' serves a database over "
               "the PostgreSQL protocol; 'mzlite dump DIR_OR_URL [--data]' writes a database as a SQL script. "
               "In batch mode a failing statement of "
               "-c stops the run (exit status 1); -f files and stdin go on after an error, as psql does, "
               "unless ON_ERROR_STOP is set (-v ON_ERROR_STOP=1: stop, exit status 3).")
    p.add_argument("--help", action="help", help="show this help message and exit")
    p.add_argument("path", nargs="?", default=None,
                   help="data directory to open (default: an in-memory database), or a postgresql:// URL; "
                        "with -h/-p/-U, the database name")
    p.add_argument("-h", "--host", help="connect to the server on HOST (psql's -h)")
    p.add_argument("-p", "--port", help="the server's port (psql's -p; default 6875)")
    p.add_argument("-U", "--username", metavar="USER", help="the user to connect as (psql's -U)")
    p.add_argument("-d", "--dbname", metavar="DBNAME", help="the database to connect to (psql's -d; a URL too)")
    p.add_argument("-c", "--command", dest="command", action=_Action, metavar="SQL",
                   help="run SQL (one or more ';'-separated statements) and exit; repeatable")
    p.add_argument("-f", "--file", dest="file", action=_Action, metavar="FILE",
                   help="run the statements in FILE ('-' for stdin) and exit; repeatable")
    p.add_argument("--format", choices=fmt.FORMATS, default="aligned", help="output format")
    p.add_argument("--csv", dest="format", action="store_const", const="csv",
                   help="same as --format csv")
    p.add_argument("-x", "--expanded", action="store_true", help="expanded table output")
    p.add_argument("-t", "--tuples-only", action="store_true",
                   help="print rows only (no header, no footer)")
    p.add_argument("--system-parameter", action="append", default=[], metavar="NAME=VALUE",
                   help="set a system parameter at start-up; repeatable")
    p.add_argument("-v", "--set", "--variable", dest="variables", action="append", default=[],
                   metavar="NAME=VALUE", help="set a variable, as \\set does (e.g. ON_ERROR_STOP=1); repeatable")
    p.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    p.add_argument("--no-history", action="store_true", help="(shell) do not read or write history")
    p.set_defaults(actions=[])
    return p


def _version() -> str:
    import mzlite  # cheap: the engine loads on first connect
    return mzlite.__version__


def parse_system_parameters(items: Sequence[str], parser: argparse.ArgumentParser) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            parser.error(f"--system-parameter expects NAME=VALUE, got {item!r}")
        params[name.strip()] = value
    return params


def target(args) -> Optional[str]:
    """What ``connect`` opens: the data directory or URL given, or, with psql's -h/-p/-U/-d, a
    libpq keyword string naming the server (a positional name is then the database)."""
    dbname = args.dbname or None
    if dbname and "://" in dbname:
        return dbname
    if not (args.host or args.port or args.username or dbname):
        return args.path
    if args.path and "://" in args.path:
        return args.path
    parts = [f"host={args.host or '127.0.0.1'}", f"port={args.port or 6875}"]
    parts.append(f"user={args.username or os.environ.get('PGUSER') or 'materialize'}")
    parts.append(f"dbname={dbname or args.path or 'materialize'}")
    return " ".join(parts)


def connect(path: Optional[str], params: dict[str, str]):
    import mzlite  # lazily: keeps --help and shell start-up fast
    kwargs: dict[str, Any] = {}
    if params:
        kwargs["system_parameters"] = params
    return mzlite.connect(path, **kwargs)


#: subcommands users type that mzlite does not have (``mzlite restore`` would otherwise create a
#: data directory named ``restore``; a dump replays with ``mzlite -f``)
_SUBCOMMANDS_NOT_HERE = ("restore",)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "slt":
        import slt  # lazily: the runner is only needed here
        return int(slt.main(argv[1:]) or 0)
    if argv and argv[0] == "dump":
        from repl import dump  # lazily: only this command needs it
        return int(dump.main(argv[1:]) or 0)
    if argv and argv[0] == "serve":
        from server import cli  # lazily: the server is only needed here
        return int(cli.main(argv[1:]) or 0)
    if argv and argv[0] in _SUBCOMMANDS_NOT_HERE and not os.path.exists(argv[0]):
        # not a data directory to create: the subcommand the user meant is not there yet
        sys.stderr.write(f"{PROG}: error: '{PROG} {argv[0]}' is not supported yet "
                         f"(to open a data directory named {argv[0]!r}, write ./{argv[0]})\n")
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    params = parse_system_parameters(args.system_parameter, parser)
    settings = fmt.Settings(format=args.format, expanded="on" if args.expanded else "off",
                            tuples_only=args.tuples_only)
    interactive = not args.actions and sys.stdin.isatty()
    where = target(args)
    if interactive:
        from repl import shell  # lazily: prompt_toolkit is only needed here
        return shell.run(lambda: connect(where, params), settings, history=not args.no_history)
    try:
        conn = connect(where, params)
    except Exception as exc:  # noqa: BLE001
        # psql's form for a connection that cannot be made: "psql: error: ..."
        sys.stderr.write(f"{PROG}: error: {getattr(exc, 'message', None) or exc}\n")
        return 1
    try:
        runner = Runner(conn, settings)
        for item in args.variables:
            name, sep, value = item.partition("=")
            if not name.strip():
                parser.error(f"-v expects NAME=VALUE, got {item!r}")
            runner.variables[name.strip()] = value
        try:
            return run_batch(runner, args.actions)
        except KeyboardInterrupt:
            cancel = getattr(conn, "cancel", None)
            if callable(cancel):
                cancel()
            sys.stderr.write("Cancel request sent\n")
            return 130
    finally:
        close = getattr(conn, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # noqa: BLE001 - closing must not change the exit status
                pass


def on_error_stop(runner: Runner) -> bool:
    """psql's ``ON_ERROR_STOP`` variable: set (to anything but off/false/0) stops a script
    at its first error."""
    v = runner.variables.get("ON_ERROR_STOP")
    return v is not None and v.strip().lower() not in ("off", "false", "0", "no", "f", "n")


def run_batch(runner: Runner, actions: list[tuple[str, str]]) -> int:
    """Run ``-c``/``-f`` actions in order (or stdin when there are none).  As psql: a ``-c``
    string stops at its first error (status 1); a file or stdin goes on after an error
    (status 0) unless ``ON_ERROR_STOP`` is set (then it stops: status 3)."""
    if not actions:
        actions = [("file", "-")]
    for kind, value in actions:
        if kind == "command":
            ok = runner.run_script(value, whole_text_positions=True)
            if not ok:
                return 1
        else:
            stop = on_error_stop(runner)
            if value == "-":
                ok = runner.run_script(sys.stdin.read(), source="<stdin>", stop_on_error=stop)
            else:
                ok = runner.run_file(value, stop_on_error=stop)
            if not ok and (stop or runner.file_failed):
                return 3 if stop and not runner.file_failed else 1
        if runner.quit_requested:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
