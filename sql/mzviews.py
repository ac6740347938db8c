"""Materialize's options of CREATE MATERIALIZED VIEW: ``WITH (REFRESH [=] ON COMMIT)``.

Owns reading the ``WITH (...)`` clause between a materialized view's name (its column list,
its ``IN CLUSTER``) and ``AS``, and blanking it out of the text pglast sees.  ``REFRESH ON
COMMIT`` is the only refresh mzlite has (every write is reflected at its commit), so it is
accepted and changes nothing; this is the clause ``SHOW CREATE MATERIALIZED VIEW`` prints,
so that text replays; ``RETAIN HISTORY [=] FOR 'd'`` is kept on the statement
(``Statement.retain_history``).  Invariant: an option mzlite cannot honour (``REFRESH EVERY``,
``REFRESH AT``, ``ASSERT NOT NULL``) is refused with 0A000 naming it in
the user's words, never dropped silently; an option Materialize does not know either is a
syntax error.  Deliberately not here: the rest of the statement (pglast's, via
``sql.parse``), any meaning.
"""
from __future__ import annotations

from sql import errors

#: options Materialize's grammar takes on CREATE MATERIALIZED VIEW that mzlite refuses
_REFUSED = (("REFRESH",), ("ASSERT", "NOT", "NULL"))


def _with_at(ctx) -> int | None:
    """The index of the ``WITH`` token opening the options of ``CREATE MATERIALIZED VIEW``
    at ``ctx`` (``OR REPLACE`` and ``IN CLUSTER`` already blanked), or None."""
    if ctx.word(0) != "CREATE" or ctx.word(1) != "MATERIALIZED" or ctx.word(2) != "VIEW":
        return None
    j = 3
    while j < len(ctx.toks):
        w = ctx.word(j)
        if w in ("AS", ";", ""):
            return None
        if w == "(":
            j = ctx.matching_paren(j) + 1
            continue
        if w == "WITH":
            return j if ctx.word(j + 1) == "(" else None
        j += 1
    return None


def blank_materialized_view_options(ctx) -> None:
    """Check the ``WITH (...)`` options of a CREATE MATERIALIZED VIEW at ``ctx`` and blank
    them out (see the module docstring); any other statement is left alone."""
    j = _with_at(ctx)
    if j is None:
        return
    close, items = ctx.items_between(j + 1)
    for lo, hi in items:
        words = [ctx.word(k) for k in range(lo, hi)]
        said = " ".join(ctx.ptext[ctx.toks[lo].start:ctx.toks[hi - 1].end].split()) if hi > lo else ""
        if words in (["REFRESH", "ON", "COMMIT"], ["REFRESH", "=", "ON", "COMMIT"]):
            continue
        if words[:2] == ["RETAIN", "HISTORY"]:  # kept for the planner (``sql.mzalter.retain_history_at``)
            from sql.mzalter import retain_history_at
            ctx.retain_history = retain_history_at(ctx, lo, hi)
            continue
        refused = next((r for r in _REFUSED if tuple(words[:len(r)]) == r), None)
        if refused is not None:  # named by its keywords as typed (REFRESH: and the kind of refresh)
            ks = [k for k in range(lo, hi) if ctx.word(k) != "="][:len(refused) + (refused == ("REFRESH",))]
            what = " ".join(ctx.ptext[ctx.toks[k].start:ctx.toks[k].end] for k in ks)
            raise errors.error_for(errors.FEATURE_NOT_SUPPORTED,
                                   f"CREATE MATERIALIZED VIEW ... {what} is not supported "
                                   "(REFRESH ON COMMIT is the only refresh mzlite has)",
                                   position=ctx.pos(ctx.toks[lo].start))
        loc = ctx.toks[lo].start if hi > lo else ctx.toks[hi].start
        raise errors.error_for(errors.SYNTAX_ERROR, f'syntax error at or near "{said.split(" ")[0] or ")"}"',
                               position=ctx.pos(loc))
    ctx._blank_tokens(j, close)
