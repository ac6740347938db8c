"""Materialize's source statements, parsed over ``sql.parse``'s token cursor.

Owns the grammar of ``CREATE SOURCE [IF NOT EXISTS] name [IN CLUSTER c] FROM LOAD GENERATOR
g [(option [, ...])] [FOR ALL TABLES | FOR TABLES (t [AS n], ...) | FOR SCHEMAS (s, ...)]
[EXPOSE PROGRESS AS name] [WITH (...)]``, the head of ``CREATE SOURCE ... FROM <connector>``
``CREATE SOURCE name [IN CLUSTER c] FROM WEBHOOK BODY FORMAT JSON | TEXT | BYTES [INCLUDE
HEADERS | INCLUDE HEADER 'h' AS col [BYTES], ...] [CHECK ([WITH (HEADERS [BYTES], BODY [AS a]
[BYTES], SECRET s [AS a] [BYTES], ...)] expr)]`` (``Webhook``; the CHECK expression kept as its
text, for the adapter to evaluate per request), the head of ``CREATE SOURCE ... FROM <connector>``
for the connectors mzlite refuses (KAFKA, MYSQL, SQL SERVER: the statement is recognised so the
planner can name what is unsupported instead of a syntax error), and ``DROP SOURCE [IF EXISTS] name [, ...] [CASCADE | RESTRICT]``.  Invariant:
option names are upper-case words joined by one space (``TICK INTERVAL``, ``AS OF``, ``UP
TO``) and values are Python values (str, int, float, bool), so the planner never re-reads
text.  Deliberately not here: which options a generator accepts or what they mean
(``planner.bind_sources``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

#: the connectors ``CREATE SOURCE ... FROM`` may name (multi-word ones joined by a space)
CONNECTORS = ("LOAD GENERATOR", "POSTGRES", "KAFKA", "MYSQL", "SQL SERVER", "WEBHOOK")


@dataclass(frozen=True)
class Webhook:
    """What ``FROM WEBHOOK`` says."""
    body_format: str                     #: JSON, JSON ARRAY, TEXT or BYTES
    include_headers: bool = False
    #: INCLUDE HEADERS (...) filter, as typed (refused by the planner)
    header_filter: bool = False
    #: ``INCLUDE HEADER 'h' AS col [BYTES]``: (header name, column name, bytes)
    header_columns: tuple[tuple[str, str, bool], ...] = ()
    #: CHECK's WITH items: (HEADERS | BODY | SECRET, secret name or None, alias or None, bytes)
    check_with: tuple[tuple[str, Optional[tuple[str, ...]], Optional[str], bool], ...] = ()
    check: Optional[str] = None          #: the CHECK expression's text
    check_location: int = 0


@dataclass(frozen=True)
class CreateSource:
    name: tuple[str, ...]
    connector: str                          #: one of ``CONNECTORS``
    generator: Optional[str] = None         #: LOAD GENERATOR's generator, upper case
    options: tuple[tuple[str, Any], ...] = ()
    for_all_tables: bool = False
    #: ``FOR TABLES (t [AS n], ...)``: (table name tuple, new name or None)
    for_tables: Optional[tuple[tuple[tuple[str, ...], Optional[str]], ...]] = None
    for_schemas: Optional[tuple[str, ...]] = None
    expose_progress: Optional[tuple[str, ...]] = None
    with_options: tuple[tuple[str, Any], ...] = ()
    in_cluster: Optional[str] = None
    if_not_exists: bool = False
    location: int = 0             #: of the source's name
    connector_location: int = 0   #: of the connector's first word
    connection: Optional[tuple[str, ...]] = None  #: FROM POSTGRES CONNECTION name
    webhook: Optional[Webhook] = None


@dataclass(frozen=True)
class DropSources:
    """``DROP SOURCE [IF EXISTS] name [, ...] [CASCADE | RESTRICT]``."""
    names: tuple[tuple[str, ...], ...]
    if_exists: bool = False
    cascade: bool = False
    location: int = 0


@dataclass(frozen=True)
class Refused:
    """A source statement mzlite recognises and refuses (0A000): ``what`` names it as typed."""
    what: str
    reason: str = ""


@dataclass(frozen=True)
class ShowSubsources:
    """``SHOW SUBSOURCES [ON source]``."""
    on: Optional[tuple[str, ...]] = None
    location: int = 0


_VALUE_END = (",", ")", "")


def _option_name(ctx) -> str:
    words = [ctx.ident(keywords=True).upper()]
    while ctx.peek() not in ("=", ",", ")", "(", "", "-") and not ctx.peek().startswith("\0"):
        if ctx.peek() in ("TRUE", "FALSE", "ON", "OFF"):
            break
        words.append(ctx.ident(keywords=True).upper())
    return " ".join(words)


def options(ctx) -> tuple:
    """``(name [=] value, ...)``; a value is a literal, a word or the text of a parenthesized
    list or of several words; no value means True."""
    ctx.expect("(")
    out = []
    if ctx.accept(")"):
        return ()
    while True:
        name = _option_name(ctx)
        ctx.accept("=")
        if ctx.peek() in _VALUE_END:
            val: Any = True
        elif ctx.peek() == "-" or ctx.peek() == "\0-":
            ctx.i += 1
            val = -ctx.literal()
        elif ctx.peek() == "(":  # a parenthesized list (TEXT COLUMNS (t.c, ...)): its text
            close = ctx.matching_paren(ctx.i)
            val = ctx.ptext[ctx.toks[ctx.i].start:ctx.toks[close].end]
            ctx.i = close + 1
        elif ctx.peek(1) in _VALUE_END:
            val = ctx.literal()
        else:  # a value of several words (RETAIN HISTORY = FOR '1h'): its text
            lo = ctx.loc()
            while ctx.peek() not in _VALUE_END:
                ctx.i += 1
            val = ctx.ptext[lo:ctx.toks[ctx.i - 1].end]
        out.append((name, val))
        if ctx.accept(")"):
            return tuple(out)
        ctx.expect(",")


def _end(ctx) -> None:
    if ctx.i < len(ctx.toks):
        raise ctx.error_here()


def _name_list(ctx, aliases: bool):
    ctx.expect("(")
    out = []
    while True:
        name = ctx.name()
        alias = None
        if aliases and ctx.accept("AS"):
            alias = ctx.ident()
        out.append((name, alias) if aliases else name[-1])
        if ctx.accept(")"):
            return tuple(out)
        ctx.expect(",")


def refused(ctx, what: str, reason: str = ""):
    """A recognised statement mzlite refuses: the planner raises 0A000 naming ``what``."""
    return ctx.stmt("refused", Refused(what, reason))


def parse_source_statement(ctx):
    """The statement at ``ctx`` (``sql.parse._Ctx``): ``CREATE SOURCE ...``, ``DROP SOURCE
    ...``, ``SHOW SUBSOURCES``, or one mzlite refuses by name (``ALTER SOURCE``, ``CREATE
    SUBSOURCE``, ``CREATE TABLE ... FROM SOURCE``, ``COMMENT ON SOURCE``)."""
    verb = ctx.peek()
    if verb == "SHOW":
        ctx.i = 2
        on, loc = None, 0
        if ctx.accept("ON"):
            loc = ctx.loc()
            on = ctx.name()
        _end(ctx)
        return ctx.stmt("show_subsources", ShowSubsources(on, loc))
    if verb == "ALTER":
        return refused(ctx, "ALTER SOURCE", "a source's options are fixed when it is created")
    if verb == "COMMENT":
        return refused(ctx, "COMMENT ON SOURCE")
    if verb == "CREATE" and ctx.peek(1) == "SUBSOURCE":
        return refused(ctx, "CREATE SUBSOURCE", "a source creates its subsources (FOR ALL TABLES / FOR TABLES)")
    if verb == "CREATE" and ctx.peek(1) == "TABLE":
        return refused(ctx, "CREATE TABLE ... FROM SOURCE", "use the subsources CREATE SOURCE ... FOR ALL TABLES "
                       "creates")
    ctx.i = 2
    if verb == "DROP":
        if_exists, names, cascade, loc = ctx.drop_names()
        _end(ctx)
        return ctx.stmt("drop_source", DropSources(names, if_exists, cascade, loc))
    if_not_exists = ctx.accept("IF", "NOT", "EXISTS")
    loc = ctx.loc()
    name = ctx.name()
    cluster = None
    if ctx.accept("IN", "CLUSTER"):
        cluster = ctx.ident(keywords=True)
    ctx.expect("FROM")
    cloc = ctx.loc()
    connector = next((c for c in CONNECTORS if ctx.accept(*c.split())), None)
    if connector is None:
        raise ctx.error_here()
    connection = None
    if connector == "WEBHOOK":
        hook = _webhook(ctx)
        _end(ctx)
        return ctx.stmt("create_source", CreateSource(name, connector, in_cluster=cluster,
                                                      if_not_exists=if_not_exists, location=loc,
                                                      connector_location=cloc, webhook=hook))
    if connector == "POSTGRES" and ctx.accept("CONNECTION"):
        connection = ctx.name()
        generator = None
        opts = options(ctx) if ctx.peek() == "(" else ()
    elif connector != "LOAD GENERATOR":  # the planner refuses it by name: the rest is not read
        return ctx.stmt("create_source", CreateSource(name, connector, in_cluster=cluster,
                                                      if_not_exists=if_not_exists, location=loc,
                                                      connector_location=cloc))
    else:
        words = [ctx.ident(keywords=True).upper()]  # KEY VALUE is two words
        while ctx.peek() not in ("(", "FOR", "EXPOSE", "WITH", "") and not ctx.peek().startswith("\0"):
            words.append(ctx.ident(keywords=True).upper())
        generator = " ".join(words)
        opts = options(ctx) if ctx.peek() == "(" else ()
    for_all = False
    for_tables = for_schemas = progress = None
    if ctx.accept("FOR", "ALL", "TABLES"):
        for_all = True
    elif ctx.accept("FOR", "TABLES"):
        for_tables = _name_list(ctx, aliases=True)
    elif ctx.accept("FOR", "SCHEMAS"):
        for_schemas = _name_list(ctx, aliases=False)
    if ctx.accept("EXPOSE", "PROGRESS", "AS"):
        progress = ctx.name()
    with_opts: tuple = ()
    if ctx.accept("WITH"):
        with_opts = options(ctx)
    _end(ctx)
    return ctx.stmt("create_source", CreateSource(name, connector, generator, opts, for_all, for_tables,
                                                  for_schemas, progress, with_opts, cluster, if_not_exists,
                                                  loc, cloc, connection))


def _string(ctx) -> str:
    if not ctx.peek().startswith("\0'"):
        raise ctx.error_here()
    return ctx.literal()


def _webhook(ctx) -> Webhook:
    """The rest of ``FROM WEBHOOK ...`` (after the word WEBHOOK)."""
    ctx.expect("BODY", "FORMAT")
    fmt = ctx.ident(keywords=True).upper()
    if fmt == "JSON" and ctx.accept("ARRAY"):
        fmt = "JSON ARRAY"
    include = header_filter = False
    columns = []
    while ctx.accept("INCLUDE"):
        if ctx.accept("HEADERS"):
            include = True
            if ctx.peek() == "(":
                header_filter = True
                ctx.i = ctx.matching_paren(ctx.i) + 1
        else:
            ctx.expect("HEADER")
            header = _string(ctx)
            ctx.expect("AS")
            col = ctx.ident()
            columns.append((header, col, ctx.accept("BYTES")))
    check_with: list = []
    check = None
    check_loc = 0
    if ctx.accept("CHECK"):
        if ctx.peek() != "(":
            raise ctx.error_here()
        close = ctx.matching_paren(ctx.i)
        ctx.i += 1
        if ctx.accept("WITH"):
            ctx.expect("(")
            while True:
                kind = ctx.ident(keywords=True).upper()
                secret = None
                if kind == "SECRET":
                    secret = ctx.name()
                elif kind not in ("HEADERS", "BODY"):
                    ctx.i -= 1
                    raise ctx.error_here()
                alias = ctx.ident() if ctx.accept("AS") else None
                check_with.append((kind, secret, alias, ctx.accept("BYTES")))
                if ctx.accept(")"):
                    break
                ctx.expect(",")
        if ctx.i >= close:
            raise ctx.error_here()
        check_loc = ctx.loc()
        check = ctx.ptext[check_loc:ctx.toks[close - 1].end]
        ctx.i = close + 1
    return Webhook(fmt, include, header_filter, tuple(columns), tuple(check_with), check, check_loc)
