"""Materialize's ALTER forms that PostgreSQL's grammar lacks, parsed over ``sql.parse``'s
token cursor.

Owns the grammar of ``ALTER <object> [IF EXISTS] name RENAME TO new`` for Materialize's own
objects (SOURCE, SINK, CONNECTION, SECRET), ``ALTER <object> [IF EXISTS] name SET CLUSTER c``
and ``ALTER <object> [IF EXISTS] name SET (option [=] value, ...) | RESET (option, ...)`` for
tables, views, materialized views, indexes, sources and sinks, and the node types they
produce.  Invariant: an object kind is the catalog's word (``materialized_view``, ``source``)
and an option name is upper-case words joined by one space (``RETAIN HISTORY``); a value is
a Python value (``FOR '1m'`` is the string ``1m``), so the planner never re-reads text.
Deliberately not here: which options an object takes or what they mean (the planner), and
PostgreSQL's ALTER forms (``ALTER TABLE t RENAME TO u``: pglast parses those).
Also here: ``WITH (RETAIN HISTORY [=] FOR 'd')`` on CREATE TABLE and CREATE INDEX
(``blank_retain_history``), kept on the statement and blanked out of the text pglast sees.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

#: ALTER's object words -> the catalog's kind
_KINDS = {("MATERIALIZED", "VIEW"): "materialized_view", ("VIEW",): "view", ("TABLE",): "table",
          ("INDEX",): "index", ("SOURCE",): "source", ("SINK",): "sink", ("CONNECTION",): "connection",
          ("SECRET",): "secret"}
#: the kinds whose RENAME PostgreSQL's grammar does not parse
_MZ_RENAME = frozenset({"source", "sink", "connection", "secret"})
#: ``ALTER SOURCE ... SET | RESET (...)``: the options Materialize's grammar knows there
SOURCE_OPTIONS = ("IGNORE KEYS", "TIMELINE", "TIMESTAMP INTERVAL", "RETAIN HISTORY")


@dataclass(frozen=True)
class AlterRename:
    kind: str
    name: tuple[str, ...]
    new_name: str
    if_exists: bool = False
    location: int = 0


@dataclass(frozen=True)
class AlterSetCluster:
    kind: str
    name: tuple[str, ...]
    cluster: str
    if_exists: bool = False
    location: int = 0


@dataclass(frozen=True)
class AlterOptions:
    """``SET (...)`` (``options``: (NAME, value)) or ``RESET (...)`` (``reset``: names)."""
    kind: str
    name: tuple[str, ...]
    options: tuple[tuple[str, Any], ...] = ()
    reset: tuple[str, ...] = ()
    if_exists: bool = False
    location: int = 0


def _head(ctx) -> Optional[tuple[str, int]]:
    """``(kind, index of the first token after the object words)`` of ``ALTER <object>``."""
    for words, kind in _KINDS.items():
        if all(ctx.word(1 + k) == w for k, w in enumerate(words)):
            return kind, 1 + len(words)
    return None


def _after_name(ctx, j: int) -> int:
    if ctx.word(j) == "IF" and ctx.word(j + 1) == "EXISTS":
        j += 2
    j += 1
    while ctx.word(j) == ".":
        j += 2
    return j


def is_materialize_alter(ctx) -> bool:
    """Whether the ALTER statement at ``ctx`` is one of this module's forms."""
    head = _head(ctx)
    if head is None:
        return False
    kind, j = head
    j = _after_name(ctx, j)
    w, w1 = ctx.word(j), ctx.word(j + 1)
    if w == "RENAME" and w1 == "TO":
        return kind in _MZ_RENAME
    return (w == "SET" and w1 in ("CLUSTER", "(")) or (w == "RESET" and w1 == "(")


def parse_alter(ctx):
    kind, j = _head(ctx)
    ctx.i = j
    if_exists = ctx.accept("IF", "EXISTS")
    loc = ctx.loc()
    name = ctx.name()
    if ctx.accept("RENAME", "TO"):
        new = ctx.ident()
        _end(ctx)
        return ctx.stmt("alter_rename", AlterRename(kind, name, new, if_exists, loc))
    if ctx.accept("SET", "CLUSTER"):
        cluster = ctx.ident(keywords=True)
        _end(ctx)
        return ctx.stmt("alter_set_cluster", AlterSetCluster(kind, name, cluster, if_exists, loc))
    reset = ctx.accept("RESET")
    if not reset:
        ctx.expect("SET")
    ctx.expect("(")
    options, names = [], []
    while True:
        opt = _option_name(ctx, kind)
        if reset:
            names.append(opt)
        else:
            ctx.accept("=")
            options.append((opt, _value(ctx)))
        if ctx.accept(")"):
            break
        ctx.expect(",")
    _end(ctx)
    return ctx.stmt("alter_options", AlterOptions(kind, name, tuple(options), tuple(names), if_exists, loc))


def _option_name(ctx, kind: str) -> str:
    if kind == "source":  # Materialize's grammar lists the options it takes here
        opt = next((o for o in SOURCE_OPTIONS if ctx.accept(*o.split())), None)
        if opt is None:
            from sql import errors
            raise errors.error_for(errors.SYNTAX_ERROR, "Expected one of IGNORE or TIMELINE or TIMESTAMP or RETAIN, "
                                   f"found {ctx.peek().lstrip(chr(0)) or 'EOF'}", position=ctx.pos(ctx.loc()))
        return opt
    words = [ctx.ident(keywords=True).upper()]
    while ctx.peek() not in (",", ")", "=", "") and not ctx.peek().startswith("\0") and ctx.peek() != "FOR":
        words.append(ctx.ident(keywords=True).upper())
    return " ".join(words)


def _value(ctx):
    """An option's value: ``FOR 'text'`` (RETAIN HISTORY's) is the text; else a literal."""
    if ctx.accept("FOR"):
        v = ctx.literal()
        if not isinstance(v, str):
            ctx.i -= 1
            raise ctx.error_here()
        return v
    if ctx.peek() in (",", ")"):
        return True
    return ctx.literal()


def retain_history_at(ctx, lo: int, hi: int) -> str:
    """The text of the option ``RETAIN HISTORY [=] FOR 'd'`` in tokens ``lo..hi`` (exclusive);
    42601 when it has another shape."""
    words = [ctx.word(k) for k in range(lo, hi)]
    if words[2:3] == ["="]:
        words = words[:2] + words[3:]
    if len(words) != 4 or words[2] != "FOR" or not words[3].startswith("\0'"):
        ctx.i = min(hi, lo + 2)
        raise ctx.error_here()
    return words[3][2:-1].replace("''", "'")


def blank_retain_history(ctx) -> None:
    """``CREATE TABLE t (...) WITH (RETAIN HISTORY [=] FOR 'd')`` and ``CREATE INDEX ... (keys)
    WITH (RETAIN HISTORY ...)``: keep the text on ``ctx.retain_history`` and blank the clause out
    of what pglast sees.  A WITH clause of other options is left to pglast."""
    if ctx.word(1) not in ("TABLE", "INDEX"):
        return
    j = 2
    while j < len(ctx.toks):
        w = ctx.word(j)
        if w == "(":
            j = ctx.matching_paren(j) + 1
            continue
        if w == "AS":  # CREATE TABLE ... AS: no options of Materialize's there
            return
        if w == "WITH" and ctx.word(j + 1) == "(" and ctx.word(j + 2) == "RETAIN":
            close, items = ctx.items_between(j + 1)
            if len(items) != 1:
                ctx.i = items[1][0] if len(items) > 1 else close
                raise ctx.error_here()
            ctx.retain_history = retain_history_at(ctx, *items[0])
            ctx._blank_tokens(j, close)
            return
        j += 1


def _end(ctx) -> None:
    if ctx.i < len(ctx.toks):
        raise ctx.error_here()
