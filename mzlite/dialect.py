"""Other SQL dialects: statement text in SQLite's or DuckDB's SQL, translated into ours.

Owns the ``sql_dialect`` session variable's values (``postgres``, the default, and
``sqlite`` / ``duckdb``) and ``translate``: the one step the coordinator applies to a
statement text before parsing when the session's dialect is not ``postgres``.  The
translation is sqlglot's (``read=<dialect>, write="postgres"``), done statement by
statement, with three local rules:

* Materialize-only statements (SUBSCRIBE, SHOW, EXPLAIN, DECLARE/FETCH/CLOSE, ALTER
  SYSTEM, SET/RESET, transaction control, CREATE [DEFAULT] INDEX) pass through untranslated,
  and a SELECT's trailing ``AS OF [AT LEAST] ...`` is cut off, the SELECT translated and
  the clause appended verbatim; a statement sqlglot cannot parse but our own parser
  accepts passes through too (so CREATE MATERIALIZED VIEW and the like keep working).
* ``INSERT OR REPLACE/IGNORE`` and ``REPLACE INTO`` are refused with 0A000 (mzlite has no
  unique constraints to resolve against), never silently turned into a plain INSERT.
* DuckDB's ``SELECT * EXCLUDE (...)`` is expanded here against the catalog's column lists
  (PostgreSQL has no equivalent for sqlglot to write).

Invariant: an error position is only ever reported into the user's own text: ``translate``
says whether its output is that text unchanged (``exact``); when it is not, the caller drops
positions (``drop_positions``) rather than report one into text the user never wrote.
Translation failures are 42601 errors that name the dialect.
Deliberately not here: parsing our own dialect (``sql.parse``) or any meaning.
"""
from __future__ import annotations

import logging
from typing import Callable, Optional

from sql import errors as E

DIALECTS = ("postgres", "sqlite", "duckdb")

#: first words of statements that are passed through untranslated
_PASSTHROUGH = {"SUBSCRIBE", "SHOW", "EXPLAIN", "DECLARE", "FETCH", "CLOSE", "ALTER", "SET", "RESET",
                "BEGIN", "START", "COMMIT", "ROLLBACK", "END", "ABORT"}


def parse_dialect(value) -> str:
    """The ``sql_dialect`` variable's input function: one of ``DIALECTS``, case-insensitive."""
    s = str(value).strip().strip("'\"").lower()
    if s in ("postgresql", "materialize", "pg"):
        s = "postgres"
    if s not in DIALECTS:
        raise E.error_for(E.INVALID_PARAMETER_VALUE,
                          f'invalid value for parameter "sql_dialect": "{value}"',
                          hint=f"Available values: {', '.join(DIALECTS)}.")
    return s


class _Quiet(logging.Filter):
    """sqlglot logs unsupported syntax as warnings; we turn those into errors instead."""

    def filter(self, record):
        return False


def _fail(dialect: str, message: str) -> E.Error:
    return E.error_for(E.SYNTAX_ERROR, f"cannot translate {dialect} SQL: {message}")


def translate(text: str, dialect: str, columns_of: Optional[Callable[[str], Optional[list]]] = None,
              ours_parses: Optional[Callable[[str], bool]] = None) -> tuple[str, bool]:
    """``text`` (in ``dialect``) as our SQL, and whether it is ``text`` unchanged.

    ``columns_of(table_name)`` gives a table's column names (for ``* EXCLUDE``);
    ``ours_parses(piece)`` says whether our own parser accepts a statement (the fallback
    for statements sqlglot cannot parse)."""
    if dialect == "postgres":
        return text, True
    import sqlglot
    from sqlglot.errors import SqlglotError
    from sqlglot.tokens import TokenType
    logger = logging.getLogger("sqlglot")
    quiet = _Quiet()
    logger.addFilter(quiet)
    try:
        try:
            tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
        except SqlglotError as e:
            if ours_parses is not None and ours_parses(text):
                return text, True
            raise _fail(dialect, str(e).split("\n")[0]) from None
        pieces, cur = [], []
        for t in tokens:
            if t.token_type == TokenType.SEMICOLON:
                if cur:
                    pieces.append(cur)
                cur = []
            else:
                cur.append(t)
        if cur:
            pieces.append(cur)
        out = []
        for toks in pieces:
            piece = text[toks[0].start:toks[-1].end + 1]
            out.append(_translate_one(piece, toks, dialect, columns_of, ours_parses))
    finally:
        logger.removeFilter(quiet)
    if all(o == text[p[0].start:p[-1].end + 1] for o, p in zip(out, pieces)):
        return text, True
    return ";\n".join(out), False


def _words(toks) -> list[str]:
    return [t.text.upper() for t in toks]


def _translate_one(piece: str, toks, dialect, columns_of, ours_parses) -> str:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, SqlglotError
    words = _words(toks)
    if words[0] in _PASSTHROUGH:
        return piece
    if words[0] == "CREATE" and ("INDEX" in words[1:4]):
        return piece
    if words[0] == "REPLACE" or (words[0] == "INSERT" and len(words) > 2 and words[1] == "OR"):
        what = "REPLACE INTO" if words[0] == "REPLACE" else f"INSERT OR {words[2]}"
        raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"{what} ({dialect}) is not supported: mzlite tables have "
                                                   f"no unique constraints to resolve conflicts against")
    suffix = ""
    # A trailing AS OF clause (Materialize's) is not the other dialect's: keep it verbatim.
    for i in range(1, len(words) - 1):
        if words[i] == "AS" and words[i + 1] == "OF":
            suffix = " " + piece[toks[i].start - toks[0].start:]
            piece = piece[:toks[i].start - toks[0].start].rstrip()
            break
    try:
        trees = sqlglot.parse(piece, read=dialect)
        if len(trees) != 1 or trees[0] is None or isinstance(trees[0], exp.Command):
            raise _Untranslatable()
        tree = trees[0]
        _expand_star_exclude(tree, dialect, columns_of)
        _expand_by_all(tree)
        sql = tree.sql(dialect="postgres", unsupported_level=ErrorLevel.RAISE)
    except _Untranslatable:
        if ours_parses is not None and ours_parses(piece + suffix):
            return piece + suffix
        raise _fail(dialect, f"unsupported statement: {piece[:60]}") from None
    except SqlglotError as e:
        if ours_parses is not None and ours_parses(piece + suffix):
            return piece + suffix
        raise _fail(dialect, str(e).split("\n")[0]) from None
    return sql + suffix


class _Untranslatable(Exception):
    pass


def _expand_star_exclude(tree, dialect: str, columns_of) -> None:
    """Replace ``* EXCLUDE (a, ...)`` by the remaining columns of the single table in FROM."""
    from sqlglot import exp
    for star in list(tree.find_all(exp.Star)):
        excl = star.args.get("except_") or star.args.get("except")
        if not excl and not star.args.get("replace") and not star.args.get("rename"):
            continue
        if star.args.get("replace") or star.args.get("rename"):
            raise E.error_for(E.FEATURE_NOT_SUPPORTED, f"SELECT * REPLACE/RENAME ({dialect}) is not supported")
        select = star.find_ancestor(exp.Select)
        frm = (select.args.get("from") or select.args.get("from_")) if select is not None else None
        tables = list(frm.find_all(exp.Table)) if frm is not None else []
        if select is None or len(tables) != 1 or select.args.get("joins") or columns_of is None:
            raise E.error_for(E.FEATURE_NOT_SUPPORTED,
                              f"SELECT * EXCLUDE ({dialect}) is supported over a single table only")
        table = tables[0]
        cols = columns_of(table.name)
        if cols is None:
            raise E.error_for(E.UNDEFINED_TABLE, f'relation "{table.name}" does not exist')
        drop = {c.name for c in excl}
        unknown = drop - set(cols)
        if unknown:
            raise E.error_for(E.UNDEFINED_COLUMN, f'column "{sorted(unknown)[0]}" does not exist')
        qual = star.parent.args.get("table") if isinstance(star.parent, exp.Column) else None
        keep = [exp.column(c, table=qual.name if qual is not None else None, quoted=True) for c in cols
                if c not in drop]
        target = star.parent if isinstance(star.parent, exp.Column) else star
        exprs = select.expressions
        idx = next(i for i, e in enumerate(exprs) if e is target)
        select.set("expressions", exprs[:idx] + keep + exprs[idx + 1:])


def _expand_by_all(tree) -> None:
    """DuckDB's ``GROUP BY ALL`` (every select item without an aggregate) and ``ORDER BY ALL``
    (every select item, left to right) as positional lists PostgreSQL accepts."""
    from sqlglot import exp
    for select in list(tree.find_all(exp.Select)):
        group = select.args.get("group")
        if group is not None and group.args.get("all"):
            keys = [exp.Literal.number(i) for i, e in enumerate(select.expressions, 1)
                    if not e.find(exp.AggFunc)]
            select.set("group", exp.Group(expressions=keys) if keys else None)
        order = select.args.get("order")
        if order is not None and len(order.expressions) == 1:
            o = order.expressions[0]
            if isinstance(o.this, exp.Var) and o.this.name.upper() == "ALL":
                order.set("expressions", [exp.Ordered(this=exp.Literal.number(i), desc=o.args.get("desc"),
                                                      nulls_first=o.args.get("nulls_first"))
                                          for i in range(1, len(select.expressions) + 1)])


def drop_positions(err: E.Error) -> E.Error:
    """``err`` without a position (its position would be into the translated text)."""
    err.position = None
    return err


def parse_in_dialect(catalog, sql: str, dialect: str):
    """``sql`` (in ``dialect``) translated and parsed into statements.  When the translation
    changed the text, positions would point into text the user never wrote: they are dropped,
    both from parse errors and (``Statement.position``) from every later error."""
    from sql.parse import parse_statements

    def columns_of(name):
        item = catalog.try_resolve(name)
        return None if item is None else list(item.column_names())

    def ours_parses(text):
        try:
            parse_statements(text)
            return True
        except E.Error:
            return False
    text, exact = translate(sql, dialect, columns_of, ours_parses)
    try:
        stmts = parse_statements(text)
    except E.Error as e:
        if exact:
            raise
        if e.sqlstate == E.SYNTAX_ERROR:  # a message about text the user never wrote: say so, and show it
            raise E.error_for(E.SYNTAX_ERROR, f"{e.message} in the PostgreSQL translation of this {dialect} SQL",
                              detail=f"The translation reads: {text[:500]}",
                              hint=f"the {dialect} construct may have no equivalent that mzlite runs") from None
        raise drop_positions(e) from None
    if not exact:
        for st in stmts:
            st.position = _no_position
    return stmts


def _no_position(location):
    return None
