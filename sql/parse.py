"""SQL text -> statements: pglast (PostgreSQL's own grammar) plus a thin Materialize layer.

Owns splitting a text into statements, classifying each (``Statement.kind``), and parsing
the Materialize-only syntax (see ``sql.mzsyntax``) by hand over pglast's scanner tokens.
Invariant: every node location inside a ``Statement`` is a character offset relative to
``Statement``'s coordinate origin, and ``Statement.position(location)`` turns it into the
1-based character position in the *whole* text given to ``parse_statements`` (as
PostgreSQL reports positions for a multi-statement query string); sub-texts (AS OF
expressions, SUBSCRIBE queries, EXPLAIN targets) are parsed padded with blanks to their
original offsets to keep that true.  ``?`` placeholders are rewritten to ``$n`` and the
position mapping undoes the shift.
Deliberately not here: any meaning (names, types, plans live in ``planner``).
About 750 lines: the hand parsers share one token cursor (``_Ctx``), and splitting them
from it would only add indirection; the larger Materialize forms live beside it
(``sql.mzclusters``, ``sql.mzsources``, ``sql.mzconnections``, ``sql.mztypes``, ``sql.mzviews``, ``sql.mzrewrites``,
``sql.syntax_lists``, ``sql.syntax_maps``, ``sql.mzsyntax``), and
SHOW/EXPLAIN are the next to move out if it grows again.

Kinds: select, insert, update, delete, create_table, create_table_as, create_view,
create_materialized_view, create_index, create_default_index, drop, subscribe, declare,
fetch, close, show, explain, alter_system_set, alter_system_reset, set, reset, begin,
commit, rollback, create_source, drop_source, create_secret, alter_secret, drop_secret,
create_connection, validate_connection, drop_connection, create_named_type; anything else pglast accepts gets the snake_case of its node name.

Over 600 lines: the Materialize statements pglast does not know are parsed here by one
token cursor (``_Ctx``); the larger families are in ``sql.mzsyntax``, ``sql.mzclusters`` and
``sql.mzrewrites``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

import pglast
from pglast import ast
from pglast.parser import ParseError, scan

from sql import errors
from sql.statement_names import materialize_only_form
from sql.mzsyntax import (AsOf, CreateDefaultIndex, DeclareSubscribe, Explain, Fetch, Show,
                          Subscribe, rewrite_mutually_recursive)


@dataclass(eq=False)
class Statement:
    kind: str
    text: str           #: this statement's own text (as the user wrote it)
    offset: int         #: character offset of ``text`` in the parsed string
    node: Any           #: the pglast node, or a ``sql.mzsyntax`` dataclass
    as_of: Optional[AsOf] = None  #: a SELECT's trailing ``AS OF [AT LEAST] expr``
    param_count: int = 0          #: highest ``$n`` (or number of ``?``) used
    if_not_exists: bool = False   #: ``CREATE VIEW IF NOT EXISTS`` (Materialize syntax pglast lacks)
    origin: int = 0     #: character offset in the parsed string of node location 0
    #: ``(rewritten_location, extra_chars)`` for each ``?`` rewritten to ``$n``
    inserts: tuple[tuple[int, int], ...] = ()
    #: ``WITH MUTUALLY RECURSIVE`` clauses by the location of their ``WITH`` (``sql.mzsyntax``)
    mutually_recursive: dict = field(default_factory=dict)
    #: ``IN CLUSTER c`` of CREATE INDEX / MATERIALIZED VIEW (blanked out of the text pglast sees)
    in_cluster: Optional[str] = None
    #: ``CREATE OR REPLACE MATERIALIZED VIEW`` (Materialize syntax pglast lacks)
    or_replace: bool = False
    #: ``(SHOW ...)`` used as a table (Materialize's grammar): the ``Show`` nodes, in order; the
    #: text pglast sees names the k-th as the relation ``SHOW_SUBQUERY + str(k)`` (quoted)
    show_subqueries: tuple = ()
    #: ``WITH (RETAIN HISTORY [=] FOR 'd')`` of CREATE TABLE | INDEX | MATERIALIZED VIEW (blanked out)
    retain_history: Optional[str] = None

    def position(self, location: Optional[int]) -> Optional[int]:
        """1-based character position in the parsed string of a node ``location`` (or None)."""
        if location is None or location < 0:
            return None
        shift = 0
        for at, extra in self.inserts:
            if at < location:
                shift += min(extra, location - at)
        return self.origin + location - shift + 1

    def __repr__(self) -> str:
        return f"Statement({self.kind!r}, {self.text!r})"


# ------------------------------------------------------------------ entry point


def parse_statements(text: str) -> list[Statement]:
    """Split ``text`` into statements and parse each; raises ``sql.errors`` 42601."""
    toks = _scan(text, 0)
    out: list[Statement] = []
    piece: list = []
    for t in toks:
        if t.name == "ASCII_59":
            if piece:
                out.append(_parse_piece(text, piece))
            piece = []
        elif t.name not in ("SQL_COMMENT", "C_COMMENT"):
            piece.append(t)
    if piece:
        out.append(_parse_piece(text, piece))
    return out


def parse_one(text: str) -> Statement:
    stmts = parse_statements(text)
    if len(stmts) != 1:
        raise errors.error_for(errors.SYNTAX_ERROR, f"expected exactly one statement, got {len(stmts)}")
    return stmts[0]


def _syntax(msg: str, pos: Optional[int]) -> errors.Error:
    return errors.error_for(errors.SYNTAX_ERROR, msg, position=pos)


def _scan(text: str, origin: int):
    try:
        return scan(text)
    except ParseError as e:
        loc = e.args[1] if len(e.args) > 1 else None
        raise _syntax(e.args[0], None if loc is None else origin + loc + 1) from None


def _parse_piece(source: str, toks) -> Statement:
    start, end = toks[0].start, toks[-1].end + 1
    text = source[start:end]
    rel = [_Tok(t.start - start, t.end - start + 1, t.name, t.kind) for t in toks]
    params = [t for t in rel if t.name == "PARAM"]
    qmarks = [t for i, t in enumerate(rel) if t.name == "Op" and text[t.start:t.end] == "?"
              and not jsonb_question_mark(rel, i)]
    inserts: list[tuple[int, int]] = []
    ptext = text
    nparams = max((int(text[t.start + 1:t.end]) for t in params), default=0)
    if qmarks and not params:
        parts, last, n = [], 0, 0
        for t in qmarks:
            n += 1
            rep = f"${n}"
            parts.append(text[last:t.start])
            inserts.append((t.start + sum(e for _, e in inserts), len(rep) - 1))
            parts.append(rep)
            last = t.end
        parts.append(text[last:])
        ptext = "".join(parts)
        nparams = n
        rel = [_Tok(t.start, t.end + 1, t.name, t.kind)
               for t in _scan(ptext, start) if t.name not in ("SQL_COMMENT", "C_COMMENT")]
    ctx = _Ctx(source, start, text, ptext, rel, tuple(inserts))
    try:
        stmt = ctx.parse()
    except errors.Error as e:
        form = materialize_only_form(text) if e.sqlstate == errors.SYNTAX_ERROR else ""
        if not form:
            raise
        raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, f"{form} is not supported",
                               position=start + 1) from None
    stmt.param_count = nparams
    return stmt


# ---- jsonb's ``?`` operator versus the ``?`` placeholder
_OPERAND_END = frozenset({"IDENT", "UIDENT", "SCONST", "USCONST", "ICONST", "FCONST", "BCONST", "XCONST",
                          "ASCII_41", "ASCII_93", "NULL_P", "TRUE_P", "FALSE_P"})


def jsonb_question_mark(rel, i: int) -> bool:
    """Whether the ``?`` token ``rel[i]`` is jsonb's key-exists operator rather than a
    placeholder: it follows an operand (a name, a constant, ``NULL``/``TRUE``/``FALSE``, ``)``
    or ``]``), or a
    non-reserved keyword used as a column name (``value ? 'k'``) with a string constant next."""
    if i == 0:
        return False
    prev = rel[i - 1]
    if prev.name in _OPERAND_END:
        return True
    nxt = rel[i + 1] if i + 1 < len(rel) else None
    return prev.kind == "UNRESERVED_KEYWORD" and nxt is not None and nxt.name == "SCONST"
# ---- end


#: the relation name a ``(SHOW ...)`` subquery stands as in the text pglast parses
SHOW_SUBQUERY = "\x01show"


@dataclass(frozen=True)
class _Tok:
    start: int
    end: int  #: exclusive
    name: str
    kind: str


_CTRL = {"ASCII_40": "(", "ASCII_41": ")", "ASCII_44": ",", "ASCII_46": ".", "ASCII_61": "="}


class _Ctx:
    """One statement's text and tokens; hand parsers for the Materialize-only forms."""

    def __init__(self, source, origin, text, ptext, toks, inserts):
        self.source, self.origin, self.text, self.ptext = source, origin, text, ptext
        self.toks, self.inserts = toks, inserts
        self.i = 0
        self.wmr: dict = {}  #: WITH MUTUALLY RECURSIVE clauses found (rewrite_mutually_recursive)
        self.shows: list = []  #: ``(SHOW ...)`` subqueries found (``_show_subqueries``)
        self.retain_history: Optional[str] = None  #: CREATE's RETAIN HISTORY (``sql.mzalter``)

    # ---- token helpers
    def word(self, i: int) -> str:
        if i >= len(self.toks):
            return ""
        t = self.toks[i]
        if t.name in _CTRL:
            return _CTRL[t.name]
        if t.name in ("SCONST", "ICONST", "FCONST", "PARAM", "Op") or self.ptext[t.start] == '"':
            return "\0" + self.ptext[t.start:t.end]
        return self.ptext[t.start:t.end].upper()

    def peek(self, k: int = 0) -> str:
        return self.word(self.i + k)

    def accept(self, *words: str) -> bool:
        for k, w in enumerate(words):
            if self.word(self.i + k) != w:
                return False
        self.i += len(words)
        return True

    def error_here(self) -> errors.Error:
        if self.i >= len(self.toks):
            return _syntax("syntax error at end of input", self.pos(len(self.ptext)))
        t = self.toks[self.i]
        return _syntax(f'syntax error at or near "{self.ptext[t.start:t.end]}"', self.pos(t.start))

    def expect(self, *words: str) -> None:
        for w in words:
            if not self.accept(w):
                raise self.error_here()

    def pos(self, loc: int) -> int:
        return self.stmt("", None).position(loc)

    def loc(self) -> int:
        return self.toks[self.i].start if self.i < len(self.toks) else len(self.ptext)

    def ident(self, keywords: bool = False) -> str:
        """An identifier (folded unless quoted); ``keywords``: reserved words too, as
        Materialize's grammar allows where a name cannot be confused (``IN CLUSTER default``)."""
        if self.i >= len(self.toks):
            raise self.error_here()
        t = self.toks[self.i]
        raw = self.ptext[t.start:t.end]
        if raw.startswith('"'):
            self.i += 1
            return raw[1:-1].replace('""', '"')
        if t.name in _CTRL or t.name in ("SCONST", "ICONST", "FCONST", "PARAM", "Op") \
                or (t.kind == "RESERVED_KEYWORD" and not keywords):
            raise self.error_here()
        self.i += 1
        return raw.lower()

    def name(self) -> tuple[str, ...]:
        parts = [self.ident()]
        while self.accept("."):
            parts.append(self.ident())
        return tuple(parts)

    def drop_names(self) -> tuple[bool, tuple[tuple[str, ...], ...], bool, int]:
        """The rest of ``DROP <kind> [IF EXISTS] name [, ...] [CASCADE | RESTRICT]`` after the
        kind's words: ``(if_exists, names, cascade, location of the first name)``."""
        if_exists = self.accept("IF", "EXISTS")
        loc = self.loc()
        names = [self.name()]
        while self.accept(","):
            names.append(self.name())
        cascade = self.accept("CASCADE")
        if not cascade:
            self.accept("RESTRICT")
        return if_exists, tuple(names), cascade, loc

    def literal(self):
        t = self.toks[self.i] if self.i < len(self.toks) else None
        if t is None:
            raise self.error_here()
        raw = self.ptext[t.start:t.end]
        self.i += 1
        if t.name == "SCONST":
            return raw[1:-1].replace("''", "'")
        if t.name == "ICONST":
            return int(raw)
        if t.name == "FCONST":
            return float(raw)
        up = raw.upper()
        if up in ("TRUE", "ON"):
            return True
        if up in ("FALSE", "OFF"):
            return False
        if t.name in _CTRL:
            self.i -= 1
            raise self.error_here()
        return raw.lower()

    def options(self) -> tuple[tuple[str, Any], ...]:
        """``( name [=] value, ... )`` after WITH."""
        self.expect("(")
        out = []
        while True:
            name = self.ident()
            if self.peek() in (",", ")"):
                val: Any = True
            else:
                self.accept("=")
                val = self.literal()
            out.append((name, val))
            if self.accept(")"):
                return tuple(out)
            self.expect(",")

    def matching_paren(self, i: int) -> int:
        depth = 0
        for j in range(i, len(self.toks)):
            w = self.word(j)
            if w == "(":
                depth += 1
            elif w == ")":
                depth -= 1
                if depth == 0:
                    return j
        self.i = len(self.toks)
        raise self.error_here()

    def items_between(self, open_idx: int) -> tuple[int, list]:
        """The comma-separated items inside the parentheses opened at token ``open_idx``:
        ``(close index, [(first token, delimiter token), ...])`` at nesting depth 0."""
        close = self.matching_paren(open_idx)
        items, start, depth = [], open_idx + 1, 0
        for k in range(open_idx + 1, close + 1):
            w = self.word(k)
            if w == "(":
                depth += 1
            elif w == ")" and depth > 0:
                depth -= 1
            elif depth == 0 and w in (",", ")"):
                items.append((start, k))
                start = k + 1
        return close, items

    def stmt(self, kind: str, node, **kw) -> Statement:
        return Statement(kind, self.text, self.origin, node, origin=self.origin, inserts=self.inserts,
                         mutually_recursive=self.wmr, show_subqueries=tuple(self.shows), **kw)

    # ---- sub-parses, padded so locations stay relative to this statement
    def parse_pg(self, lo: int, hi: int):
        padded = " " * lo + self.ptext[lo:hi]
        try:
            raws = pglast.parse_sql(padded)
        except ParseError as e:
            loc = e.args[1] if len(e.args) > 1 else len(padded)
            raise _syntax(e.args[0], self.pos(loc)) from None
        if len(raws) != 1:
            raise _syntax("syntax error at or near \";\"", self.pos(lo))
        return raws[0].stmt

    def parse_expr(self, lo: int, hi: int):
        if lo < 7:
            raise self.error_here()
        padded = "SELECT" + " " * (lo - 6) + self.ptext[lo:hi]
        try:
            raws = pglast.parse_sql(padded)
        except ParseError as e:
            loc = e.args[1] if len(e.args) > 1 else len(padded)
            raise _syntax(e.args[0], self.pos(loc)) from None
        sel = raws[0].stmt if len(raws) == 1 else None
        if not isinstance(sel, ast.SelectStmt) or sel.fromClause or len(sel.targetList or ()) != 1 \
                or sel.targetList[0].name:
            raise _syntax("syntax error in expression", self.pos(lo))
        return sel.targetList[0].val

    def expr_until(self, *stops: tuple[str, ...]):
        """Parse the expression from the current token up to the first depth-0 ``stops`` sequence."""
        lo = self.loc()
        depth, j = 0, self.i
        while j < len(self.toks):
            w = self.word(j)
            if w == "(":
                depth += 1
            elif w == ")":
                depth -= 1
            elif depth == 0 and any(all(self.word(j + k) == s for k, s in enumerate(seq)) for seq in stops):
                break
            j += 1
        if j == self.i:
            raise self.error_here()
        hi = self.toks[j].start if j < len(self.toks) else len(self.ptext)
        node = self.parse_expr(lo, hi)
        self.i = j
        return node

    # ---- dispatch
    def parse(self) -> Statement:
        if any(self.word(j) == "LIST" for j in range(len(self.toks))):  # Materialize lists (sql.syntax_lists)
            from sql.syntax_lists import rewrite_lists
            rewrite_lists(self)
        if any(self.word(j) == "MAP" for j in range(len(self.toks))):  # map[text=>int] (sql.syntax_maps)
            from sql.syntax_maps import rewrite_maps
            rewrite_maps(self)
        if any(self.word(j) == "MUTUALLY" for j in range(len(self.toks))):
            self.wmr.update(rewrite_mutually_recursive(self))
        if any(self.word(j) in ("[", "LEFT", "RIGHT") for j in range(len(self.toks))):
            from sql.mzrewrites import rewrite  # Materialize's wider expression grammar
            rewrite(self)
        w0, w1 = self.peek(0), self.peek(1)
        if w0 != "SHOW" and any(a.name == "ASCII_40" and b.name == "SHOW" for a, b in zip(self.toks, self.toks[1:])):
            from sql.mzshow import replace_show_subqueries
            replace_show_subqueries(self)
        if w0 == "ALTER":  # Materialize's RENAME of its own objects, SET CLUSTER, SET/RESET (...)
            from sql.mzalter import is_materialize_alter, parse_alter
            if is_materialize_alter(self):
                return parse_alter(self)
        if (w1 == "SOURCE" and w0 in ("CREATE", "DROP", "ALTER")) or (w0, w1) in (("SHOW", "SUBSOURCES"),
                                                                              ("CREATE", "SUBSOURCE")) \
                or (w0, w1, self.peek(2)) == ("COMMENT", "ON", "SOURCE") or self._create_table_from_source():
            from sql.mzsources import parse_source_statement
            return parse_source_statement(self)
        if w0 == "SUBSCRIBE":
            return self.stmt("subscribe", self.subscribe())
        if w0 == "DECLARE" and self._declare_subscribe_at() is not None:
            self.i = 1
            name = self.ident()
            self.i = self._declare_subscribe_at()
            return self.stmt("declare", DeclareSubscribe(name, self.subscribe()))
        if w0 in ("FETCH", "MOVE"):
            return self.stmt("fetch", self.fetch())
        if w0 == "SHOW":
            return self.stmt("show", self.show())
        if w0 == "EXPLAIN":
            return self.stmt("explain", self.explain())
        if (w1 == "SECRET" and w0 in ("CREATE", "ALTER", "DROP")) or \
                (w1 == "CONNECTION" and w0 in ("CREATE", "DROP", "VALIDATE")):
            from sql.mzconnections import parse_connection_statement
            return parse_connection_statement(self)
        if w1 == "CLUSTER" and w0 in ("CREATE", "DROP", "ALTER"):
            from sql.mzclusters import parse_cluster_statement
            return parse_cluster_statement(self)
        if w0 == "CREATE" and w1 == "TYPE":  # CREATE TYPE ... AS LIST|MAP (sql.mztypes)
            from sql.mztypes import is_create_named_type, parse_create_named_type
            if is_create_named_type(self):
                return parse_create_named_type(self)
        if w0 == "CREATE" and w1 == "DEFAULT" and self.peek(2) == "INDEX":
            return self.stmt("create_default_index", self.default_index())
        if w0 == "CREATE":
            cluster = self._blank_in_cluster()
            or_replace = False
            if [self.peek(k) for k in (1, 2, 3)] == ["OR", "REPLACE", "MATERIALIZED"]:
                self._blank_tokens(1, 2)
                or_replace = True
            from sql.mzalter import blank_retain_history
            from sql.mzviews import blank_materialized_view_options
            blank_materialized_view_options(self)
            blank_retain_history(self)
            stmt = self._create()
            stmt.in_cluster, stmt.or_replace, stmt.retain_history = cluster, or_replace, self.retain_history
            return stmt
        return self.pglast_statement()

    def _create_table_from_source(self) -> bool:
        """``CREATE TABLE name FROM SOURCE ...`` (Materialize's source-fed tables)."""
        if self.peek(0) != "CREATE" or self.peek(1) != "TABLE":
            return False
        j = 2
        while self.word(j) not in ("", "(", "AS", "FROM"):
            j += 1
        return self.word(j) == "FROM" and self.word(j + 1) == "SOURCE"

    def _create(self) -> Statement:
        w1 = self.peek(1)
        j = 1 + (self.peek(1) == "OR" and self.peek(2) == "REPLACE") * 2
        if self.word(j) in ("TEMP", "TEMPORARY"):
            j += 1
        if self.word(j) == "VIEW" and [self.word(j + k) for k in (1, 2, 3)] == ["IF", "NOT", "EXISTS"]:
            # Materialize's CREATE VIEW IF NOT EXISTS (PostgreSQL lacks it): blank it out
            self._blank_tokens(j + 1, j + 3)
            stmt = self.pglast_statement()
            stmt.if_not_exists = True
            return stmt
        if (w1 == "INDEX" or (w1 == "UNIQUE" and self.peek(2) == "INDEX")) and not self.inserts:
            self._parenthesize_index_exprs()
        if w1 == "INDEX":  # CREATE INDEX fk ON order (...): Materialize's keyword rules (sql.mzrewrites)
            from sql.mzrewrites import quote_reserved_index_relation
            quote_reserved_index_relation(self)
        return self.pglast_statement()

    def _parenthesize_index_exprs(self) -> None:
        """Materialize accepts ``CREATE INDEX ON t (a + 1)``; PostgreSQL wants ``((a + 1))``."""
        j = next((k for k in range(len(self.toks)) if self.word(k) == "ON"), None)
        if j is None:
            return
        j += 1
        while j < len(self.toks) and self.word(j) not in ("(", ""):
            j += 1
        if j >= len(self.toks):
            return
        _, elems = self.items_between(j)
        wraps = []
        for a, b in elems:
            toks = self.toks[a:b]
            if not toks:
                continue
            simple = len(toks) == 1 or (self.word(a) == "(" and self.matching_paren(a) == b - 1)
            # trailing ASC/DESC/NULLS FIRST|LAST stay outside the parentheses
            end = b
            while end > a and self.word(end - 1) in ("ASC", "DESC", "FIRST", "LAST", "NULLS"):
                end -= 1
            if not simple and end - a > 1:
                wraps.append((self.toks[a].start, self.toks[end - 1].end))
        if not wraps:
            return
        out, last, inserts, added = [], 0, [], 0
        for lo, hi in wraps:
            out.append(self.ptext[last:lo])
            inserts.append((lo + added, 1))
            out.append("(" + self.ptext[lo:hi] + ")")
            added += 1
            inserts.append((hi + added, 1))
            added += 1
            last = hi
        out.append(self.ptext[last:])
        self.ptext = "".join(out)
        self.inserts = tuple(inserts)

    def _declare_subscribe_at(self) -> Optional[int]:
        for j in range(len(self.toks) - 1):
            if self.word(j) == "FOR" and self.word(j + 1) == "SUBSCRIBE":
                return j + 1
        return None

    def _blank_tokens(self, lo_tok: int, hi_tok: int) -> None:
        """Blank tokens ``lo_tok..hi_tok`` (inclusive) out of the text pglast sees."""
        lo, hi = self.toks[lo_tok].start, self.toks[hi_tok].end
        self.ptext = self.ptext[:lo] + " " * (hi - lo) + self.ptext[hi:]
        del self.toks[lo_tok:hi_tok + 1]

    def _blank_in_cluster(self) -> Optional[str]:
        """Materialize's ``IN CLUSTER c`` on CREATE INDEX / MATERIALIZED VIEW (after the
        view's column list, if any): blank it out and return the cluster's name."""
        mv = "MATERIALIZED" in (self.word(1), self.word(3))  # its column list may come first
        j = -1
        while j + 1 < len(self.toks) - 2:
            j += 1
            if mv and self.word(j) == "(":
                j = self.matching_paren(j)
                continue
            if self.word(j) in ("AS", "("):
                break
            if self.word(j) == "IN" and self.word(j + 1) == "CLUSTER":
                self.i = j + 2
                name = self.ident(keywords=True)
                self.i = 0
                self._blank_tokens(j, j + 2)
                return name
        return None

    def pglast_statement(self) -> Statement:
        n = len(self.toks)
        tail = [self.word(j) for j in range(max(0, n - 4), n)]
        if (tail[-2:] == ["AS", "OF"] or tail[-4:] == ["AS", "OF", "AT", "LEAST"]) and self._top_level_from():
            # PostgreSQL's grammar reads a trailing ``AS OF`` after a FROM item as the table
            # alias "of"; Materialize's reads the AS OF clause, and wants its timestamp
            # (``SELECT 1 AS of`` stays a column alias in both)
            self.i = n
            raise _syntax("Expected a timestamp value after 'AS OF', found EOF", self.pos(len(self.ptext)))
        try:
            node = self.parse_pg(0, len(self.ptext))
            return self.classify(node)
        except errors.Error as first:
            cut = self._trailing_as_of()
            if cut is None:
                raise
            self.i = cut + 2
            at_least = self.accept("AT", "LEAST")
            expr = self.expr_until()
            node = self.parse_pg(0, self.toks[cut].start)
            if not isinstance(node, ast.SelectStmt):
                raise first
            return self.stmt("select", node, as_of=AsOf(expr, at_least))

    def _top_level_from(self) -> bool:
        depth = 0
        for j in range(len(self.toks)):
            w = self.word(j)
            if w == "(":
                depth += 1
            elif w == ")":
                depth -= 1
            elif depth == 0 and w == "FROM":
                return True
        return False

    def _trailing_as_of(self) -> Optional[int]:
        depth, found = 0, None
        for j in range(len(self.toks) - 1):
            w = self.word(j)
            if w == "(":
                depth += 1
            elif w == ")":
                depth -= 1
            elif depth == 0 and w == "AS" and self.word(j + 1) == "OF":
                found = j
        return found

    def classify(self, node) -> Statement:
        if isinstance(node, ast.TransactionStmt):
            k = node.kind.name
            kind = {"TRANS_STMT_BEGIN": "begin", "TRANS_STMT_START": "begin", "TRANS_STMT_COMMIT": "commit",
                    "TRANS_STMT_ROLLBACK": "rollback"}.get(k, "transaction")
        elif isinstance(node, ast.CreateTableAsStmt):
            kind = "create_materialized_view" if node.objtype.name == "OBJECT_MATVIEW" else "create_table_as"
        elif isinstance(node, ast.VariableSetStmt):
            kind = "reset" if node.kind.name in ("VAR_RESET", "VAR_RESET_ALL") else "set"
        elif isinstance(node, ast.AlterSystemStmt):
            kind = "alter_system_reset" if node.setstmt.kind.name in ("VAR_RESET", "VAR_RESET_ALL") \
                else "alter_system_set"
        else:
            kind = _KINDS.get(type(node).__name__) or _snake(type(node).__name__)
        return self.stmt(kind, node)

    # ---- Materialize forms
    def subscribe(self) -> Subscribe:
        self.expect("SUBSCRIBE")
        self.accept("TO")
        loc = self.loc()
        relation = query = None
        if self.peek() == "(":
            close = self.matching_paren(self.i)
            query = self.parse_pg(self.toks[self.i].start + 1, self.toks[close].start)
            if not isinstance(query, ast.SelectStmt):
                self.i += 1
                raise self.error_here()
            self.i = close + 1
        else:
            relation = self.name()
        options: tuple = ()
        as_of = up_to = envelope = None
        within: tuple = ()
        while self.i < len(self.toks):
            if self.accept("ENVELOPE", "UPSERT"):
                self.expect("(", "KEY", "(")
                keys = [self.ident()]
                while self.accept(","):
                    keys.append(self.ident())
                self.expect(")", ")")
                envelope = tuple(keys)
            elif self.peek() == "ENVELOPE" and self.peek(1) == "DEBEZIUM":
                raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, "SUBSCRIBE ... ENVELOPE DEBEZIUM is not supported"
                                       " (ENVELOPE UPSERT is)", position=self.pos(self.loc()))
            elif self.accept("WITHIN", "TIMESTAMP", "ORDER", "BY"):
                while True:
                    col = self.ident()
                    desc = self.accept("DESC")
                    if not desc:
                        self.accept("ASC")
                    nulls = "first" if self.accept("NULLS", "FIRST") else (
                        "last" if self.accept("NULLS", "LAST") else None)
                    within = within + ((col, desc, nulls),)
                    if not self.accept(","):
                        break
            elif self.accept("WITH"):
                options = options + self.options()
            elif self.accept("AS", "OF"):
                at_least = self.accept("AT", "LEAST")
                as_of = AsOf(self.expr_until(("UP", "TO")), at_least)
            elif self.accept("UP", "TO"):
                up_to = self.expr_until(("AS", "OF"))
            else:
                raise self.error_here()
        return Subscribe(relation, query, options, as_of, up_to, loc, envelope_upsert=envelope,
                         within_timestamp_order_by=within)

    def fetch(self) -> Fetch:
        move = self.accept("MOVE")
        if not move:
            self.expect("FETCH")
        verb = "MOVE" if move else "FETCH"
        count: Optional[int] = 1
        backward = self.peek() in ("BACKWARD", "PRIOR", "ABSOLUTE", "RELATIVE", "FIRST", "LAST", "-") or (
            self.peek() == "FORWARD" and self.peek(1) == "-")
        if backward:  # FETCH -n and FETCH FORWARD -n move backward too
            start = self.i
            while self.i < len(self.toks) and self.peek() not in ("FROM", "IN") \
                    and not (self.i == len(self.toks) - 1):
                self.i += 1
            t0, t1 = self.toks[start], self.toks[self.i - 1]
            form = verb + " " + self.ptext[t0.start:t1.end]
            self.accept("FROM") or self.accept("IN")
            cursor = self.ident()
            return Fetch(cursor, count, (), move, refused_form=form)
        self.accept("FORWARD") or self.accept("NEXT")
        if self.accept("ALL"):
            count = None
        elif self.i < len(self.toks) and self.toks[self.i].name == "ICONST":
            count = self.literal()
        self.accept("FROM") or self.accept("IN")
        cursor = self.ident()
        options: tuple = ()
        if self.accept("WITH"):
            options = self.options()
        if self.i < len(self.toks):
            raise self.error_here()
        return Fetch(cursor, count, options, move)

    def show(self) -> Show:
        self.expect("SHOW")
        w = self.peek()
        for form in _SHOW_FORMS_NOT_HERE:
            if all(self.peek(k) == word for k, word in enumerate(form)) and self.peek(len(form)) not in ("=", "TO"):
                raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, f"SHOW {' '.join(form)} is not supported",
                                       position=self.pos(self.loc()))
        simple = {"TABLES": "tables", "VIEWS": "views", "INDEXES": "indexes", "INDEX": "indexes",
                  "KEYS": "indexes", "OBJECTS": "objects", "SOURCES": "sources", "SINKS": "sinks",
                  "CLUSTERS": "clusters", "SCHEMAS": "schemas", "DATABASES": "databases",
                  "SECRETS": "secrets", "CONNECTIONS": "connections", "TYPES": "types"}
        if self.accept("MATERIALIZED", "VIEWS"):
            what = "materialized_views"
        elif self.accept("CLUSTER", "REPLICAS"):
            what = "cluster_replicas"
        elif w in simple and self.peek(1) not in ("=",):
            self.i += 1
            what = simple[w]
        elif self.accept("COLUMNS"):
            if not (self.accept("FROM") or self.accept("IN")):
                raise self.error_here()
            loc = self.loc()
            on = self.name()
            return Show("columns", on=on, like=self._like(), location=loc)
        elif self.accept("CREATE"):
            if self.accept("MATERIALIZED", "VIEW"):
                ck = "materialized_view"
            elif self.peek() in ("TABLE", "VIEW", "INDEX", "SOURCE", "SINK", "CONNECTION"):
                ck = self.peek().lower()
                self.i += 1
            elif self.peek().isalpha():  # Materialize's other SHOW CREATE forms (CLUSTER, SECRET, ...)
                raise errors.error_for(errors.FEATURE_NOT_SUPPORTED, f"SHOW CREATE {self.peek()} is not supported",
                                       position=self.pos(self.loc()))
            else:
                raise self.error_here()
            loc = self.loc()
            on = self.name()
            if self.i < len(self.toks):
                raise self.error_here()
            return Show("create", on=on, create_kind=ck, location=loc)
        elif self.accept("ALL"):
            if self.i < len(self.toks):
                raise self.error_here()
            return Show("all")
        else:
            if self.accept("TRANSACTION", "ISOLATION", "LEVEL"):
                name = "transaction_isolation"
            elif self.accept("TIME", "ZONE"):
                name = "timezone"
            else:
                name = ".".join(self.name())
            if self.i < len(self.toks):
                raise self.error_here()
            return Show("variable", name=name)
        on, loc, schema, cluster = None, 0, None, None
        if what == "indexes" and self.accept("ON"):
            loc = self.loc()
            on = self.name()
        elif what == "indexes" and self.peek() in ("FROM", "IN") and self.peek(1) != "CLUSTER":
            self.i += 1
            loc = self.loc()
            on = self.name()
        elif self.peek() in ("FROM", "IN") and self.peek(1) != "CLUSTER":
            self.i += 1
            loc = self.loc()
            schema = self.name()[-1]
        if self.accept("IN", "CLUSTER"):
            cluster = self.ident()
        return Show(what, on=on, like=self._like(), location=loc, schema=schema, cluster=cluster)

    def _like(self) -> Optional[str]:
        like = None
        if self.accept("LIKE"):
            like = self.literal()
            if not isinstance(like, str):
                raise self.error_here()
        if self.i < len(self.toks):
            raise self.error_here()
        return like

    def explain(self) -> Explain:
        """``EXPLAIN [stage PLAN | PLAN | TIMESTAMP] [WITH (...)] [AS TEXT|JSON] [FOR]
        (statement | [MATERIALIZED] VIEW name | INDEX name)``, Materialize's grammar."""
        self.expect("EXPLAIN")
        stage, fmt = "optimized", "text"
        stages = {"RAW": "raw", "DECORRELATED": "decorrelated", "OPTIMIZED": "optimized",
                  "PHYSICAL": "physical", "LOCALLY": "optimized", "GLOBAL": "optimized"}
        if self.peek() in stages and self.peek(1) in ("PLAN", "OPTIMIZED"):
            stage = stages[self.peek()]
            self.i += 1
            self.accept("OPTIMIZED")
            self.expect("PLAN")
        elif self.accept("PLAN"):
            pass
        elif self.accept("TIMESTAMP"):
            stage = "timestamp"
        if self.peek() == "WITH" and self.peek(1) == "(":  # options, not a query's WITH clause
            self.i += 1
            self.options()
        if self.peek() == "AS" and self.peek(1) in ("TEXT", "JSON", "DOT", "VERBOSE"):
            self.i += 1
            self.accept("VERBOSE")
            fmt = self.ident()
        self.accept("FOR")
        if self.i >= len(self.toks):
            raise self.error_here()
        for words, kind in ((("MATERIALIZED", "VIEW"), "materialized_view"), (("VIEW",), "view"),
                            (("INDEX",), "index")):
            if self.accept(*words):
                loc = self.loc()
                name = self.name()
                if self.i < len(self.toks):
                    raise self.error_here()
                return Explain(stage, None, fmt, target=(kind, name), location=loc)
        lo = self.loc()
        sub = _Ctx(self.source, self.origin, self.text, " " * lo + self.ptext[lo:],
                   self.toks[self.i:], self.inserts)
        sub.wmr, sub.shows = self.wmr, self.shows
        inner = sub.parse()
        inner.text = self.text[lo:] if not self.inserts else self.ptext[lo:]
        inner.offset = self.origin + lo
        if inner.kind not in ("select", "create_view", "create_materialized_view", "create_index",
                              "create_default_index", "subscribe", "insert", "update", "delete"):
            raise _syntax(f'syntax error at or near "{self.ptext[lo:self.toks[self.i].end]}"', self.pos(lo))
        return Explain(stage, inner, fmt)

    def default_index(self) -> CreateDefaultIndex:
        self.expect("CREATE", "DEFAULT", "INDEX")
        ine = self.accept("IF", "NOT", "EXISTS")
        cluster = None
        if self.accept("IN", "CLUSTER"):
            cluster = self.ident()
        self.expect("ON")
        loc = self.loc()
        on = self.name()
        if self.accept("("):
            self.expect(")")
        if self.i < len(self.toks):
            raise self.error_here()
        return CreateDefaultIndex(on, cluster, ine, loc)


#: Materialize's SHOW statements for objects mzlite does not have (refused, 0A000, rather
#: than read as a configuration parameter or a syntax error)
_SHOW_FORMS_NOT_HERE = (("DEFAULT", "PRIVILEGES"), ("ROLE", "MEMBERSHIP"), ("NETWORK", "POLICIES"), ("ROLES",),
                        ("PRIVILEGES",), ("SUBSOURCES",))

_KINDS = {
    "SelectStmt": "select", "InsertStmt": "insert", "UpdateStmt": "update", "DeleteStmt": "delete",
    "CreateStmt": "create_table", "ViewStmt": "create_view", "IndexStmt": "create_index",
    "DropStmt": "drop", "VariableShowStmt": "show_variable", "DeclareCursorStmt": "declare",
    "FetchStmt": "fetch", "ClosePortalStmt": "close", "ExplainStmt": "explain",
}


def _snake(name: str) -> str:
    name = name[:-4] if name.endswith("Stmt") else name
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
