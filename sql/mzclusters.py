"""Materialize's cluster statements, parsed over ``sql.parse``'s token cursor.

Owns the grammar of ``CREATE CLUSTER name [(] option [, ...] [)]`` (options ``SIZE [=]
's'``, ``REPLICATION FACTOR [=] n``, ``REPLICAS (r (SIZE 's'), ...)``, ``MANAGED``,
``INTROSPECTION ...``, ...), ``CREATE CLUSTER REPLICA c.r option, ...``, ``DROP CLUSTER
[IF EXISTS] c [, ...] [CASCADE | RESTRICT]``, ``DROP CLUSTER REPLICA [IF EXISTS] c.r [,
...]`` and ``ALTER CLUSTER c (RENAME TO d | SET (option, ...) | RESET (name, ...))``, and
the node types they produce.  Invariant: option names are lower-cased words joined by one
space (``replication factor``) and values are Python values (str, int, bool, or a nested
tuple of options for ``REPLICAS``), so the planner never re-reads text.
Deliberately not here: what a cluster is (``planner.catalog.Cluster``) or which options
mean anything.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class CreateCluster:
    name: str
    options: tuple[tuple[str, Any], ...] = ()
    #: ``REPLICAS (r1 (SIZE '1'), ...)``: (replica name, options)
    replicas: Optional[tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]] = None


@dataclass(frozen=True)
class CreateClusterReplica:
    cluster: str
    name: str
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class DropCluster:
    names: tuple[str, ...]
    if_exists: bool = False
    cascade: bool = False


@dataclass(frozen=True)
class DropClusterReplica:
    replicas: tuple[tuple[str, str], ...]  #: (cluster, replica)
    if_exists: bool = False


@dataclass(frozen=True)
class AlterCluster:
    name: str
    rename_to: Optional[str] = None
    options: tuple[tuple[str, Any], ...] = ()   #: SET (...)
    reset: tuple[str, ...] = ()                 #: RESET (...)
    if_exists: bool = False


_VALUE_END = (",", ")", "")


def _option_name(ctx) -> str:
    words = [ctx.ident()]
    while ctx.peek() not in ("=", ",", ")", "(", "") and not ctx.peek().startswith("\0"):
        if ctx.peek() in ("TRUE", "FALSE", "ON", "OFF"):
            break
        words.append(ctx.ident())
    return " ".join(words)


def _value(ctx):
    if ctx.peek() == "(":  # a parenthesized list: REPLICAS (...) or INTROSPECTION ... (...)
        return _replicas(ctx)
    if ctx.peek().startswith("\0'") or ctx.peek().startswith("\0") or ctx.peek() in ("TRUE", "FALSE", "ON", "OFF"):
        return ctx.literal()
    return ctx.ident()


def _replicas(ctx):
    ctx.expect("(")
    out = []
    if ctx.accept(")"):
        return ()
    while True:
        name = ctx.ident()
        opts: tuple = ()
        if ctx.peek() == "(":
            opts = options(ctx, parenthesized=True)
        out.append((name, opts))
        if ctx.accept(")"):
            return tuple(out)
        ctx.expect(",")


def options(ctx, *, parenthesized: Optional[bool] = None) -> tuple:
    """``[(] name [=] value, ... [)]``; names lower-cased and joined by one space."""
    paren = ctx.accept("(") if parenthesized is None else (ctx.expect("(") is None)
    out = []
    if paren and ctx.accept(")"):
        return ()
    while ctx.i < len(ctx.toks) and ctx.peek() != ")":
        name = _option_name(ctx).lower()
        ctx.accept("=")
        if ctx.peek() in _VALUE_END:
            val: Any = True
        else:
            val = _value(ctx)
        out.append((name, val))
        if not ctx.accept(","):
            break
    if paren:
        ctx.expect(")")
    return tuple(out)


def _replica_name(ctx) -> tuple[str, str]:
    cluster = ctx.ident()
    ctx.expect(".")
    return cluster, ctx.ident()


def _end(ctx) -> None:
    if ctx.i < len(ctx.toks):
        raise ctx.error_here()


def parse_cluster_statement(ctx):
    """The statement at ``ctx`` (``sql.parse._Ctx``), which starts ``CREATE|DROP|ALTER CLUSTER``."""
    verb = ctx.peek()
    ctx.i = 2
    replica = ctx.accept("REPLICA")
    if verb == "CREATE" and replica:
        cluster, name = _replica_name(ctx)
        node = CreateClusterReplica(cluster, name, options(ctx))
        _end(ctx)
        return ctx.stmt("create_cluster_replica", node)
    if verb == "CREATE":
        name = ctx.ident()
        opts = options(ctx)
        replicas = dict(opts).get("replicas")
        node = CreateCluster(name, tuple((k, v) for k, v in opts if k != "replicas"),
                             None if replicas is None else tuple(replicas))
        _end(ctx)
        return ctx.stmt("create_cluster", node)
    if verb == "DROP":
        if_exists = ctx.accept("IF", "EXISTS")
        names = []
        while True:
            names.append(_replica_name(ctx) if replica else ctx.ident())
            if not ctx.accept(","):
                break
        cascade = ctx.accept("CASCADE")
        if not cascade:
            ctx.accept("RESTRICT")
        _end(ctx)
        if replica:
            return ctx.stmt("drop_cluster_replica", DropClusterReplica(tuple(names), if_exists))
        return ctx.stmt("drop_cluster", DropCluster(tuple(names), if_exists, cascade))
    # ALTER CLUSTER
    if replica:
        raise ctx.error_here()
    if_exists = ctx.accept("IF", "EXISTS")
    name = ctx.ident()
    if ctx.accept("RENAME", "TO"):
        node = AlterCluster(name, rename_to=ctx.ident(), if_exists=if_exists)
    elif ctx.accept("SET"):
        node = AlterCluster(name, options=options(ctx, parenthesized=True), if_exists=if_exists)
    elif ctx.accept("RESET"):
        ctx.expect("(")
        names = [_option_name(ctx).lower()]
        while ctx.accept(","):
            names.append(_option_name(ctx).lower())
        ctx.expect(")")
        node = AlterCluster(name, reset=tuple(names), if_exists=if_exists)
    else:
        raise ctx.error_here()
    _end(ctx)
    return ctx.stmt("alter_cluster", node)
