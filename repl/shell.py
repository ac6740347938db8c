"""The interactive shell: a prompt-toolkit loop around ``main.Runner``.

Owns: the prompt (``mzlite=>``, psql's continuation prompts ``mzlite->``, ``mzlite'>``, ...),
the session (history in ``~/.mzlite_history`` or ``$MZLITE_HISTORY``, auto-suggest from
history, Ctrl-R, PostgreSQL syntax highlighting, the completer), connecting in the
background so the first prompt appears at once, paging results taller than the screen
(``pager``; batch mode never pages), running each submitted statement on a worker
thread so Ctrl-C can cancel it (``connection.cancel()`` when the connection has one, else the
result is abandoned), and refreshing completion names after DDL.

Invariant: an error, a cancelled statement or a failing meta command returns to the prompt
with the session usable; only ``\\q``, ``quit``/``exit`` or Ctrl-D end the loop.

Deliberately not here: statement splitting (``complete``), output formats (``format``),
backslash commands (``meta``), key bindings (``keys``), completion rules (``completer``).
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
from typing import Any, Callable, Optional

from repl import format as fmt
from repl import pager as paging
from repl.complete import is_complete, open_state, split_script
from repl.main import Result, Runner, fetch

BANNER = 'mzlite {version}\nType "\\?" for help.\n\n'
PROMPT = "mzlite"
CANCEL_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.05  # after cancel(), how long to wait for the statement to report


class Cancelled(Exception):
    """Reported like PostgreSQL's query_canceled."""

    sqlstate = "57014"
    position = None

    def __init__(self):
        super().__init__("canceling statement due to user request")
        self.message = str(self)


class BackgroundConnection:
    """Opens the connection on a thread, so the prompt appears before the engine has loaded;
    the first use waits for it (re-raising a failure to open)."""

    def __init__(self, connect: Callable[[], Any]):
        self._done = threading.Event()
        self._conn = None
        self._exc: Optional[BaseException] = None

        def work():
            try:
                self._conn = connect()
            except BaseException as exc:  # noqa: BLE001 - re-raised at first use
                self._exc = exc
            finally:
                self._done.set()
        threading.Thread(target=work, name="mzlite-connect", daemon=True).start()

    def get(self):
        self._done.wait()
        if self._exc is not None:
            raise self._exc
        return self._conn

    def close(self):
        if self._done.is_set() and self._conn is not None:
            close = getattr(self._conn, "close", None)
            if callable(close):
                close()


class CancellableExecutor:
    """``executor(sql) -> Result`` that runs the statement on a worker thread.  Ctrl-C in the
    waiting thread cancels: calls ``conn.cancel()`` if it exists and waits a bounded time for
    the statement to end, else abandons it; either way raises ``Cancelled``."""

    def __init__(self, get_conn: Callable[[], Any], err=None):
        self.get_conn = get_conn
        self.err = err or sys.stderr

    def __call__(self, sql: str) -> Result:
        conn = self.get_conn()
        done = threading.Event()
        box: dict[str, Any] = {}

        def work():
            try:
                box["result"] = fetch(conn, sql)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                box["exc"] = exc
            finally:
                done.set()
        try:  # a Ctrl-C from here on, even inside start(), cancels the statement
            threading.Thread(target=work, name="mzlite-statement", daemon=True).start()
            # Wake up now and then: SIGINT may be delivered to an engine thread, and the
            # main thread only notices the pending KeyboardInterrupt when it runs.
            while not done.wait(POLL_SECONDS):
                pass
        except KeyboardInterrupt:
            cancel = getattr(conn, "cancel", None)
            if callable(cancel):
                try:
                    cancel()
                except Exception:  # noqa: BLE001
                    pass
                self.err.write("Cancel request sent\n")
                self.err.flush()
                try:
                    done.wait(CANCEL_GRACE_SECONDS)
                except KeyboardInterrupt:  # a second Ctrl-C: stop waiting, abandon it
                    pass
                if "exc" in box and getattr(box["exc"], "sqlstate", None) == "57014":
                    raise box["exc"]
            raise Cancelled() from None
        if "exc" in box:
            raise box["exc"]
        return box["result"]


def continuation_prompt(text: str) -> str:
    """psql's continuation prompt for what is still open in ``text``."""
    state = open_state(text)
    if state is None:
        mark = "-"
    elif state == "/*":
        mark = "*"
    elif state.startswith("$"):
        mark = "$"
    else:
        mark = state[0]
    return f"{PROMPT}{mark}> "


def history_path() -> str:
    return os.environ.get("MZLITE_HISTORY") or os.path.join(os.path.expanduser("~"), ".mzlite_history")


DDL_TAGS = ("CREATE", "DROP", "ALTER")


def run(connect: Callable[[], Any], settings: fmt.Settings, *, history: bool = True,
        input=None, output=None, out=None, err=None, banner: bool = True) -> int:
    """Run the shell until the user quits; returns the exit status.  ``input``/``output``
    are prompt_toolkit's (tests pass a pipe input and a dummy output); ``out``/``err``
    receive results and errors."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    from prompt_toolkit.lexers import PygmentsLexer
    from pygments.lexers.sql import PostgresLexer

    from repl.completer import CatalogCache, SQLCompleter
    from repl.keys import build_key_bindings

    out = out or sys.stdout
    err = err or sys.stderr
    restore_sigint = _ensure_ctrl_c()
    conn = BackgroundConnection(connect)
    executor = CancellableExecutor(conn.get, err)

    def width() -> Optional[int]:
        return shutil.get_terminal_size((0, 0)).columns or None

    runner = Runner(None, settings, out, err, executor=executor, terminal_width=width,
                    connection=conn.get)

    def catalog_rows(sql: str):
        return fetch(conn.get(), sql).rows

    catalog = CatalogCache(catalog_rows)

    def after(sql: str, result: Result):
        if (result.status or "").split(" ", 1)[0] in DDL_TAGS:
            catalog.invalidate()
    runner.after_statement = after

    def pager(text: str) -> bool:
        to_terminal = runner.out is runner.stdout and _isatty(out)
        rows = shutil.get_terminal_size((0, 0)).lines or None
        if not paging.should_page(text, enabled=settings.pager, to_terminal=to_terminal, screen_rows=rows):
            return False
        return paging.page(text, paging.pager_command())
    runner.pager = pager

    hist = InMemoryHistory()
    if history:
        try:
            hist = FileHistory(history_path())
        except OSError:
            pass
    session = PromptSession(
        message=f"{PROMPT}=> ",
        multiline=True,
        prompt_continuation=lambda width, line_number, wrap_count:
            "" if wrap_count else _continuation_for(session.default_buffer.text, line_number),
        key_bindings=build_key_bindings(is_complete),
        lexer=PygmentsLexer(PostgresLexer),
        completer=SQLCompleter(catalog),
        complete_while_typing=False,
        auto_suggest=AutoSuggestFromHistory(),
        history=hist,
        enable_history_search=False,
        input=input,
        output=output,
    )
    if banner:
        from importlib import metadata
        try:
            version = metadata.version("mzlite")
        except metadata.PackageNotFoundError:
            version = "(development)"
        out.write(BANNER.format(version=version))
        out.flush()
    try:
        while not runner.quit_requested:
            try:
                text = session.prompt(default=getattr(runner, "held_buffer", "") or "")
            except KeyboardInterrupt:
                continue
            except EOFError:
                out.write("\\q\n")
                out.flush()
                break
            try:
                conn.get()
            except Exception as exc:  # noqa: BLE001 - psql's form: "psql: error: ..."
                err.write(f"mzlite: error: {getattr(exc, 'message', None) or exc}\n")
                err.flush()
                return 1
            try:
                handle(runner, text)
            except KeyboardInterrupt:
                out.write("\n")
    finally:
        if runner.out is not runner.stdout:
            try:
                runner.out.close()
            except Exception:  # noqa: BLE001
                pass
        conn.close()
        restore_sigint()
    return 0


def _ensure_ctrl_c() -> Callable[[], None]:
    """Make Ctrl-C reach the shell (``KeyboardInterrupt``), as psql installs its own handler.

    A process started as an asynchronous command by a shell without job control (a script's
    ``cmd &``, some CI runners) begins with SIGINT ignored, and Python then installs no handler:
    Ctrl-C would neither cancel a statement nor clear the line.  Returns what puts the
    previous disposition back; a no-op outside the main thread or when a handler is set."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        return lambda: None
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _continuation_for(text: str, line_number: int) -> str:
    """Continuation prompt of line ``line_number`` (0-based): the state at the end of the
    lines before it."""
    lines = text.split("\n")
    return continuation_prompt("\n".join(lines[:line_number]))


def handle(runner: Runner, text: str) -> bool:
    """Run everything in one submitted buffer (several statements if pasted).  True when all
    succeeded."""
    word = text.strip().lower().rstrip(";")
    if word in ("quit", "exit"):
        runner.quit_requested = True
        return True
    if word == "help":
        return runner.run_meta("\\?")
    ok = True
    runner.held_buffer = ""
    for piece in split_script(text):
        if runner.quit_requested:
            break
        if not piece.meta and not piece.terminated:
            # the buffer ended with a backslash command (psql runs it at once): the statement
            # typed before it is not finished and goes back into the next prompt's buffer
            runner.held_buffer = piece.text + "\n"
            continue
        good = runner.run_piece(piece)
        ok = ok and good
    return ok
