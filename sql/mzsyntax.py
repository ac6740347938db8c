"""Materialize-only statement syntax: the dataclasses the parser produces where pglast cannot.

Owns the node types for statements PostgreSQL's grammar lacks (``SUBSCRIBE``,
``CREATE DEFAULT INDEX``, ``SHOW TABLES``-style introspection, Materialize's ``EXPLAIN``,
``FETCH ... WITH (timeout)``, ``DECLARE ... CURSOR FOR SUBSCRIBE``) and the ``AsOf`` clause
that ``SELECT`` and ``SUBSCRIBE`` may carry; and ``WITH MUTUALLY RECURSIVE``, the one clause
handled by blanking its Materialize-only parts out of the text pglast sees
(``rewrite_mutually_recursive``) and recording them beside the statement.  Invariant: every embedded expression or query
is a pglast node whose ``location`` values are character offsets relative to the start of
the *statement* it belongs to (the parser guarantees this by parsing sub-texts padded to
their original offsets), so binding errors point at the right character.  Materialize's list
syntax (``int list``, ``LIST[...]``, ``LIST(subquery)``) is rewritten into pglast's grammar by
``sql.syntax_lists``, a sibling of this layer.  Deliberately not here: tokenizing and dispatch
(``sql.parse``) and any meaning (``planner``).
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
    move: bool = False              #: MOVE: skip the rows, return none
    refused_form: Optional[str] = None  #: a non-forward form as typed (the binder refuses it)


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
    schema: Optional[str] = None   #: ``FROM s`` / ``IN s`` of a listing (the schema's name)
    cluster: Optional[str] = None  #: ``IN CLUSTER c`` of a listing


@dataclass(frozen=True)
class Explain:
    """``EXPLAIN [RAW|DECORRELATED|OPTIMIZED|PHYSICAL] PLAN | TIMESTAMP [AS TEXT] FOR stmt``.

    ``stage``: ``raw``, ``decorrelated``, ``optimized`` (the default), ``physical``,
    ``timestamp``.  ``statement`` is the explained ``sql.parse.Statement``.
    """
    stage: str
    statement: Any          #: None when ``target`` is set
    format: str = "text"
    #: ``EXPLAIN [MATERIALIZED] VIEW name`` / ``EXPLAIN INDEX name``: (kind, name tuple)
    target: Optional[tuple] = None
    location: int = 0       #: of the target's name


# ---- WITH MUTUALLY RECURSIVE -------------------------------------------------
@dataclass(frozen=True)
class MutuallyRecursive:
    """``WITH MUTUALLY RECURSIVE [(RETURN | ERROR) AT RECURSION LIMIT n] name (col type, ...)
    AS (query), ...``.  The parser hands pglast the same text with ``MUTUALLY``, the option
    list and the column types blanked out (so pglast sees ``WITH RECURSIVE name (col, ...)``
    and every location stays put); this records what was blanked, keyed in
    ``Statement.mutually_recursive`` by the location of the ``WITH``.  ``column_types``:
    ``(cte name, (pglast TypeName, ...))`` per binding; ``limit`` None means no limit."""
    column_types: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    limit: Optional[int] = None
    return_at: bool = False

    def types_of(self, name: str):
        for n, ts in self.column_types:
            if n == name:
                return ts
        return None


def _parse_type(ctx, lo: int, hi: int):
    """The pglast ``TypeName`` of the type text ``ctx.ptext[lo:hi]``."""
    import pglast
    from pglast import ast
    from sql import errors
    text = ctx.ptext[lo:hi]
    try:
        head = "SELECT NULL::"  # padded so the TypeName's location is this text's offset
        raws = pglast.parse_sql(head + " " * max(0, lo - len(head)) + text)
        node = raws[0].stmt.targetList[0].val if len(raws) == 1 else None
    except Exception:  # noqa: BLE001 - pglast's ParseError and malformed trees alike
        node = None
    if not isinstance(node, ast.TypeCast):
        raise errors.error_for(errors.SYNTAX_ERROR, f'syntax error at or near "{text}"', position=ctx.pos(lo))
    return node.typeName


def rewrite_mutually_recursive(ctx) -> dict:
    """Find every ``WITH MUTUALLY RECURSIVE`` in ``ctx``'s tokens (``sql.parse._Ctx``: its
    ``word``, ``toks``, ``ptext``, ``pos``, ``matching_paren``, ``error_here``), blank the
    Materialize-only parts of ``ctx.ptext`` in place (same length) and drop their tokens;
    return ``{with location: MutuallyRecursive}``."""
    found: dict = {}
    drop: set = set()
    chars = list(ctx.ptext)

    def blank(lo_tok: int, hi_tok: int) -> None:  # tokens lo_tok..hi_tok inclusive
        for t in range(lo_tok, hi_tok + 1):
            drop.add(t)
        for c in range(ctx.toks[lo_tok].start, ctx.toks[hi_tok].end):
            chars[c] = " "

    def fail(at: int):
        ctx.i = at
        return ctx.error_here()

    n = len(ctx.toks)
    for j in range(n - 2):
        if not (ctx.word(j) == "WITH" and ctx.word(j + 1) == "MUTUALLY" and ctx.word(j + 2) == "RECURSIVE"):
            continue
        blank(j + 1, j + 1)
        k = j + 3
        limit, return_at = None, False
        if ctx.word(k) == "(":
            close = ctx.matching_paren(k)
            words = [ctx.word(x) for x in range(k + 1, close)]
            if len(words) != 5 or words[0] not in ("RETURN", "ERROR") or words[1:4] != ["AT", "RECURSION", "LIMIT"] \
                    or not words[4].startswith("\0") or not words[4][1:].isdigit():
                raise fail(k + 1)
            limit, return_at = int(words[4][1:]), words[0] == "RETURN"
            blank(k, close)
            k = close + 1
        ctes = []
        while True:
            if k >= n:
                raise fail(k)
            raw = ctx.ptext[ctx.toks[k].start:ctx.toks[k].end]
            name = raw[1:-1].replace('""', '"') if raw.startswith('"') else raw.lower()
            if ctx.word(k + 1) != "(":
                raise fail(k + 1)
            close, items = ctx.items_between(k + 1)
            types = []
            for start, x in items:  # "name type": the type is what follows the name
                if x - start < 2:
                    raise fail(x)
                types.append(_parse_type(ctx, ctx.toks[start + 1].start, ctx.toks[x - 1].end))
                blank(start + 1, x - 1)
            ctes.append((name, tuple(types)))
            if ctx.word(close + 1) != "AS" or ctx.word(close + 2) != "(":
                raise fail(close + 1)
            k = ctx.matching_paren(close + 2) + 1
            if ctx.word(k) != ",":
                break
            k += 1
        found[ctx.toks[j].start] = MutuallyRecursive(tuple(ctes), limit, return_at)
    if found:
        ctx.ptext = "".join(chars)
        ctx.toks = [t for x, t in enumerate(ctx.toks) if x not in drop]
    return found
# ---- end WITH MUTUALLY RECURSIVE ----
