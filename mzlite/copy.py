"""COPY: PostgreSQL's text and CSV formats, in and out, as one reusable engine object.

Owns ``CopyFormat`` (COPY's options, checked as PostgreSQL checks them), ``CopyIn`` (``COPY
... FROM``: push bytes in chunks with ``write(data)`` or rows with ``write_row(values)``, then
``finish()`` loads them, or ``abort()``), ``CopyOut`` (``COPY ... TO``: pull formatted chunks by
iterating it) and the sequencer's handler of a ``CopyPlan``.  The embedded API
(``Cursor.copy``), the shell's ``\\copy`` and the wire protocol's CopyData all drive these
same objects.

Invariants: a COPY FROM goes through the one INSERT path (``mzlite.bulk.insert_many`` of
``INSERT INTO t (cols) VALUES ($1, ...)`` with each field as an untyped text parameter), so
each type's text input parser runs once per value, and every check an INSERT gets (NOT
NULL, type modifiers, and constraints as they land) applies; the whole COPY is one write: a
bad row anywhere fails it, naming the line and column (``context``), and nothing is loaded.
Text format: ``\\N`` (the NULL string) compared before de-escaping, backslash escapes, ``\\.``
ends the data.  CSV: a field is NULL when it is unquoted and equals the NULL string (the
empty string by default) unless FORCE_NOT_NULL names its column; FORCE_NULL makes a quoted
match NULL too; quoted fields may span lines.  The binary format is accepted only from a
driver that speaks it (``Session.copy_binary``: the wire protocol, which encodes and decodes
it with its own codecs and pushes rows with ``write_row``); elsewhere it is refused (0A000).
Deliberately not here: the binary format's bytes (``server.copy_binary``), COPY ... PROGRAM
(refused by the planner), encodings other than UTF-8.

Over 600 lines (barely): the COPY formats' parsers and formatters and the objects that drive
them share the format state; the per-type text parsers are in ``repr``.
"""
from __future__ import annotations

import re
from operator import methodcaller
from typing import Iterable, Iterator, Optional

from mzlite.cursor import Result
from repr.strconv import to_text
from sql import errors as E

_OPTIONS = ("format", "delimiter", "null", "header", "quote", "escape", "force_not_null", "force_null",
            "force_quote", "encoding", "freeze", "default")
#: rows formatted into one chunk of COPY TO's output
CHUNK_ROWS = 4096


def _opt_error(msg: str, sqlstate: str = E.SYNTAX_ERROR) -> E.Error:
    return E.error_for(sqlstate, msg)


class CopyFormat:
    """COPY's options for ``columns`` (``(name, type)`` pairs), direction ``is_from``."""

    def __init__(self, options: Iterable[tuple], columns, is_from: bool, binary_driver: bool = False):
        seen = {}
        for name, value in options:
            if name not in _OPTIONS:
                raise _opt_error(f'option "{name}" not recognized')
            if name in seen:
                raise _opt_error("conflicting or redundant options")
            seen[name] = value
        fmt = str(seen.get("format", "text")).lower()
        if fmt not in ("text", "csv", "binary"):
            raise _opt_error(f'COPY format "{fmt}" not recognized', E.INVALID_PARAMETER_VALUE)
        self.binary = fmt == "binary"
        if self.binary:
            for opt in ("delimiter", "null", "header"):  # PostgreSQL 15's SQLSTATEs
                if opt in seen:
                    raise _opt_error(f"cannot specify {opt.upper()} in BINARY mode",
                                     E.FEATURE_NOT_SUPPORTED if opt == "header" else E.SYNTAX_ERROR)
            if not binary_driver:  # its codecs are the wire protocol's (server.pgtypes)
                raise E.error_for(E.FEATURE_NOT_SUPPORTED, "COPY's binary format is supported over the wire "
                                  "protocol only (mzlite serve, COPY ... FROM STDIN / TO STDOUT); use text or csv")
        self.csv = fmt == "csv"
        names = [c for c, _t in columns]
        self.columns = names
        self.types = [t for _c, t in columns]
        delim = seen.get("delimiter", "," if self.csv else "\t")
        if not isinstance(delim, str) or len(delim) != 1 or len(delim.encode()) != 1:
            raise _opt_error("COPY delimiter must be a single one-byte character", E.FEATURE_NOT_SUPPORTED)
        if delim in "\r\n":
            raise _opt_error("COPY delimiter cannot be newline or carriage return", E.INVALID_PARAMETER_VALUE)
        if not self.csv and delim in "\\.abcdefghijklmnopqrstuvwxyz0123456789":
            raise _opt_error(f'COPY delimiter cannot be "{delim}"', E.INVALID_PARAMETER_VALUE)
        self.delimiter = delim
        self.null = seen.get("null", "" if self.csv else "\\N")
        if not isinstance(self.null, str):
            raise _opt_error("null requires a string value")
        if "\r" in self.null or "\n" in self.null:
            raise _opt_error("COPY null representation cannot use newline or carriage return",
                             E.INVALID_PARAMETER_VALUE)
        header = seen.get("header", False)
        if isinstance(header, str):
            h = header.lower()
            if h == "match":
                if not is_from:
                    raise _opt_error("cannot use \"match\" with HEADER in COPY TO", E.FEATURE_NOT_SUPPORTED)
                header = "match"
            elif h in ("true", "on", "1"):
                header = True
            elif h in ("false", "off", "0"):
                header = False
            else:
                raise _opt_error("header requires a Boolean value or \"match\"", E.INVALID_PARAMETER_VALUE)
        self.header = header
        for opt in ("quote", "escape", "force_not_null", "force_null", "force_quote"):
            if opt in seen and not self.csv:
                raise _opt_error(f"COPY {opt.replace('force_', 'force ')} available only in CSV mode",
                                 E.FEATURE_NOT_SUPPORTED)
        self.quote = seen.get("quote", '"')
        if not isinstance(self.quote, str) or len(self.quote) != 1:
            raise _opt_error("COPY quote must be a single one-byte character", E.FEATURE_NOT_SUPPORTED)
        self.escape = seen.get("escape", self.quote)
        if not isinstance(self.escape, str) or len(self.escape) != 1:
            raise _opt_error("COPY escape must be a single one-byte character", E.FEATURE_NOT_SUPPORTED)
        if self.csv and self.delimiter == self.quote:
            raise _opt_error("COPY delimiter and quote must be different", E.INVALID_PARAMETER_VALUE)
        if self.delimiter in self.null:
            raise _opt_error("COPY delimiter must not appear in the NULL specification", E.INVALID_PARAMETER_VALUE)
        if "force_quote" in seen and is_from:
            raise _opt_error("COPY force quote only available using COPY TO", E.FEATURE_NOT_SUPPORTED)
        for opt in ("force_not_null", "force_null"):
            if opt in seen and not is_from:
                raise _opt_error(f"COPY {opt.replace('_', ' ')} only available using COPY FROM",
                                 E.FEATURE_NOT_SUPPORTED)
        self.force_not_null = self._columns(seen.get("force_not_null", ()), "FORCE_NOT_NULL")
        self.force_null = self._columns(seen.get("force_null", ()), "FORCE_NULL")
        self.force_quote = self._columns(seen.get("force_quote", ()), "FORCE_QUOTE")
        enc = seen.get("encoding")
        if enc is not None and str(enc).lower().replace("-", "").replace("_", "") not in ("utf8", "sqlascii"):
            raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"COPY encoding {enc!r} is not supported (only UTF8)")
        if "default" in seen:
            raise E.error_for(E.FEATURE_NOT_SUPPORTED, "COPY's DEFAULT option is not supported")

    def _columns(self, value, option: str) -> frozenset:
        if value == "*" or value == ("*",):
            return frozenset(range(len(self.columns)))
        if isinstance(value, str):
            value = (value,)
        out = set()
        for name in value:
            if name not in self.columns:
                raise E.error_for(E.INVALID_COLUMN_REFERENCE,
                                  f'{option} column "{name}" not referenced by COPY')
            out.add(self.columns.index(name))
        return frozenset(out)

    # ------------------------------------------------------------------ input
    def parse(self, text: str, first_line: int = 1) -> tuple[list, list]:
        """``(rows, lines)``: the fields of every record of ``text`` (str, or None for NULL)
        and each record's starting line number (None when every record is one line)."""
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if any(ln.endswith("\r") for ln in lines):
            lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        return self._csv(lines, first_line) if self.csv else (self._text(lines), None)

    def _text(self, lines: list) -> list:
        d, null = self.delimiter, self.null
        if not lines:
            return []
        if _plain_text("\n".join(lines), null):
            return list(map(tuple, map(methodcaller("split", d), lines)))
        return self._text_lines(lines)

    def _text_lines(self, lines: list) -> list:
        """``_text`` a line at a time: escapes, NULLs, the end marker."""
        d, null = self.delimiter, self.null
        out = []
        for ln in lines:
            if ln == "\\.":
                break
            if "\\" not in ln:
                fields = ln.split(d)
                if null in fields:
                    fields = [None if f == null else f for f in fields]
                out.append(tuple(fields))
            else:
                out.append(tuple(None if f == null else _unescape_text(f) for f in _split_text(ln, d)))
        return out

    def _csv(self, lines: list, first_line: int) -> tuple[list, Optional[list]]:
        d, q, null = self.delimiter, self.quote, self.null
        if lines and _plain_csv("\n" + "\n".join(lines) + "\n", d, q, null):
            return list(map(tuple, map(methodcaller("split", d), lines))), None
        return self._csv_lines(lines, first_line)

    def _csv_lines(self, lines: list, first_line: int) -> tuple[list, Optional[list]]:
        """``_csv`` a line at a time: quotes, NULLs, FORCE_(NOT_)NULL, the end marker."""
        d, q, null = self.delimiter, self.quote, self.null
        fnn, fn = self.force_not_null, self.force_null
        out: list = []
        starts: list = []
        multi = False
        i, n = 0, len(lines)
        while i < n:
            ln = lines[i]
            starts.append(first_line + i)
            if q not in ln:
                if ln == "\\.":
                    starts.pop()
                    break
                fields = ln.split(d)
                if fnn:
                    out.append(tuple(None if f == null and k not in fnn else f for k, f in enumerate(fields)))
                else:
                    out.append(tuple(None if f == null else f for f in fields))
                i += 1
                continue
            fields, i2 = self._csv_record(lines, i, first_line)
            multi = multi or i2 != i + 1
            i = i2
            out.append(tuple(None if (v == null and (not quoted or k in fn) and k not in fnn) else v
                             for k, (v, quoted) in enumerate(fields)))
        return out, (starts if multi else None)

    def _csv_record(self, lines: list, i: int, first_line: int):
        """One record starting at line ``i``: ``([(value, was_quoted)], next line)``."""
        d, q, esc = self.delimiter, self.quote, self.escape
        fields = []
        cur: list = []
        quoted = False
        in_q = False
        ln = lines[i]
        j = 0
        while True:
            if j >= len(ln):
                if in_q:
                    i += 1
                    if i >= len(lines):
                        raise _line_error("22P04",
                                          "unterminated CSV quoted field", first_line + i - 1)
                    cur.append("\n")
                    ln, j = lines[i], 0
                    continue
                fields.append(("".join(cur), quoted))
                return fields, i + 1
            c = ln[j]
            if in_q:
                if c == esc and j + 1 < len(ln) and ln[j + 1] in (q, esc) and (esc != q or ln[j + 1] == q):
                    cur.append(ln[j + 1])
                    j += 2
                    continue
                if c == q:
                    in_q = False
                    j += 1
                    continue
                cur.append(c)
            elif c == q:
                in_q = quoted = True
            elif c == d:
                fields.append(("".join(cur), quoted))
                cur, quoted = [], False
            else:
                cur.append(c)
            j += 1

    # ------------------------------------------------------------------ output
    def header_line(self) -> str:
        return self.delimiter.join(self._csv_out(c, False) if self.csv else _escape_text(c, self.delimiter)
                                   for c in self.columns) + "\n"

    def format_rows(self, rows) -> str:
        d, null = self.delimiter, self.null
        lines = []
        if self.csv:
            fq = self.force_quote
            for row in rows:
                lines.append(d.join(null if v is None else self._csv_out(_out(v), k in fq)
                                    for k, v in enumerate(row)))
        else:
            for row in rows:
                lines.append(d.join(null if v is None else _escape_text(_out(v), d) for v in row))
        return "\n".join(lines) + "\n" if lines else ""

    def _csv_out(self, s: str, force: bool) -> str:
        q, esc = self.quote, self.escape
        # (a lone ``\.`` would read back as the end-of-data marker: quoted when it is a whole line)
        if force or s == self.null or (s == "\\." and len(self.columns) == 1) \
                or any(ch in s for ch in (self.delimiter, q, "\n", "\r")):
            if esc == q:
                return q + s.replace(q, q + q) + q
            return q + "".join(esc + c if c in (q, esc) else c for c in s) + q
        return s


def _plain_text(joined: str, null: str) -> bool:
    """Whether text-format lines (``joined`` by newlines) hold no backslash (so no escape and
    no ``\\.`` end marker) and nothing that could be the NULL string: splitting each line on
    the delimiter then gives its fields exactly."""
    return "\\" not in joined and null not in joined


def _plain_csv(joined: str, d: str, q: str, null: str) -> bool:
    """Whether CSV lines (``joined``: each line between newlines) hold no quote, no ``\\.``
    end marker and no field that could equal the NULL string, so that splitting each line
    on the delimiter gives its fields exactly (C-level substring tests only; a false
    "maybe" just takes the per-line path)."""
    if q in joined or "\n\\.\n" in joined:
        return False
    if null == "":  # an empty field: two delimiters together, or one at a line's either end
        return not (d + d in joined or "\n" + d in joined or d + "\n" in joined or "\n\n" in joined)
    return null not in joined


def _out(v) -> str:
    """A value's output text (a boolean prints ``t``/``f``, as its output function does)."""
    if v is True:
        return "t"
    if v is False:
        return "f"
    return to_text(v)


_TEXT_ESCAPES = {"\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
_NEEDS_ESCAPE = re.compile(r"[\\\b\f\n\r\t\v]")


def _escape_text(s: str, d: str) -> str:
    if d not in s and not _NEEDS_ESCAPE.search(s):
        return s
    out = "".join(_TEXT_ESCAPES.get(c, c) for c in s)
    return out.replace(d, "\\" + d) if d not in _TEXT_ESCAPES else out


def _split_text(line: str, d: str) -> list:
    """The raw fields of a text-format line with backslashes (an escaped delimiter stays)."""
    out, cur, i, n = [], [], 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n:
            cur.append(line[i:i + 2])
            i += 2
            continue
        if c == d:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


_UNESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", re.S)
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _unescape_text(f: str) -> str:
    if "\\" not in f:
        return f

    def rep(m):
        s = m.group(1)
        if s[0] == "x" and len(s) > 1:
            return chr(int(s[1:], 16))
        if s[0] in "01234567":
            return chr(int(s, 8) & 0xFF)
        return _SIMPLE.get(s, s)
    return _UNESCAPE.sub(rep, f)


def _line_error(sqlstate: str, message: str, line: int, context: str = "") -> E.Error:
    err = E.error_for(sqlstate, message)
    err.context = context or f"COPY, line {line}"
    return err


class CopyIn:
    """A COPY FROM in progress: data pushed in (``write``, ``write_row``), loaded by ``finish``.

    A caller must either ``finish()`` or ``abort()`` it; after either, it takes nothing more.
    ``finish()`` runs under the database's statement lock as one statement of ``session``
    and returns the number of rows loaded (the ``COPY n`` tag's n)."""

    def __init__(self, db, session, plan, fmt: CopyFormat):
        self.db, self.session, self.plan, self.fmt = db, session, plan, fmt
        self._chunks: list = []     #: text pushed by ``write``
        self._rows: list = []       #: rows pushed by ``write_row`` (values as given)
        self._pending = b""         #: the incomplete UTF-8 sequence at the end of the last chunk
        self.done = False

    def write(self, data) -> None:
        """Push a chunk of the COPY data (bytes in UTF-8, or str); chunks may split lines."""
        self._check()
        if isinstance(data, (bytes, bytearray, memoryview)):
            b = self._pending + bytes(data)
            try:
                text = b.decode("utf-8")
                self._pending = b""
            except UnicodeDecodeError as e:
                if e.start >= len(b) - 3 and e.reason == "unexpected end of data":
                    text, self._pending = b[:e.start].decode("utf-8"), b[e.start:]
                else:
                    self.abort()
                    raise E.error_for("22021", "invalid byte sequence for encoding \"UTF8\"") from None
            self._chunks.append(text)
        elif isinstance(data, str):
            self._chunks.append(data)
        else:
            raise E.ProgrammingError(f"COPY data must be bytes or str, not {type(data).__name__}")

    def write_row(self, row) -> None:
        """Push one row of values (one per copied column; str values are read as text input,
        other values bind as statement parameters do)."""
        self._check()
        row = tuple(row)
        if len(row) != len(self.fmt.columns):
            self.abort()
            raise E.error_for("22P04", f"a row of {len(row)} values for COPY's {len(self.fmt.columns)} columns")
        self._rows.append(row)

    def _check(self) -> None:
        if self.done:
            raise E.InterfaceError("this COPY has finished")
        if self.session.cancel_requested:
            # the COPY is the session's running statement until it is finished: an interrupt
            # while data is pushed ends it (nothing is loaded), as it would PostgreSQL's
            self.abort()
            raise E.QueryCanceled("canceling statement due to user request", sqlstate=E.QUERY_CANCELED)

    def abort(self) -> None:
        """Discard everything pushed: nothing is loaded."""
        self.done = True
        self._chunks, self._rows = [], []

    def finish(self) -> int:
        """Load every row pushed as one write (nothing when any row is bad); the row count."""
        self._check()  # an interrupt since the last write (the statement below starts afresh)
        return self.db.run_statement(self.session, self.load)

    def load(self) -> int:
        """``finish`` inside a statement already running (``COPY ... FROM 'file'``)."""
        self._check()
        self.done = True
        if self._pending:
            raise E.error_for("22021", "invalid byte sequence for encoding \"UTF8\": incomplete character at end")
        text = "".join(self._chunks)
        self._chunks = []
        rows, starts = self._records(text)
        self.db.check_canceled(self.session)
        rows += self._rows
        self._rows = []
        return self._load(rows, starts)

    def _records(self, text: str):
        fmt = self.fmt
        first = 1
        if fmt.header and text:
            head, _, rest = text.partition("\n")
            if fmt.header == "match":
                names, _ = fmt.parse(head + "\n")
                got = list(names[0]) if names else []
                if got != fmt.columns:
                    raise _line_error("22P04", _header_mismatch(got, list(fmt.columns)), 1,
                                      f"COPY {self._name()}, line 1")
            text, first = rest, 2
        rows, starts = fmt.parse(text, first)
        width = len(fmt.columns)
        for k, r in enumerate(rows):
            if len(r) != width:
                line = starts[k] if starts else first + k
                if len(r) < width:
                    msg = f'missing data for column "{fmt.columns[len(r)]}"'
                else:
                    msg = "extra data after last expected column"
                raise _line_error("22P04", msg, line, f"COPY {self._name()}, line {line}")
        return rows, (starts, first)

    def _name(self) -> str:
        return self.plan.table_name

    def _load(self, rows: list, where) -> int:
        from mzlite import bulk
        if not rows:
            return 0
        stmt = insert_statement(self.db, self.plan)
        try:
            result = bulk.insert_many(self.db, self.session, stmt, rows)
        except E.Error as e:
            raise self._locate(e, stmt, rows, where) from None
        return result.rowcount

    def _locate(self, err: E.Error, stmt, rows: list, where) -> E.Error:
        """``err`` (the first bad row's error, as the INSERT path raised it) with that row's
        line and column as its ``context``, as PostgreSQL's CONTEXT names them."""
        from mzlite import bulk
        starts, first = where
        try:
            prep = bulk.prepared(self.db, stmt, ("unknown",) * len(self.fmt.columns))
        except E.Error:
            prep = None
        if prep is None:
            return err
        for k, row in enumerate(rows):
            if any(type(v) not in (str, type(None)) for v in row):
                continue  # a write_row of typed values: no text to point at
            line = starts[k] if starts else first + k
            out, bad = prep.evaluate([row])
            if bad:
                for j in range(len(row)):
                    probe = tuple(v if i == j else None for i, v in enumerate(row))
                    if prep.evaluate([probe])[1]:
                        return _with_context(err, f'COPY {self._name()}, line {line}, column '
                                                  f'{self.fmt.columns[j]}: "{row[j]}"')
                return _with_context(err, f"COPY {self._name()}, line {line}")
            if any(out[0][i] is None for i in prep.plan.not_null):
                return _with_context(err, f"COPY {self._name()}, line {line}: \"{_line_text(row)}\"")
        return err


def insert_statement(db, plan):
    """The parsed ``INSERT INTO t (cols) VALUES ($1, ...)`` a COPY FROM into ``plan``'s columns runs."""
    item = db.catalog.get(plan.table_id)
    cols = ", ".join(_quote(item.columns[i].name) for i in plan.column_indexes)
    values = ", ".join(f"${k + 1}" for k in range(len(plan.column_indexes)))
    return db.parse_one(f"INSERT INTO {_quote(item.name)} ({cols}) VALUES ({values})")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _line_text(row) -> str:
    return ",".join("NULL" if v is None else str(v) for v in row)


def _with_context(err: E.Error, context: str) -> E.Error:
    """A copy of ``err`` with ``context`` (and no position: it pointed into the INSERT COPY ran)."""
    out = E.error_for(err.sqlstate, err.message, detail=err.detail, hint=err.hint)
    out.context = context
    return out


class CopyOut:
    """A COPY TO's output: iterate it for chunks of formatted bytes (``read()`` gives the
    next chunk, ``b""`` at the end); ``rowcount`` rows."""

    def __init__(self, fmt: CopyFormat, rows: list):
        self.fmt = fmt
        self.rows = rows
        self.rowcount = len(rows)

    def __iter__(self) -> Iterator[bytes]:
        fmt = self.fmt
        if fmt.header:
            yield fmt.header_line().encode()
        rows = self.rows
        for i in range(0, len(rows), CHUNK_ROWS):
            yield fmt.format_rows(rows[i:i + CHUNK_ROWS]).encode()

    def text(self) -> str:
        return b"".join(self).decode()


class Copy:
    """What ``Cursor.copy`` returns (psycopg's ``Copy`` shape), over a ``CopyIn`` or ``CopyOut``.

    FROM STDIN: ``write(data)``, ``write_row(values)``; leaving the ``with`` block loads
    everything (``finish``), leaving it by an exception loads nothing.  TO STDOUT: iterate it
    for bytes, ``read()`` for the next chunk (``b""`` at the end), ``rows()`` for tuples of
    text values (None for NULL)."""

    def __init__(self, cursor, result):
        self.cursor = cursor
        self._engine = result.copy
        self._chunks = iter(self._engine) if isinstance(self._engine, CopyOut) else None

    def __enter__(self) -> "Copy":
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        eng = self._engine
        if isinstance(eng, CopyIn) and not eng.done:
            if kind is None:
                self.finish()
            else:
                eng.abort()
        return False

    @property
    def engine(self):
        """The ``CopyIn`` or ``CopyOut`` underneath (the wire protocol drives it directly)."""
        return self._engine

    def _in(self) -> CopyIn:
        if not isinstance(self._engine, CopyIn):
            raise E.ProgrammingError("this COPY sends data (TO STDOUT): read it instead")
        return self._engine

    def write(self, data) -> None:
        self._in().write(data)

    def write_row(self, row) -> None:
        self._in().write_row(row)

    def finish(self) -> int:
        """Load the rows written (``with`` does it when the block ends); their count."""
        n = self._in().finish()
        self.cursor.copy_done(f"COPY {n}", n)
        return n

    def _out(self) -> CopyOut:
        if not isinstance(self._engine, CopyOut):
            raise E.ProgrammingError("this COPY receives data (FROM STDIN): write it instead")
        return self._engine

    def __iter__(self) -> Iterator[bytes]:
        self._out()
        return self._chunks

    def read(self) -> bytes:
        self._out()
        return next(self._chunks, b"")

    def rows(self) -> Iterator[tuple]:
        """The rows as tuples of text (None for NULL), as psycopg's ``rows()`` without types."""
        out = self._out()
        for row in out.rows:
            yield tuple(None if v is None else _out(v) for v in row)


# ---------------------------------------------------------------------- the handler

def copy(db, session, plan, stmt, params) -> Result:
    """The sequencer's handler of a ``CopyPlan``: a file is read or written here; STDIN and
    STDOUT hand a ``CopyIn`` / ``CopyOut`` to the caller in ``Result.copy`` (only where the
    caller drives one: ``Cursor.copy``, the shell, the wire protocol: ``session.copy_driver``)."""
    fmt = CopyFormat(plan.options, plan.columns, plan.is_from,
                     binary_driver=plan.target is None and getattr(session, "copy_binary", False))
    if plan.target is None and not getattr(session, "copy_driver", False):
        where = "STDIN" if plan.is_from else "STDOUT"
        raise E.ProgrammingError(f"COPY {'FROM' if plan.is_from else 'TO'} {where} needs a caller that sends or "
                                 f"receives the data: use cursor.copy(sql) (psycopg's shape), or COPY with a "
                                 f"file name", sqlstate="0A000")
    if plan.is_from:
        cin = CopyIn(db, session, plan, fmt)
        if plan.target is None:
            r = Result("COPY", None)
            r.copy = cin
            return r
        try:
            with open(plan.target, "rb") as f:
                data = f.read()
        except OSError as e:
            raise E.error_for("58P01" if isinstance(e, FileNotFoundError) else "58030",
                              f'could not open file "{plan.target}" for reading: {e.strerror}') from None
        cin.write(data)
        n = cin.load()
        return Result(f"COPY {n}", None, rowcount=n)
    rows, _ts = db.reader.read(session, plan.expr, plan.finishing, optimized=False)
    out = CopyOut(fmt, rows)
    if plan.target is None:
        r = Result(f"COPY {out.rowcount}", None, rowcount=out.rowcount)
        r.copy = out
        return r
    try:
        with open(plan.target, "wb") as f:
            for chunk in out:
                f.write(chunk)
    except OSError as e:
        raise E.error_for("58030", f'could not open file "{plan.target}" for writing: {e.strerror}') from None
    return Result(f"COPY {out.rowcount}", None, rowcount=out.rowcount)


def _header_mismatch(got: list, expected: list) -> str:
    """PostgreSQL's words for a HEADER MATCH line that does not name the columns."""
    if len(got) != len(expected):
        return f"wrong number of fields in header line: got {len(got)}, expected {len(expected)}"
    i = next(i for i, (g, e) in enumerate(zip(got, expected)) if g != e)
    return f'column name mismatch in header line field {i + 1}: got "{got[i]}", expected "{expected[i]}"'
