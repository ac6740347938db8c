"""Statement texts for a remote connection: ``?`` to ``$n``, splitting, what may be sent.

Owns ``translate_placeholders`` (``?`` placeholders rewritten to ``$1``, ``$2``, ... by
PostgreSQL's scanner, so a ``?`` in a string, identifier or comment, or jsonb's ``?`` operator,
stays; with the rewrites' offsets to map an error position back), ``split_statements``, the
parameter-count check (the embedded engine's 08P01 and 42P02), what ``cursor.execute`` refuses
before sending (COPY with STDIN/STDOUT, a SUBSCRIBE among other statements), and ``prepared``:
all of it for one text, computed once per text (``TEXT_CACHE`` texts are remembered).
Invariant: pure functions of the text (the caches hold only what the text determines).
Deliberately not here: sending anything (``mzlite.remote_cursor``).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional

from sql import errors as _errors
from sql.errors import NotSupportedError, ProgrammingError

__all__ = ["translate_placeholders", "split_statements", "prepared", "TEXT_CACHE"]


def _tokens(text: str):
    from pglast.parser import ParseError, scan
    try:
        return scan(text)
    except ParseError as e:
        loc = e.args[1] if len(e.args) > 1 else None
        raise _errors.error_for(_errors.SYNTAX_ERROR, e.args[0], position=None if loc is None else loc + 1) from None


def translate_placeholders(text: str) -> tuple[str, tuple]:
    """``text`` with its ``?`` placeholders rewritten to ``$1``, ``$2``, ... (not jsonb's ``?``
    operator, nor a ``?`` in a string, identifier or comment; nothing when ``$n`` is used), and
    the ``(rewritten offset, extra characters)`` of each rewrite for mapping positions back."""
    text, inserts, _ = placeholders(text)
    return text, inserts


#: statement texts whose scan is remembered (a program runs the same few texts again and again:
#: scanning one costs about as much as psycopg's own work for a point read)
TEXT_CACHE = 512


@lru_cache(maxsize=TEXT_CACHE)
def placeholders(text: str):
    """``translate_placeholders``' two results, and ``{n: 1-based position of the first $n or
    n-th ?}`` (the placeholders the text uses; shared by every caller: read it, never change it)."""
    if "?" not in text and "$" not in text:
        return text, (), {}
    from sql.parse import jsonb_question_mark
    toks = [t for t in _tokens(text) if t.name not in ("SQL_COMMENT", "C_COMMENT")]
    dollars = {}
    for t in toks:
        if t.name == "PARAM":
            dollars.setdefault(int(text[t.start + 1:t.end + 1]), t.start + 1)
    if dollars or "?" not in text:
        return text, (), dollars
    rel = [_Tok(t.start, t.end + 1, t.name, t.kind) for t in toks]
    parts, inserts, used, last, n, shift = [], [], {}, 0, 0, 0
    for i, t in enumerate(rel):
        if t.name == "Op" and text[t.start:t.end] == "?" and not jsonb_question_mark(rel, i):
            n += 1
            rep = f"${n}"
            used[n] = t.start + 1
            parts.append(text[last:t.start])
            parts.append(rep)
            inserts.append((t.start + shift, len(rep) - 1))
            shift += len(rep) - 1
            last = t.end
    if not n:
        return text, (), {}
    parts.append(text[last:])
    return "".join(parts), tuple(inserts), used


def check_count(used: dict, given: int) -> None:
    """The embedded engine's answers to a parameter count that does not fit the text."""
    if given == len(used) and given in used:  # $1..$given, the common case
        return
    n = max(used, default=0)
    if given > n:
        raise ProgrammingError(f"the statement uses {n} parameter{'s' if n != 1 else ''} but {given} "
                               f"were given", sqlstate="08P01")
    missing = sorted(k for k in used if k > given)
    if missing:
        raise _errors.error_for("42P02", f"there is no parameter ${missing[0]}", position=used[missing[0]])


class _Tok:
    __slots__ = ("start", "end", "name", "kind")

    def __init__(self, start, end, name, kind):
        self.start, self.end, self.name, self.kind = start, end, name, kind


def original_position(position: Optional[int], inserts: tuple) -> Optional[int]:
    if position is None or not inserts:
        return position
    at0, shift = position - 1, 0
    for at, extra in inserts:
        if at < at0:
            shift += min(extra, at0 - at)
    return position - shift


def split_statements(text: str) -> list[str]:
    """The ``;``-separated statements of ``text`` (split by PostgreSQL's scanner, so a ``;`` in
    a string or comment does not split), each without its ``;``; empty ones left out."""
    out, start = [], 0
    for t in _tokens(text):
        if t.name == "ASCII_59":
            piece = text[start:t.start].strip()
            if piece:
                out.append(piece)
            start = t.end + 1
    piece = text[start:].strip()
    if piece:
        out.append(piece)
    return out


@lru_cache(maxsize=TEXT_CACHE)
def statement_words(text: str) -> list[tuple[str, list[str]]]:
    """For each statement, its first keyword and its keywords (upper case)."""
    out, words = [], []
    for t in _tokens(text):
        if t.name == "ASCII_59":
            if words:
                out.append((words[0], words))
            words = []
        elif t.name not in ("SQL_COMMENT", "C_COMMENT"):
            words.append(text[t.start:t.end + 1].upper())
    if words:
        out.append((words[0], words))
    return out


def check_sendable(text: str) -> None:
    """Refuse, before anything is sent, the statements a remote cursor cannot run through
    ``execute`` (the server would switch the connection into a mode psycopg's execute leaves)."""
    if "copy" not in text.lower() and "subscribe" not in text.lower():
        return
    for first, words in statement_words(text):
        if first == "COPY" and ("STDIN" in words or "STDOUT" in words):
            where = "STDIN" if "STDIN" in words else "STDOUT"
            raise NotSupportedError(
                f"COPY {'FROM' if where == 'STDIN' else 'TO'} {where} needs a caller that sends or receives the "
                f"data: use cursor.copy(sql) (psycopg's shape), or COPY with a file name", sqlstate="0A000")
        if first == "SUBSCRIBE" and len(statement_words(text)) > 1:
            raise NotSupportedError("a SUBSCRIBE runs by itself on a remote connection, not among other "
                                    "statements", sqlstate="0A000")


@lru_cache(maxsize=TEXT_CACHE)
def prepared(sql: str) -> tuple:
    """What ``RemoteCursor.execute`` needs of a statement text, computed once per text:
    ``(text to send, inserts, placeholders used, SUBSCRIBE's keywords or None)``; raises (every
    time) for what cannot be sent (``check_sendable``)."""
    check_sendable(sql)
    text, inserts, used = placeholders(sql)
    subscribe = None
    if "subscribe" in sql.lower():
        words = statement_words(sql)
        if len(words) == 1 and words[0][0] == "SUBSCRIBE":
            subscribe = tuple(words[0][1])
    return text, inserts, used, subscribe
