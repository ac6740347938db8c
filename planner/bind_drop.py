"""The shared part of binding ``DROP <kind> [IF EXISTS] name [, ...] [CASCADE]`` for the
catalog kinds: tables, views, materialized views and indexes (``bind_stmt._drop``, from
PostgreSQL's parse tree) and the kinds Materialize added (secrets, connections, sources).

Owns ``drop_items``: resolving each name, the 'does not exist' / 'is not a <kind>' errors,
and the ``DropPlan`` with the dependents the drop takes, in drop order and without repeats.
Invariant: a name that does not resolve is an error unless ``IF EXISTS`` (then it is listed
as missing, for the notice). It does not decide what a kind's drop takes: the caller's
``order`` does (sources take their progress collection without CASCADE), nor any check beyond
the kind (the caller's ``check``)."""

from __future__ import annotations

from typing import Callable, Optional

from planner import plans as P
from sql import errors


def drop_items(b, stmt, node, kind: str, undefined: str,
               check: Optional[Callable] = None, order: Optional[Callable] = None,
               word: Optional[str] = None) -> P.DropPlan:
    """The ``DropPlan`` of ``node`` (``names``, ``if_exists``, ``cascade``, ``location``) for
    catalog items of ``kind``; ``undefined`` is the SQLSTATE of a missing name; ``check(item)``
    may raise further errors; ``order(item, cascade, position)`` gives the ids the drop of
    ``item`` takes (default: the catalog's ``check_drop``); ``word`` is the kind as messages
    spell it (default ``kind``: ``materialized_view`` is "materialized view")."""
    word = word or kind
    names, ids, missing, drop_ids = [], [], [], []
    position = stmt.position(node.location)
    for parts in node.names:
        name = ".".join(parts)
        names.append(name)
        item = b.catalog.try_resolve(parts)
        if item is None:
            if node.if_exists:
                missing.append(name)
                continue
            raise b.error(undefined, f'{word} "{name}" does not exist', node.location)
        if item.kind != kind:
            raise b.error(errors.WRONG_OBJECT_TYPE, f'"{item.name}" is not {article(word)} {word}',
                          node.location)
        if check is not None:
            check(item)
        ids.append(item.id)
        taken = (order(item, node.cascade, position) if order is not None
                 else b.catalog.check_drop(item.id, node.cascade, position))
        for d in taken:
            if d not in drop_ids:
                drop_ids.append(d)
    return P.DropPlan(kind, tuple(names), node.if_exists, node.cascade, tuple(ids), tuple(drop_ids),
                      tuple(missing))


def article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"
