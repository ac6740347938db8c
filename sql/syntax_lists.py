"""Materialize's list syntax, rewritten into text pglast parses (part of the thin layer of
``sql.mzsyntax``).

Owns ``rewrite_lists(ctx)`` over a statement's tokens (``sql.parse._Ctx``):

- a list type name (``int list``, ``text list list``, ``double precision list``,
  ``numeric(10,2) list``, ``int[] list``) after ``::``, after ``AS`` (``CAST(x AS int list)``)
  or after a column name that follows ``(``, ``,`` or ``COLUMN`` (column definitions, ``WITH
  MUTUALLY RECURSIVE`` column types) becomes one quoted type name, ``"int list"``, which
  ``sql.types.normalize_type_name`` resolves to ``int4 list``;
- the constructor ``LIST[a, b]`` becomes ``(list(ARRAY[a, b]))``, and a bare ``[...]`` at an
  element position inside it (``LIST[[1,2],[3]]``) becomes ``list(ARRAY[...])``;
- ``LIST(SELECT ...)`` becomes ``list(ARRAY(SELECT ...))``.

The binder (``planner.bind_lists``) reads a call of ``list`` whose one argument is an
``ARRAY[...]`` or ``ARRAY(subquery)`` as the list constructor.
Invariant: the rewrite only inserts characters (a replacement is never shorter than what it
replaces), and every insertion is recorded in ``ctx.inserts`` composed with the ones already
there, so ``Statement.position`` maps every node location back to the user's text and error
positions stay right.  A text without the word ``list`` is untouched.
Deliberately not here: the meaning of list types and constructors (``sql.types.lists``,
``planner.bind_lists``).
"""
from __future__ import annotations

import re

_WORD = re.compile(r"[a-z_][a-z0-9_$]*\Z")
_QUERY_START = ("SELECT", "WITH", "VALUES", "TABLE")


def _raw(ctx, i: int) -> str:
    t = ctx.toks[i]
    return ctx.ptext[t.start:t.end]


def _is_word(ctx, i: int) -> bool:
    if i < 0 or i >= len(ctx.toks):
        return False
    w = ctx.word(i)
    return not w.startswith("\0") and bool(_WORD.match(w.lower()))


def _is_list(ctx, i: int) -> bool:
    return 0 <= i < len(ctx.toks) and ctx.word(i) == "LIST"


def _matching(ctx, i: int, open_: str, close: str):
    depth = 0
    for j in range(i, len(ctx.toks)):
        w = ctx.word(j) if ctx.toks[j].name not in ("ASCII_91", "ASCII_93") else _raw(ctx, j)
        if w == open_:
            depth += 1
        elif w == close:
            depth -= 1
            if depth == 0:
                return j
    return None


def _is_bracket(ctx, i: int, c: str) -> bool:
    return 0 <= i < len(ctx.toks) and ctx.toks[i].name == ("ASCII_91" if c == "[" else "ASCII_93")


def _type_start(ctx, k: int) -> bool:
    if k <= 0:
        return False
    prev = ctx.toks[k - 1]
    if prev.name == "TYPECAST" or ctx.word(k - 1) == "AS":
        return True
    named = _is_word(ctx, k - 1) or _raw(ctx, k - 1).startswith('"')
    return named and k >= 2 and ctx.word(k - 2) in ("(", ",", "COLUMN")


def _parse_type(ctx, k: int, spellings):
    """``(end token index, canonical text)`` of a type name with at least one ``list``
    suffix starting at token ``k``; None otherwise."""
    n = len(ctx.toks)
    j = k
    canon = ""
    if _is_word(ctx, j) and ctx.word(j) == "PG_CATALOG" and ctx.word(j + 1) == ".":
        canon, j = "pg_catalog.", j + 2
    best = 0
    words: list = []
    for m in range(4):
        if not _is_word(ctx, j + m):
            break
        words.append(ctx.word(j + m).lower())
        if " ".join(words) in spellings:
            best = m + 1
    if not best:
        return None
    canon += " ".join(words[:best])
    j += best
    if j < n and ctx.word(j) == "(":
        close = _matching(ctx, j, "(", ")")
        if close is None:
            return None
        canon += "".join(_raw(ctx, x) for x in range(j, close + 1))
        j = close + 1
    has_list = False
    while j < n:
        if _is_bracket(ctx, j, "[") and _is_bracket(ctx, j + 1, "]"):
            canon, j = canon + "[]", j + 2
        elif _is_bracket(ctx, j, "[") and j + 2 < n and ctx.toks[j + 1].name == "ICONST" \
                and _is_bracket(ctx, j + 2, "]"):
            canon, j = canon + "[]", j + 3
        elif _is_list(ctx, j):
            canon, j, has_list = canon + " list", j + 1, True
        else:
            break
    return (j, canon) if has_list else None


def _constructor(ctx, open_i: int, edits: list, bare: bool) -> None:
    """Edits for the constructor whose ``[`` is token ``open_i`` (``bare``: no ``LIST``
    keyword before it, an inner layer) and for the bare inner layers at its element
    positions."""
    close = _matching(ctx, open_i, "[", "]")
    if close is None:
        return
    o, c = ctx.toks[open_i], ctx.toks[close]
    edits.append((o.start, o.start, "list(ARRAY" if bare else "(ARRAY"))
    edits.append((c.end, c.end, ")" if bare else "))"))
    depth, at_start = 0, True
    for j in range(open_i + 1, close):
        w = ctx.word(j)
        if at_start and depth == 0 and _is_bracket(ctx, j, "["):
            _constructor(ctx, j, edits, True)
        at_start = False
        if w == "(" or _is_bracket(ctx, j, "["):
            depth += 1
        elif w == ")" or _is_bracket(ctx, j, "]"):
            depth -= 1
        elif w == "," and depth == 0:
            at_start = True


def rewrite_lists(ctx) -> None:
    """Rewrite ``ctx.ptext`` (see the module docstring), compose ``ctx.inserts`` and rescan
    ``ctx.toks``; nothing when no edit applies."""
    from sql import types as T
    if not any(_is_list(ctx, i) for i in range(len(ctx.toks))):
        return
    spellings = set(T.SPELLINGS)
    edits: list = []
    consumed: set = set()
    for k in range(len(ctx.toks)):
        if k in consumed or not _type_start(ctx, k):
            continue
        r = _parse_type(ctx, k, spellings)
        if r is None:
            continue
        end, canon = r
        lo, hi = ctx.toks[k].start, ctx.toks[end - 1].end
        rep = ('"' + canon + '"').ljust(hi - lo)
        edits.append((lo, hi, rep))
        consumed.update(range(k, end))
    for k in range(len(ctx.toks)):
        if k in consumed or not _is_list(ctx, k) or (k > 0 and ctx.word(k - 1) == "."):
            continue
        if _is_bracket(ctx, k + 1, "["):
            t = ctx.toks[k]
            edits.append((t.start, t.start, "("))
            _constructor(ctx, k + 1, edits, False)
        elif ctx.word(k + 1) == "(" and ctx.word(k + 2) in _QUERY_START:
            close = _matching(ctx, k + 1, "(", ")")
            if close is not None:
                edits.append((ctx.toks[k + 2].start, ctx.toks[k + 2].start, "ARRAY("))
                edits.append((ctx.toks[close].start, ctx.toks[close].start, ")"))
    apply_edits(ctx, edits)


def apply_edits(ctx, edits: list) -> None:
    """Apply ``edits`` (``(lo, hi, replacement)`` spans of ``ctx.ptext``, none shorter than
    what it replaces, none overlapping) to ``ctx``: the new text, ``ctx.inserts`` composed with
    the insertions, the tokens rescanned; nothing when ``edits`` is empty.  Shared with
    ``sql.syntax_maps``."""
    if not edits:
        return
    edits.sort(key=lambda e: e[0])
    out, last, shift = [], 0, 0
    new_inserts = []
    for lo, hi, rep in edits:
        out.append(ctx.ptext[last:lo])
        extra = len(rep) - (hi - lo)
        new_lo = lo + shift
        if extra > 0:
            new_inserts.append((new_lo + (hi - lo), extra))
        out.append(rep)
        shift += extra
        last = hi
    out.append(ctx.ptext[last:])

    def moved(at: int) -> int:
        return at + sum(len(rep) - (hi - lo) for lo, hi, rep in edits if lo < at)
    ctx.inserts = tuple(sorted([(moved(at), e) for at, e in ctx.inserts] + new_inserts))
    ctx.ptext = "".join(out)
    from pglast.parser import scan
    Tok = type(ctx.toks[0])
    ctx.toks = [Tok(t.start, t.end + 1, t.name, t.kind) for t in scan(ctx.ptext)
                if t.name not in ("SQL_COMMENT", "C_COMMENT")]
