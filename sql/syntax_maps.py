"""Materialize's map type syntax, rewritten into text pglast parses (part of the thin layer
of ``sql.mzsyntax``).

Owns ``rewrite_maps(ctx)`` over a statement's tokens (``sql.parse._Ctx``): a map type name,
``map[text=>int]`` or nested ``map[text=>map[text=>bool]]`` (the word ``map``, then brackets
holding ``=>`` at their own depth), becomes one quoted type name, ``"map[text=>int]"``, which
``sql.types.normalize_type_name`` resolves (``sql.types.maps``) wherever a type name may
stand: after ``::``, in ``CAST(x AS ...)``, in a column definition.
Invariant: the rewrite only inserts characters (the quoted name is padded to the length of
what it replaces), composed into ``ctx.inserts`` (``sql.syntax_lists.apply_edits``), so error
positions stay the user's; a subscript of a column named ``map`` (``map[1]``, no ``=>``) is
untouched, and a type name holding a double quote is left to the parser.
Deliberately not here: the meaning of map types (``sql.types.maps``) and named map types
(``CREATE TYPE ... AS MAP``: ``sql.mztypes``, ``planner.bind_types``).
"""
from __future__ import annotations


def _bracket(ctx, i: int, c: str) -> bool:
    return 0 <= i < len(ctx.toks) and ctx.toks[i].name == ("ASCII_91" if c == "[" else "ASCII_93")


def _map_type_end(ctx, k: int):
    """The index of the ``]`` closing the map type whose word ``map`` is token ``k``; None
    when token ``k`` does not start one."""
    if ctx.word(k) != "MAP" or not _bracket(ctx, k + 1, "["):
        return None
    depth, arrow = 0, False
    for j in range(k + 1, len(ctx.toks)):
        if _bracket(ctx, j, "["):
            depth += 1
        elif _bracket(ctx, j, "]"):
            depth -= 1
            if depth == 0:
                return j if arrow else None
        elif ctx.toks[j].name == "EQUALS_GREATER" and depth == 1:
            arrow = True
        elif ctx.word(j) in (";", ",") and depth == 0:
            return None
    return None


def rewrite_maps(ctx) -> None:
    """Rewrite ``ctx.ptext`` (see the module docstring); nothing when no map type is spelled."""
    from sql.syntax_lists import apply_edits
    edits: list = []
    k = 0
    while k < len(ctx.toks):
        end = _map_type_end(ctx, k)
        if end is None or (k > 0 and ctx.word(k - 1) == "."):
            k += 1
            continue
        lo, hi = ctx.toks[k].start, ctx.toks[end].end
        name = " ".join(ctx.ptext[lo:hi].split())
        if '"' not in name:
            edits.append((lo, hi, ('"' + name + '"').ljust(hi - lo)))
        k = end + 1
    apply_edits(ctx, edits)
