"""Streaming ``SUBSCRIBE`` in the ``mzlite`` command: rows are printed as they arrive.

Owns: recognising a SUBSCRIBE statement (``is_subscribe``), asking for progress rows
(``with_progress``: adds ``PROGRESS`` to the statement's ``WITH (...)`` options, or a
``WITH (PROGRESS)`` clause, unless its ``WITH`` options name ``PROGRESS`` already), the line
format of a stream (``StreamPrinter``: a header sized by the first batch of rows, one line
per update, the progress rows only when the statement asked for them, a footer when the
stream ends), and ``stream_statement``: a worker thread executes the
statement and reads the cursor with ``fetchmany`` (which waits for rows) while the calling
thread prints and stays interruptible.

Invariants: nothing is printed after ``stream_statement`` returns or raises; Ctrl-C stops the
stream.  While streaming in the main thread, SIGINT only sets a flag (``_SigintFlag``) that the
printing loop turns into ``KeyboardInterrupt`` between queue operations: an interrupt raised
inside ``queue.Queue.get`` (inside its lock) can leave the lock held, and the shell hangs.
The previous handler is restored before ``stream_statement`` returns or raises.  On Ctrl-C the worker closes the
cursor (ending the subscription) as soon as its pending ``fetchmany`` returns; with the
progress rows asked for, that is the next frontier tick, and the caller waits for it (at
most ``CLOSE_GRACE_SECONDS``).  A stream that ends by itself (``UP TO``, constant input)
returns normally with its footer.  The engine is reached only through the DB-API cursor.

Deliberately not here: other statements (``main.Runner``), paging (a stream is never paged),
the expanded/json formats (a stream is always one line per update; ``csv``/``tsv`` give
comma/tab separated lines without padding).
"""
from __future__ import annotations

import queue
import re
import signal
import threading
from typing import Any, Callable, Optional

from repl import format as fmt

CLOSE_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.05
FETCH_ROWS = 1000

_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9$]*")


def _top_level_words(sql: str) -> list[tuple[str, int, int]]:
    """``(lower-cased word, start, end)`` of the words outside quotes, comments and parentheses,
    plus ``("(", i, i + 1)`` for each top-level opening parenthesis."""
    out: list[tuple[str, int, int]] = []
    i, n, depth = 0, len(sql), 0
    while i < n:
        c = sql[i]
        if c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif c == "/" and sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in "'\"":
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            i = j + 1
        elif c == "$":
            m = re.match(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$", sql[i:])
            if m:
                j = sql.find(m.group(0), i + len(m.group(0)))
                i = n if j < 0 else j + len(m.group(0))
            else:
                i += 1
        elif c == "(":
            if depth == 0:
                out.append(("(", i, i + 1))
            depth += 1
            i += 1
        elif c == ")":
            depth = max(0, depth - 1)
            i += 1
        elif c.isalpha() or c == "_":
            m = _WORD.match(sql, i)
            if depth == 0:
                out.append((m.group(0).lower(), i, m.end()))
            i = m.end()
        else:
            i += 1
    return out


def _closing_paren(sql: str, p: int) -> int:
    """Where the parenthesis opened just before ``p`` closes (``len(sql)`` if it does not);
    the WITH options hold no quoted parentheses."""
    depth = 1
    for i in range(p, len(sql)):
        depth += {"(": 1, ")": -1}.get(sql[i], 0)
        if depth == 0:
            return i
    return len(sql)


def is_subscribe(sql: str) -> bool:
    """The statement is a ``SUBSCRIBE`` (its first word, after comments)."""
    words = _top_level_words(sql)
    return bool(words) and words[0][0] == "subscribe"


def with_progress(sql: str) -> str:
    """``sql`` (a SUBSCRIBE) asking for progress rows; unchanged when its WITH options name
    PROGRESS already (``PROGRESS = false`` is respected).  Should the engine reject the
    rewritten text, ``stream_statement`` runs the statement as typed."""
    words = _top_level_words(sql)
    for k, (w, s, e) in enumerate(words[2:], start=2):  # words[1] may be TO or the target
        if w == "with" and k + 1 < len(words) and words[k + 1][0] == "(":
            p = words[k + 1][2]
            if re.search(r"\bprogress\b", sql[p:_closing_paren(sql, p)], re.IGNORECASE):
                return sql
            return sql[:p] + "PROGRESS, " + sql[p:]
    for k, (w, s, e) in enumerate(words[2:], start=2):
        nxt = words[k + 1][0] if k + 1 < len(words) else ""
        if (w, nxt) in (("as", "of"), ("up", "to")):
            return sql[:s] + "WITH (PROGRESS) " + sql[s:]
    text = sql.rstrip()
    last_line = text.rsplit("\n", 1)[-1]
    return text + ("\nWITH (PROGRESS)" if "--" in last_line else " WITH (PROGRESS)")


class StreamPrinter:
    """Turns a stream's rows into lines.  ``hide_progress``: the progress column was added by
    us (to keep the stream interruptible), so neither it nor the progress rows are shown."""

    def __init__(self, names, types, settings: fmt.Settings, hide_progress: bool):
        self.settings = settings
        self.progress_col = names.index("mz_progressed") if hide_progress and "mz_progressed" in names else None
        keep = [i for i in range(len(names)) if i != self.progress_col]
        self.keep = keep
        self.names = [names[i] for i in keep]
        self.right = [(types[i] or "") in fmt.NUMERIC_TYPES or names[i] == "mz_timestamp" for i in keep]
        #: grow as wider values arrive; mz_timestamp starts at an epoch-milliseconds width
        self.widths = [max(fmt.display_width(n), 13 if n == "mz_timestamp" else 0) for n in self.names]
        self.updates = 0

    def _cells(self, values) -> list[str]:
        return [fmt.value_text(v, self.settings.null).replace("\n", "\\n") for v in values]

    def _line(self, cells) -> str:
        if self.settings.format == "csv":
            return ",".join(fmt.format_csv(["x"], [None], [(c,)]).splitlines()[1] for c in cells) + "\n"
        if self.settings.format == "tsv":
            return "\t".join(cells) + "\n"
        parts = []
        for k, c in enumerate(cells):
            w = fmt.display_width(c)
            self.widths[k] = max(self.widths[k], w)
            pad = " " * (self.widths[k] - w)
            parts.append(pad + c if self.right[k] else c + pad)
        return " " + " | ".join(parts).rstrip() + "\n"

    def header(self) -> str:
        if self.settings.tuples_only:
            return ""
        if self.settings.format in ("csv", "tsv"):
            return self._line(self.names)
        head = " " + " | ".join(n.center(w) for n, w in zip(self.names, self.widths)).rstrip() + "\n"
        return head + "+".join("-" * (w + 2) for w in self.widths) + "\n"

    def fit(self, rows) -> None:
        """Widen the columns for ``rows`` (the first batch, before the header is printed, so
        the header lines up with the snapshot; later wider values widen later lines)."""
        for row in rows:
            if self.progress_col is not None and row[self.progress_col]:
                continue
            for k, c in enumerate(self._cells([row[i] for i in self.keep])):
                self.widths[k] = max(self.widths[k], fmt.display_width(c))

    def rows(self, rows) -> str:
        text = []
        for row in rows:
            if self.progress_col is not None and row[self.progress_col]:
                continue  # progress rows we asked for ourselves: the user asked for none
            self.updates += 1
            text.append(self._line(self._cells([row[i] for i in self.keep])))
        return "".join(text)

    def footer(self) -> str:
        if self.settings.tuples_only or not self.settings.footer or self.settings.format != "aligned":
            return ""
        return f"({self.updates} {'row' if self.updates == 1 else 'rows'})\n\n"


def stream_statement(conn, sql: str, settings: fmt.Settings, write: Callable[[str], None]) -> str:
    """Run the SUBSCRIBE ``sql`` on ``conn``, writing lines as rows arrive, until the stream ends
    (returns the command tag) or Ctrl-C (``KeyboardInterrupt`` propagates after the worker
    closed the cursor, or after ``CLOSE_GRACE_SECONDS``).  An engine error is raised."""
    events: "queue.Queue[tuple[str, Any]]" = queue.Queue()
    stop = threading.Event()
    done = threading.Event()
    progressed = with_progress(sql)

    def work():
        cur = None
        try:
            try:
                cur = conn.execute(progressed)
            except Exception:  # noqa: BLE001 - our rewrite may not parse: run what was typed
                if progressed == sql:
                    raise
                cur = conn.execute(sql)
            desc = cur.description or []
            events.put(("start", ([d[0] for d in desc], [d[1] for d in desc])))
            while not stop.is_set():
                rows = cur.fetchmany(FETCH_ROWS)
                if not rows:
                    events.put(("end", getattr(cur, "statusmessage", None)))
                    return
                if not stop.is_set():
                    events.put(("rows", rows))
        except BaseException as exc:  # noqa: BLE001 - handed to the printing thread
            events.put(("error", exc))
        finally:
            if cur is not None:
                try:
                    cur.close()
                except Exception:  # noqa: BLE001
                    pass
            done.set()

    printer: Optional[StreamPrinter] = None
    header_due = False
    sigint = _SigintFlag()
    try:
        threading.Thread(target=work, name="mzlite-subscribe", daemon=True).start()
        while True:
            sigint.check()
            try:
                kind, payload = events.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if kind == "error":
                raise payload
            if kind == "start":
                names, types = payload
                printer = StreamPrinter(names, types, settings,
                                        hide_progress=progressed != sql and "mz_progressed" in names)
                header_due = True
            elif kind == "rows":
                if header_due:  # the header is sized by the first batch (the snapshot)
                    printer.fit(payload)
                    write(printer.header())
                    header_due = False
                write(printer.rows(payload))
            else:
                if printer is not None:
                    if header_due:
                        write(printer.header())
                    write(printer.footer())
                return payload or "SUBSCRIBE"
    except KeyboardInterrupt:
        stop.set()
        sigint.raised = False
        waited = 0.0
        try:
            while not done.wait(POLL_SECONDS) and waited < CLOSE_GRACE_SECONDS and not sigint.raised:
                waited += POLL_SECONDS  # a second Ctrl-C stops waiting for the close
        except KeyboardInterrupt:  # not in the main thread: SIGINT raised directly
            pass
        raise
    finally:
        sigint.restore()


class _SigintFlag:
    """SIGINT as a flag for the duration of one stream (main thread only; elsewhere a no-op and
    ``KeyboardInterrupt`` arrives as Python delivers it).  ``check`` raises ``KeyboardInterrupt``
    once per Ctrl-C, outside every lock; ``restore`` puts the previous handler back."""

    def __init__(self):
        self.raised = False
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if previous is not None:  # None: a handler not set from Python, which we could not restore
                self.previous = previous
                signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame):
        self.raised = True

    def check(self) -> None:
        if self.raised:
            self.raised = False
            raise KeyboardInterrupt

    def restore(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None
