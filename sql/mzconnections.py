"""Materialize's secret and connection statements, parsed over ``sql.parse``'s token cursor.

Owns the grammar of ``CREATE SECRET [IF NOT EXISTS] name AS value``, ``ALTER SECRET [IF
EXISTS] name AS value``, ``CREATE CONNECTION [IF NOT EXISTS] name TO <type> (option [, ...])
[WITH (...)]``, ``VALIDATE CONNECTION name`` and ``DROP SECRET | CONNECTION [IF EXISTS] name
[, ...] [CASCADE | RESTRICT]``, and the node types they produce.  Invariants: a secret's value
is a pglast expression node (positions relative to the statement) and never part of any other
field; a connection option is ``(NAME, value)`` with the name's words upper case and joined by
one space, and a value that is ``SECRET name`` is ``SecretRef(name)``.  Deliberately not here:
which connection types and options exist (``planner.bind_connections``), secret storage.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: connection types, as ``CREATE CONNECTION ... TO`` spells them
CONNECTION_TYPES = ("POSTGRES", "KAFKA", "CONFLUENT SCHEMA REGISTRY", "AWS PRIVATELINK", "AWS", "SSH TUNNEL",
                    "MYSQL", "SQL SERVER")
#: the option names a connection may carry (longest first, so ``SSL CERTIFICATE AUTHORITY`` wins)
OPTION_NAMES = tuple(sorted((
    "HOST", "PORT", "USER", "PASSWORD", "DATABASE", "SSL MODE", "SSL CERTIFICATE AUTHORITY", "SSL CERTIFICATE",
    "SSL KEY", "SSH TUNNEL", "AWS PRIVATELINK", "BROKER", "BROKERS", "URL", "USERNAME", "SASL MECHANISMS",
    "SASL USERNAME", "SASL PASSWORD", "SECURITY PROTOCOL", "REGION", "ACCESS KEY ID", "SECRET ACCESS KEY",
    "ROLE ARN", "SERVICE NAME", "AVAILABILITY ZONES", "ENDPOINT", "PROGRESS TOPIC"), key=lambda n: -len(n.split())))


@dataclass(frozen=True)
class SecretRef:
    """``SECRET name`` as an option value."""
    name: tuple[str, ...]


@dataclass(frozen=True)
class CreateSecret:
    name: tuple[str, ...]
    value: Any                     #: a pglast expression node
    if_not_exists: bool = False
    location: int = 0              #: of the name
    value_location: int = 0


@dataclass(frozen=True)
class AlterSecret:
    name: tuple[str, ...]
    value: Any
    if_exists: bool = False
    location: int = 0
    value_location: int = 0


@dataclass(frozen=True)
class CreateConnection:
    name: tuple[str, ...]
    type: str                                  #: one of ``CONNECTION_TYPES``
    options: tuple[tuple[str, Any], ...] = ()
    with_options: tuple[tuple[str, Any], ...] = ()
    if_not_exists: bool = False
    location: int = 0
    type_location: int = 0


@dataclass(frozen=True)
class ValidateConnection:
    name: tuple[str, ...]
    location: int = 0


@dataclass(frozen=True)
class DropObjects:
    """``DROP SECRET | CONNECTION``: ``kind`` is ``secret`` or ``connection``."""
    kind: str
    names: tuple[tuple[str, ...], ...]
    if_exists: bool = False
    cascade: bool = False
    location: int = 0


def _end(ctx) -> None:
    if ctx.i < len(ctx.toks):
        raise ctx.error_here()


def _value_to_end(ctx, lo_tok: int):
    """The pglast expression from token ``lo_tok`` to the end of the statement."""
    if lo_tok >= len(ctx.toks):
        ctx.i = lo_tok
        raise ctx.error_here()
    lo = ctx.toks[lo_tok].start
    node = ctx.parse_expr(lo, len(ctx.ptext))
    ctx.i = len(ctx.toks)
    return node, lo


def _connection_options(ctx) -> tuple:
    ctx.expect("(")
    out = []
    if ctx.accept(")"):
        return ()
    while True:
        name = next((n for n in OPTION_NAMES if ctx.accept(*n.split())), None)
        if name is None:
            raise ctx.error_here()
        ctx.accept("=")
        if ctx.accept("SECRET"):
            val: Any = SecretRef(ctx.name())
        elif ctx.peek() in (",", ")"):
            val = True
        elif ctx.peek().startswith("\0") and not ctx.peek().startswith('\0"'):
            val = ctx.literal()
        else:
            val = ".".join(ctx.name())  # an identifier (a host, a user, ...)
        out.append((name, val))
        if ctx.accept(")"):
            return tuple(out)
        ctx.expect(",")


def parse_connection_statement(ctx):
    """The statement at ``ctx`` (``sql.parse._Ctx``): CREATE/ALTER/DROP SECRET, CREATE/DROP
    CONNECTION or VALIDATE CONNECTION."""
    verb, what = ctx.peek(), ctx.peek(1)
    ctx.i = 2
    if verb == "DROP":
        if_exists, names, cascade, loc = ctx.drop_names()
        _end(ctx)
        return ctx.stmt(f"drop_{what.lower()}", DropObjects(what.lower(), names, if_exists, cascade, loc))
    if verb == "VALIDATE":
        loc = ctx.loc()
        name = ctx.name()
        _end(ctx)
        return ctx.stmt("validate_connection", ValidateConnection(name, loc))
    if what == "SECRET":
        flag = ctx.accept("IF", "NOT", "EXISTS") if verb == "CREATE" else ctx.accept("IF", "EXISTS")
        loc = ctx.loc()
        name = ctx.name()
        ctx.expect("AS")
        value, vloc = _value_to_end(ctx, ctx.i)
        if verb == "CREATE":
            return ctx.stmt("create_secret", CreateSecret(name, value, flag, loc, vloc))
        return ctx.stmt("alter_secret", AlterSecret(name, value, flag, loc, vloc))
    if verb != "CREATE":
        raise ctx.error_here()
    if_not_exists = ctx.accept("IF", "NOT", "EXISTS")
    loc = ctx.loc()
    name = ctx.name()
    ctx.expect("TO")
    tloc = ctx.loc()
    ctype = next((t for t in CONNECTION_TYPES if ctx.accept(*t.split())), None)
    if ctype is None:
        raise ctx.error_here()
    opts: tuple = ()
    with_opts: tuple = ()
    if ctype == "POSTGRES":
        opts = _connection_options(ctx)
        if ctx.accept("WITH"):
            from sql.mzsources import options
            with_opts = options(ctx)
        _end(ctx)
    else:  # refused by the planner, by name: the rest is not read
        ctx.i = len(ctx.toks)
    return ctx.stmt("create_connection", CreateConnection(name, ctype, opts, with_opts, if_not_exists, loc, tloc))
