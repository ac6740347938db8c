"""Materialize-only statement syntax: the dataclasses the parser produces where pglast cannot.

Owns the node types for statements PostgreSQL's grammar lacks (``SUBSCRIBE``,
``CREATE DEFAULT INDEX``, ``SHOW TABLES``-style introspection, Materialize's ``EXPLAIN``,
``FETCH ... WITH (timeout)``, ``DECLARE ... CURSOR FOR SUBSCRIBE``) and the ``AsOf`` clause
that ``SELECT`` and ``SUBSCRIBE`` may carry.  Invariant: every embedded expression or query
is a pglast node whose ``location`` values are character offsets relative to the start of
the *statement* it belongs to (the parser guarantees this by parsing sub-texts padded to
their original offsets), so binding errors point at the right character.  Deliberately not
here: tokenizing and dispatch (``sql.parse``) and any meaning (``planner``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class AsOf:
    """``AS OF [AT LEAST] expr``: ``expr`` is a pglast expression node."""
    expr: Any
    at_least: bool = False


@dataclass(frozen=True)
class CreateDefaultIndex:
    """``CREATE DEFAULT INDEX [IF NOT EXISTS] [IN CLUSTER c] ON obj``; ``on`` is a name tuple."""
    on: tuple[str, ...]
    in_cluster: Optional[str] = None
    if_not_exists: bool = False
    location: int = 0  #: of the object name


@dataclass(frozen=True)
class Subscribe:
    """``SUBSCRIBE [TO] obj | (query) [WITH (...)] [AS OF ...] [UP TO expr]``.

    Exactly one of ``relation`` (a name tuple) and ``query`` (a pglast SelectStmt) is set.
    ``options`` maps lower-cased option names (``snapshot``, ``progress``) to Python values
    (``True`` when the option has no value).
    """
    relation: Optional[tuple[str, ...]] = None
    query: Any = None
    options: tuple[tuple[str, Any], ...] = ()
    as_of: Optional[AsOf] = None
    up_to: Any = None
    location: int = 0  #: of the relation name or the query
    #: ``ENVELOPE UPSERT (KEY (k, ...))``: the key column names (None: the default envelope)
    envelope_upsert: Optional[tuple[str, ...]] = None
    #: ``WITHIN TIMESTAMP ORDER BY c [ASC|DESC] [NULLS FIRST|LAST], ...``: ``(name, desc, nulls)``
    #: with ``nulls`` one of ``None``, ``"first"``, ``"last"``
    within_timestamp_order_by: tuple[tuple[str, bool, Optional[str]], ...] = ()

    def option(self, name: str, default=None):
        for k, v in self.options:
            if k == name:
                return v
        return default


@dataclass(frozen=True)
class DeclareSubscribe:
    """``DECLARE name CURSOR FOR SUBSCRIBE ...``."""
    name: str
    subscribe: Subscribe


@dataclass(frozen=True)
class Fetch:
    """``FETCH [FORWARD] [n | ALL] [FROM | IN] cursor [WITH (timeout = '1s')]``; count None = ALL."""
    cursor: str
    count: Optional[int] = 1
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Show:
    """``SHOW TABLES | VIEWS | MATERIALIZED VIEWS | INDEXES [ON|FROM|IN x] | COLUMNS FROM x |
    CREATE (TABLE|VIEW|MATERIALIZED VIEW|INDEX) x | OBJECTS | ALL | <variable>``.

    ``what``: ``tables``, ``views``, ``materialized_views``, ``indexes``, ``columns``,
    ``create``, ``objects``, ``all``, ``variable``.  ``on``: an object name tuple (for
    ``indexes``/``columns``/``create``); ``create_kind`` for SHOW CREATE; ``name`` for a
    variable; ``like`` the pattern of a trailing ``LIKE 'pat'``.
    """
    what: str
    on: Optional[tuple[str, ...]] = None
    create_kind: Optional[str] = None
    name: Optional[str] = None
    like: Optional[str] = None
    location: int = 0  #: of ``on`` when present


@dataclass(frozen=True)
class Explain:
    """``EXPLAIN [RAW|DECORRELATED|OPTIMIZED|PHYSICAL] PLAN | TIMESTAMP [AS TEXT] FOR stmt``.

    ``stage``: ``raw``, ``decorrelated``, ``optimized`` (the default), ``physical``,
    ``timestamp``.  ``statement`` is the explained ``sql.parse.Statement``.
    """
    stage: str
    statement: Any
    format: str = "text"
