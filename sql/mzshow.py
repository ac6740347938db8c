"""Materialize's ``(SHOW ...)`` used as a table, rewritten for pglast.

Owns finding each ``( SHOW ... )`` in a statement that is not itself a SHOW (``SELECT
create_sql FROM (SHOW CREATE VIEW v)``), parsing it with ``sql.parse``'s SHOW grammar, and
replacing it, in the text pglast sees, by a quoted relation name no user relation has
(``sql.parse.SHOW_SUBQUERY`` + k, padded to the span's length).  Invariant: the replacement
is never longer than what it replaces and starts where it did, so every location after it
is the user's (no ``inserts`` needed); the k-th SHOW is ``Statement.show_subqueries[k]``.
Deliberately not here: what a SHOW returns (the planner binds it, ``Binder.bind_show_subquery``,
over the adapter's rows, ``Catalog.show_rows``).
"""
from __future__ import annotations


def replace_show_subqueries(ctx) -> None:
    """Replace every ``(SHOW ...)`` of the statement at ``ctx`` (a ``sql.parse._Ctx``); its
    ``shows`` list gains their ``Show`` nodes, in order."""
    from sql.parse import SHOW_SUBQUERY, _Ctx, _syntax, _Tok
    j = 0
    while j < len(ctx.toks) - 1:
        if ctx.word(j) == "(" and ctx.word(j + 1) == "SHOW":
            close = ctx.matching_paren(j)
            lo, hi = ctx.toks[j + 1].start, ctx.toks[close].start
            sub = _Ctx(ctx.source, ctx.origin, ctx.text, " " * lo + ctx.ptext[lo:hi], ctx.toks[j + 1:close], ctx.inserts)
            ctx.shows.append(sub.show())
            name = f'"{SHOW_SUBQUERY}{len(ctx.shows) - 1}"'
            a, b = ctx.toks[j].start, ctx.toks[close].end
            if len(name) > b - a:
                raise _syntax("too many SHOW subqueries", ctx.pos(a))
            ctx.ptext = ctx.ptext[:a] + name.ljust(b - a) + ctx.ptext[b:]
            ctx.toks[j:close + 1] = [_Tok(a, a + len(name), "IDENT", "NO_KEYWORD")]
        j += 1
