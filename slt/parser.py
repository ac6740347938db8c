"""Parse sqllogictest files into records, once, with the byte spans needed to rewrite them.

Owns: the record grammar of SQLite's original sqllogictest format (statement ok|error,
query with type letters and nosort|rowsort|valuesort and a label, hash-threshold, halt,
skipif/onlyif), Materialize's extensions (mode cockroach|standard, statement error <regex>,
statement count N, query error <regex>, colnames and multiline options, `simple` blocks,
reset-server, type letters B and O, a query with no type letters, and Materialize's record
boundaries: a query's or simple block's SQL runs up to its ``----`` line, blank lines
included, while a statement's ends at the first blank line) and sqllogictest-rs's `include <glob>` and
`control sortmode <mode>`.

Invariant: every record knows the file it came from, the 1-based line of its header, and
(for records with expected output) the character span of that output in the file's text,
so that ``--rewrite-results`` can replace exactly that span and keep every other character
of the file as it was.  Expected values are parsed here, once, into the flat list the
runner compares against.

Deliberately not here: running anything, rendering values, deciding skipif/onlyif (the
conditions are attached to the record; the runner evaluates them against the engine's
names), hash-threshold and sortmode (runtime state, kept as records in file order).
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from typing import Optional

__all__ = [
    "ParseError", "Record", "Statement", "Query", "Simple", "HashThreshold", "Halt",
    "ResetServer", "SortMode", "parse_text", "parse_file", "HASH_RE", "split_cockroach_line",
]

HASH_RE = re.compile(r"^\s*(\d+) values hashing to ([0-9a-fA-F]{32})\s*$")
_PGCODE_RE = re.compile(r"^pgcode\s+([0-9A-Za-z]{5})\s*")
_VALID_TYPES = set("TIRBO")
_SORTS = {"nosort", "rowsort", "valuesort"}


class ParseError(Exception):
    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass
class Record:
    path: str
    line: int
    conditions: tuple = ()          # (("skipif"|"onlyif", engine_name), ...)


@dataclass
class Statement(Record):
    sql: str = ""
    expect: str = "ok"              # "ok" | "error" | "count"
    error_regex: Optional[str] = None   # None or "" means any error
    pgcode: Optional[str] = None
    count: Optional[int] = None
    count_span: Optional[tuple] = None  # span of the N in "statement count N"
    error_span: Optional[tuple] = None  # span of the regex in the header (for rewrite)


@dataclass
class Query(Record):
    sql: str = ""
    types: str = ""
    sort: Optional[str] = None      # None: not given (control sortmode or nosort applies)
    label: Optional[str] = None
    colnames: Optional[list] = None  # expected column names when the colnames option is given
    multiline: bool = False
    mode: str = "standard"          # "standard" | "cockroach"
    error: bool = False             # query error <regex>
    error_regex: Optional[str] = None
    pgcode: Optional[str] = None
    error_span: Optional[tuple] = None
    has_results: bool = True        # False when there is no ---- line (results not checked)
    expected_lines: list = field(default_factory=list)  # raw lines after ---- (and colnames)
    expected_hash: Optional[tuple] = None   # (num_values, md5) when hashed
    output_span: Optional[tuple] = None     # (start, end) of everything after the ---- line
    sql_end: int = 0                # offset just after the SQL text (for inserting ----)
    newline: str = "\n"


@dataclass
class Simple(Record):
    sql: str = ""
    conn: Optional[str] = None
    user: Optional[str] = None
    multiline: bool = False
    expected_lines: list = field(default_factory=list)
    output_span: Optional[tuple] = None
    sql_end: int = 0
    newline: str = "\n"


@dataclass
class HashThreshold(Record):
    threshold: int = 0


@dataclass
class Halt(Record):
    pass


@dataclass
class ResetServer(Record):
    pass


@dataclass
class SortMode(Record):
    sort: str = "nosort"


def split_cockroach_line(line: str, ncols: int) -> list:
    """Cockroach mode: a line holds a whole row; columns are whitespace separated, and
    U+2420 (the visible space) stands for a space inside a value."""
    if ncols == 1:
        return [line.strip().replace("\u2420", " ")]
    return [tok.replace("\u2420", " ") for tok in line.split()]


class _Lines:
    """The file as lines with their character offsets (newline kept apart)."""

    __slots__ = ("text", "lines", "starts", "ends", "n")

    def __init__(self, text: str):
        self.text = text
        self.lines, self.starts, self.ends = [], [], []
        pos = 0
        for raw in text.splitlines(keepends=True):
            body = raw.rstrip("\r\n")
            self.lines.append(body)
            self.starts.append(pos)
            self.ends.append(pos + len(raw))   # offset after the newline
            pos += len(raw)
        self.n = len(self.lines)


def _strip_comment(line: str) -> str:
    i = line.find("#")
    return (line[:i] if i >= 0 else line).strip()


def _blank(line: str) -> bool:
    return not line.strip()


def parse_text(text: str, path: str = "<string>", *, _depth: int = 0) -> list:
    """Parse ``text`` (the contents of ``path``) into a list of records."""
    L = _Lines(text)
    records: list = []
    mode = "standard"
    conditions: list = []
    i = 0
    n = L.n
    while i < n:
        line = L.lines[i]
        if _blank(line) or line.lstrip().startswith("#"):
            if _blank(line) and conditions:
                # a condition applies to the next record of its own block
                conditions = []
            i += 1
            continue
        header = _strip_comment(line)
        words = header.split()
        if not words:
            i += 1
            continue
        kw = words[0]
        lineno = i + 1
        if kw in ("skipif", "onlyif"):
            if len(words) < 2:
                raise ParseError(path, lineno, f"{kw} needs an engine name")
            conditions.append((kw, words[1]))
            i += 1
            continue
        cond = tuple(conditions)
        conditions = []
        if kw == "statement":
            rec, i = _parse_statement(L, i, words, path, cond)
            records.append(rec)
        elif kw == "query":
            rec, i = _parse_query(L, i, words, path, cond, mode)
            records.append(rec)
        elif kw == "simple":
            rec, i = _parse_simple(L, i, words, path, cond)
            records.append(rec)
        elif kw == "hash-threshold":
            try:
                records.append(HashThreshold(path, lineno, cond, int(words[1])))
            except (IndexError, ValueError):
                raise ParseError(path, lineno, f"bad hash-threshold: {line!r}") from None
            i += 1
        elif kw == "halt":
            records.append(Halt(path, lineno, cond))
            i += 1
        elif kw == "mode":
            m = words[1] if len(words) > 1 else ""
            if m == "cockroach":
                mode = "cockroach"
            elif m in ("standard", "sqlite"):
                mode = "standard"
            else:
                raise ParseError(path, lineno, f"unknown mode {m!r}")
            i += 1
        elif kw == "reset-server":
            records.append(ResetServer(path, lineno, cond))
            i += 1
        elif kw == "control":
            if len(words) >= 3 and words[1] == "sortmode" and words[2] in _SORTS:
                records.append(SortMode(path, lineno, cond, words[2]))
            elif len(words) >= 2 and words[1] == "substitution":
                pass  # sqllogictest-rs variable substitution: not supported, ignored
            else:
                raise ParseError(path, lineno, f"unknown control: {line!r}")
            i += 1
        elif kw == "include":
            if len(words) < 2:
                raise ParseError(path, lineno, "include needs a file pattern")
            if _depth > 16:
                raise ParseError(path, lineno, "include nested too deeply")
            base = os.path.dirname(path)
            matches = sorted(glob.glob(os.path.join(base, words[1])))
            if not matches:
                raise ParseError(path, lineno, f"include matched no file: {words[1]}")
            for inc in matches:
                sub = parse_file(inc, _depth=_depth + 1)
                if cond:
                    for r in sub:
                        r.conditions = cond + tuple(r.conditions)
                records.extend(sub)
            i += 1
        elif kw in ("subtest", "user", "kv-batch-size", "sleep"):
            i += 1  # cockroach/sqllogictest-rs directives with no meaning here
        else:
            raise ParseError(path, lineno, f"unexpected start of record: {line!r}")
    return records


def parse_file(path: str, *, _depth: int = 0) -> list:
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    return parse_text(text, path, _depth=_depth)


def _expected_error(header_line: str, start_col: int, line_start: int):
    """Parse `[pgcode XXXXX] [regex]` from the header line from ``start_col``; returns
    (regex or None, pgcode or None, span of the regex in the file)."""
    rest = header_line[start_col:]
    lead = len(rest) - len(rest.lstrip())
    rest = rest.lstrip()
    col = start_col + lead
    pgcode = None
    m = _PGCODE_RE.match(rest)
    if m:
        pgcode = m.group(1).upper()
        col += m.end()
        rest = rest[m.end():]
    regex = rest.rstrip() or None
    span = (line_start + col, line_start + col + len(rest.rstrip()))
    return regex, pgcode, span


def _read_sql(L: _Lines, i: int, stop_at_separator: bool):
    """Read SQL lines from line index i until a blank line, EOF, or a ---- line.
    Returns (sql, next_index, separator_index_or_None)."""
    start = i
    n = L.n
    while i < n:
        ln = L.lines[i]
        if _blank(ln):
            break
        if stop_at_separator and ln.rstrip() == "----":
            return "\n".join(L.lines[start:i]), i, i
        i += 1
    return "\n".join(L.lines[start:i]), i, None


_HEADER_WORDS = frozenset({"statement", "query", "simple", "hash-threshold", "halt", "skipif", "onlyif",
                           "mode", "reset-server", "control", "include", "subtest", "user",
                           "kv-batch-size", "sleep", "copy"})


def _is_header(line: str) -> bool:
    s = line.lstrip()
    if s.startswith("#"):
        return True
    words = _strip_comment(line).split()
    return bool(words) and words[0] in _HEADER_WORDS


def _read_query_sql(L: _Lines, i: int):
    """A query's SQL, as Materialize's parser reads it: everything up to the next ``----``
    line, blank lines included.  A query with no ``----`` (results not checked, as
    SQLite's runner allows) ends at a blank line followed by the start of a record (or
    EOF), so it never swallows the records after it.  Returns (sql, next_index,
    separator_index_or_None)."""
    start = i
    n = L.n
    while i < n:
        ln = L.lines[i]
        if ln.rstrip() == "----":
            end = i
            while end > start and _blank(L.lines[end - 1]):
                end -= 1
            return "\n".join(L.lines[start:end]), i, i
        if _blank(ln):
            k = i + 1
            while k < n and _blank(L.lines[k]):
                k += 1
            if k >= n or _is_header(L.lines[k]):
                return "\n".join(L.lines[start:i]), i, None
            i = k
            continue
        i += 1
    return "\n".join(L.lines[start:i]), i, None


def _read_output(L: _Lines, sep: int, until_eof_marker: bool):
    """Lines after the ---- at ``sep`` until a blank line (or an EOF line in multiline
    mode). Returns (lines, span, next_index)."""
    i = sep + 1
    n = L.n
    start = L.ends[sep]
    if until_eof_marker:
        j = i
        while j < n and L.lines[j] != "EOF":
            j += 1
        lines = L.lines[i:j]
        end = L.starts[j] if j < n else len(L.text)
        return lines, (start, end), min(j + 1, n)
    j = i
    while j < n and not _blank(L.lines[j]):
        j += 1
    lines = L.lines[i:j]
    end = L.ends[j - 1] if j > i else start
    return lines, (start, end), j


def _newline_of(L: _Lines, i: int) -> str:
    raw_end = L.ends[i]
    body_end = L.starts[i] + len(L.lines[i])
    nl = L.text[body_end:raw_end]
    return nl or "\n"


def _parse_statement(L: _Lines, i: int, words: list, path: str, cond: tuple):
    lineno = i + 1
    line = L.lines[i]
    rec = Statement(path, lineno, cond)
    disp = words[1] if len(words) > 1 else ""
    if disp in ("ok", "OK"):
        rec.expect = "ok"
    elif disp == "count":
        rec.expect = "count"
        try:
            rec.count = int(words[2])
        except (IndexError, ValueError):
            raise ParseError(path, lineno, f"bad statement count: {line!r}") from None
        m = re.search(r"count\s+(\d+)", line)
        rec.count_span = (L.starts[i] + m.start(1), L.starts[i] + m.end(1))
    elif disp == "error":
        rec.expect = "error"
        col = line.index("error") + len("error")
        rec.error_regex, rec.pgcode, rec.error_span = _expected_error(line, col, L.starts[i])
    else:
        raise ParseError(path, lineno, f"invalid statement disposition: {line!r}")
    sql, j, sep = _read_sql(L, i + 1, stop_at_separator=(rec.expect == "error"))
    rec.sql = sql
    if sep is not None:
        # sqllogictest-rs: the expected error message follows a ---- line
        lines, _span, j = _read_output(L, sep, False)
        msg = "\n".join(lines).strip()
        if msg:
            rec.error_regex = re.escape(msg)
    if not sql.strip():
        raise ParseError(path, lineno, "statement without SQL")
    return rec, j


def _parse_query(L: _Lines, i: int, words: list, path: str, cond: tuple, mode: str):
    lineno = i + 1
    line = L.lines[i]
    rec = Query(path, lineno, cond, mode=mode, newline=_newline_of(L, i))
    if len(words) > 1 and words[1] == "error":
        rec.error = True
        col = line.index("error") + len("error")
        rec.error_regex, rec.pgcode, rec.error_span = _expected_error(line, col, L.starts[i])
        sql, j, sep = _read_sql(L, i + 1, stop_at_separator=True)
        rec.sql = sql
        if sep is not None:
            lines, _span, j = _read_output(L, sep, False)
            msg = "\n".join(lines).strip()
            # the message after ---- is the expected error (sqllogictest-rs) only when the
            # header names none; after a header regex, Materialize's runner reads the lines as
            # more SQL behind a `----` comment, which cannot change the error: dropped
            if msg and not rec.error_regex:
                rec.error_regex = re.escape(msg)
        return rec, j
    # Materialize's runner accepts a query with no type letters (the columns are not
    # counted and every value renders as text)
    types = words[1] if len(words) > 1 else ""
    bad = set(types) - _VALID_TYPES
    if bad:
        raise ParseError(path, lineno, f"bad type letters in {line!r}")
    rec.types = types
    if len(words) > 2:
        for opt in words[2].split(","):
            if opt in _SORTS:
                rec.sort = opt
            elif opt == "colnames":
                rec.colnames = []
            elif opt == "multiline":
                rec.multiline = True
            elif opt.startswith("partialsort"):
                rec.sort = "rowsort"
                break
            elif opt.startswith("retry"):
                pass
            else:
                raise ParseError(path, lineno, f"unrecognized query option {opt!r}")
    if len(words) > 3:
        rec.label = words[3]
    if rec.multiline and (rec.colnames is not None or rec.sort not in (None, "nosort")):
        raise ParseError(path, lineno, "multiline is incompatible with other options")
    sql, j, sep = _read_query_sql(L, i + 1)
    rec.sql = sql
    if not sql.strip():
        raise ParseError(path, lineno, "query without SQL")
    if sep is None:
        rec.has_results = False
        rec.sql_end = L.starts[j - 1] + len(L.lines[j - 1])
        return rec, j
    rec.sql_end = L.starts[sep - 1] + len(L.lines[sep - 1]) if sep > i + 1 else L.starts[sep]
    lines, span, j = _read_output(L, sep, rec.multiline)
    rec.output_span = span
    if rec.colnames is not None:
        if lines:
            rec.colnames = [c.replace("\u2420", " ") for c in lines[0].split()]
            lines = lines[1:]
    if rec.multiline:
        rec.expected_lines = lines
        return rec, j
    if len(lines) == 1:
        m = HASH_RE.match(lines[0])
        if m:
            rec.expected_hash = (int(m.group(1)), m.group(2).lower())
    rec.expected_lines = lines
    return rec, j


def _parse_simple(L: _Lines, i: int, words: list, path: str, cond: tuple):
    lineno = i + 1
    rec = Simple(path, lineno, cond, newline=_newline_of(L, i))
    if len(words) > 1:
        for opt in words[1].split(","):
            if opt.startswith("conn="):
                rec.conn = opt[5:]
            elif opt.startswith("user="):
                rec.user = opt[5:]
            elif opt == "multiline":
                rec.multiline = True
            else:
                raise ParseError(path, lineno, f"unrecognized simple option {opt!r}")
    if rec.user is not None and rec.conn is None:
        raise ParseError(path, lineno, "cannot set user without also setting conn")
    sql, j, sep = _read_query_sql(L, i + 1)
    rec.sql = sql
    if sep is None:
        raise ParseError(path, lineno, "simple block without ----")
    rec.sql_end = L.starts[sep - 1] + len(L.lines[sep - 1])
    if rec.multiline:
        lines, span, j = _read_output(L, sep, True)
        # the COMPLETE lines follow the EOF marker, up to a blank line
        k = j
        while k < L.n and not _blank(L.lines[k]):
            k += 1
        tail = L.lines[j:k]
        rec.expected_lines = ["\n".join(lines)] + tail
        rec.output_span = (span[0], L.ends[k - 1] if k > j else span[1])
        return rec, k
    lines, span, j = _read_output(L, sep, False)
    rec.expected_lines = lines
    rec.output_span = span
    return rec, j
