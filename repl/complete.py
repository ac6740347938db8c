"""The statement-completeness rule: where SQL statements end in a stream of text.

Owns: a small lexer that walks SQL text the way psql's input scanner does, so that a ``;``
ends a statement only outside single-quoted strings (including ``E'...'`` with backslash
escapes), double-quoted identifiers, ``--`` and (nested) ``/* */`` comments, dollar-quoted
strings (``$$...$$``, ``$tag$...$tag$``) and parentheses.  ``split_statements`` cuts a
script into statements (with their offsets); ``is_complete`` says whether the shell should
submit its buffer.

Invariant: concatenating the pieces returned by ``split_statements`` (from each offset)
gives back the original text up to the last terminator; nothing inside a quote, comment or
dollar quote is ever treated as a terminator.

Deliberately not here: parsing (the engine does that, and reports syntax errors), psql
variable interpolation, running backslash commands (``meta``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Piece", "scan", "split_statements", "split_script", "is_complete", "is_blank",
           "is_meta_command", "open_state"]

_DOLLAR_TAG = re.compile(r"\$([A-Za-z_\u0080-\uffff][A-Za-z_0-9\u0080-\uffff]*)?\$")


@dataclass(frozen=True)
class Piece:
    """One statement cut from a script: its text (terminator excluded, surrounding
    whitespace stripped), its 0-based start offset in the script, and whether it was
    terminated by ``;`` (the last piece of a script may not be)."""

    text: str
    offset: int
    terminated: bool
    meta: bool = False
    #: a statement ended by a backslash command instead of ``;`` (psql's ``\\g``, ``\\gx``,
    #: ``\\watch 1``): that command's line, which says how to run it; empty otherwise
    via: str = ""


def scan(text: str, start: int = 0, first_only: bool = False,
         backslash: bool = False) -> tuple[list[int], str | None]:
    """Scan ``text`` from ``start``; return the offsets of every top-level ``;`` (only the
    first with ``first_only``) and the state at the end: None when outside every
    quote/comment/parenthesis, otherwise a short name of what is still open ("'", '"',
    "/*", "$tag$", "(").  ``backslash``: a backslash outside quotes and comments (where
    psql starts a backslash command, inside parentheses too) ends the scan like a ``;``
    does with ``first_only``."""
    ends: list[int] = []
    i = start
    n = len(text)
    depth = 0
    while i < n:
        c = text[i]
        if c == "'":
            # E'...' strings take backslash escapes; standard strings only ''.
            escapes = i > 0 and text[i - 1] in "eE" and (i < 2 or not _is_ident_char(text[i - 2]))
            i += 1
            while True:
                if i >= n:
                    return ends, "'"
                ch = text[i]
                if escapes and ch == "\\":
                    i += 2
                    continue
                if ch == "'":
                    if i + 1 < n and text[i + 1] == "'":
                        i += 2
                        continue
                    i += 1
                    break
                i += 1
        elif c == '"':
            j = text.find('"', i + 1)
            while j != -1 and j + 1 < n and text[j + 1] == '"':
                j = text.find('"', j + 2)
            if j == -1:
                return ends, '"'
            i = j + 1
        elif c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            if j == -1:
                return ends, None if depth == 0 else "("
            i = j + 1
        elif c == "/" and text.startswith("/*", i):
            level = 1
            i += 2
            while level:
                if i >= n:
                    return ends, "/*"
                if text.startswith("/*", i):
                    level += 1
                    i += 2
                elif text.startswith("*/", i):
                    level -= 1
                    i += 2
                else:
                    i += 1
        elif c == "$" and not (i > 0 and _is_ident_char(text[i - 1])):
            m = _DOLLAR_TAG.match(text, i)
            if m is None:
                i += 1
                continue
            tag = m.group(0)
            j = text.find(tag, m.end())
            if j == -1:
                return ends, tag
            i = j + len(tag)
        elif c == "(":
            depth += 1
            i += 1
        elif c == ")":
            depth = max(0, depth - 1)
            i += 1
        elif c == ";" and depth == 0:
            ends.append(i)
            if first_only:
                return ends, None
            i += 1
        elif c == "\\" and backslash:
            ends.append(i)
            return ends, None
        else:
            i += 1
    return ends, ("(" if depth else None)


def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def split_statements(text: str) -> list[Piece]:
    """Cut a script into statements.  Empty statements (``;;``, comment-only tails) are
    dropped; an unterminated tail that holds anything but whitespace and comments is
    returned with ``terminated=False``."""
    pieces: list[Piece] = []
    ends, _state = scan(text)
    start = 0
    for end in ends + [len(text)]:
        chunk = text[start:end]
        stripped = chunk.lstrip()
        if not is_blank(stripped):
            off = start + (len(chunk) - len(stripped))
            pieces.append(Piece(stripped.rstrip(), off, end < len(text)))
        start = end + 1
    return pieces


#: backslash commands that end the query buffer and run it (psql's; the others run with the
#: buffer kept for the statement to go on)
QUERY_ENDING = ("g", "gx", "watch")


def _meta_name(line: str) -> str:
    return line[1:].split(None, 1)[0].rstrip(";") if len(line) > 1 else ""


def split_script(text: str) -> list[Piece]:
    """Cut a script that may also hold backslash commands, as psql reads its input: a
    backslash outside quotes and comments starts a backslash command that runs to the end
    of the line (``Piece.meta``).  Where SQL precedes it, ``\\g``, ``\\gx`` and ``\\watch``
    end the statement and say how it runs (``Piece.via``); any other command runs at once
    and the statement goes on after it (psql keeps its query buffer), so
    ``SELECT 1\n\\x\n;`` is ``\\x``, then ``SELECT 1``.  Pieces are in the order they run."""
    pieces: list[Piece] = []
    pos, n = 0, len(text)
    held, held_at = "", 0  # SQL kept across a backslash command that did not end it
    while pos < n:
        if not held:
            pos = _skip_blank(text, pos)
            if pos >= n:
                break
        ends, _ = scan(text, pos, first_only=True, backslash=True)
        end = ends[0] if ends else n
        chunk = text[pos:end]
        start = held_at if held else pos + (len(chunk) - len(chunk.lstrip()))
        sql = (held + chunk) if held else chunk
        if end < n and text[end] == "\\":
            j = text.find("\n", end)
            j = n if j == -1 else j
            line = text[end:j].rstrip()
            if not is_blank(sql) and _meta_name(line) in QUERY_ENDING:
                pieces.append(Piece(sql.strip(), start, True, via=line))
                held = ""
            else:
                pieces.append(Piece(line, end, True, meta=True))
                held, held_at = (sql + "\n", start) if not is_blank(sql) else ("", 0)
            pos = j + 1
            continue
        if not is_blank(sql):
            pieces.append(Piece(sql.strip(), start, bool(ends)))
        held = ""
        pos = end + 1
    if held:
        pieces.append(Piece(held.strip(), held_at, False))
    return pieces


def _skip_blank(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j == -1 else j + 1
        elif text.startswith("/*", i):
            level, i = 1, i + 2
            while level and i < n:
                if text.startswith("/*", i):
                    level, i = level + 1, i + 2
                elif text.startswith("*/", i):
                    level, i = level - 1, i + 2
                else:
                    i += 1
        else:
            return i
    return i


def is_blank(text: str) -> bool:
    """True when ``text`` holds only whitespace and comments."""
    return _skip_blank(text, 0) >= len(text)


def is_meta_command(text: str) -> bool:
    """A buffer whose first non-blank character is a backslash is a meta command."""
    return text.lstrip().startswith("\\")


QUIT_WORDS = ("quit", "exit", "\\q", "help")


def is_complete(text: str) -> bool:
    """Should the shell submit this buffer?  Yes when every piece of it is either a
    backslash command line or a statement terminated by a top-level ``;`` or a
    query-ending backslash command (trailing whitespace and comments allowed), when its
    last line is a backslash command (psql runs it at once; the shell keeps the unfinished
    statement in the buffer: ``shell.handle``), or when it is a lone
    ``quit``/``exit``/``help``."""
    if text.strip().lower() in QUIT_WORDS:
        return True
    pieces = split_script(text)
    if not pieces:
        return False
    if all(p.meta or p.terminated for p in pieces):
        return True
    return any(p.meta for p in pieces) and text.rstrip().rsplit("\n", 1)[-1].lstrip().startswith("\\")


def open_state(text: str) -> str | None:
    """What is still open at the end of ``text`` (for the continuation prompt): "'", '"',
    "/*", a dollar tag, "(", or None."""
    return scan(text)[1]
