"""Materialize's expression grammar where it is wider than PostgreSQL's, as text rewrites
pglast can then parse.

Owns two rewrites over ``sql.parse``'s token cursor: subscripting a call without
parentheses (``regexp_split_to_array(s, ',')[2]`` becomes ``(regexp_split_to_array(s,
','))[2]``, ``ARRAY[1, 2][1]`` becomes ``(ARRAY[1, 2])[1]``, as Materialize's grammar reads them) and ``left``/``right`` used as names
(``CREATE TABLE t (left int)``, ``SELECT left FROM t``: Materialize's keyword rules allow
them where PostgreSQL reserves them; they become ``"left"``/``"right"`` unless a JOIN, OUTER
or an argument list follows).  Invariant: every rewrite only inserts characters and records
each insertion in the cursor's ``inserts`` (composed with earlier ones), so
``Statement.position`` still maps every location to the character the user wrote.
Also here: a reserved word as CREATE INDEX's relation (``quote_reserved_index_relation``).
Deliberately not here: the statement forms (``sql.parse``, ``sql.mzclusters``).
"""
from __future__ import annotations

_NAME_KINDS = ("UNRESERVED_KEYWORD", "COL_NAME_KEYWORD", "TYPE_FUNC_NAME_KEYWORD")


def insert_text(ctx, edits) -> None:
    """Insert ``(offset, text)`` pairs into ``ctx.ptext`` (offsets in today's ``ptext``),
    rescan its tokens and compose ``ctx.inserts``."""
    if not edits:
        return
    from sql.parse import _Tok, _scan
    edits = sorted(edits)
    out, last, added, new = [], 0, 0, []
    for at, txt in edits:
        out.append(ctx.ptext[last:at])
        out.append(txt)
        new.append((at + added, len(txt)))
        added += len(txt)
        last = at
    out.append(ctx.ptext[last:])
    old = [(a + sum(len(t) for at, t in edits if at <= a), e) for a, e in ctx.inserts]
    ctx.ptext = "".join(out)
    ctx.inserts = tuple(sorted(old + new))
    ctx.toks = [_Tok(t.start, t.end + 1, t.name, t.kind) for t in _scan(ctx.ptext, ctx.origin)
                if t.name not in ("SQL_COMMENT", "C_COMMENT")]


def _call_start(ctx, open_idx: int):
    """The first token of the function name before the ``(`` at ``open_idx`` (a qualified
    name included), or None when that parenthesis does not open a call."""
    j = open_idx - 1
    if j < 0:
        return None
    t = ctx.toks[j]
    if not (t.name == "IDENT" or t.kind in _NAME_KINDS or ctx.word(j) == "ARRAY"):
        return None
    while j >= 2 and ctx.word(j - 1) == "." and (ctx.toks[j - 2].name == "IDENT" or ctx.toks[j - 2].kind in _NAME_KINDS):
        j -= 2
    return j


def _opening(ctx, close_idx: int, open_w: str, close_w: str) -> int:
    """The index of the token opening the bracket closed at ``close_idx`` (-1 if none)."""
    depth = 0
    for j in range(close_idx, -1, -1):
        w = ctx.word(j)
        depth += (w == close_w) - (w == open_w)
        if depth == 0:
            return j
    return -1


def rewrite(ctx) -> None:
    """Apply both rewrites to the statement at ``ctx`` (a ``sql.parse._Ctx``)."""
    edits = []
    n = len(ctx.toks)
    for k in range(1, n):
        if ctx.word(k) == "[" and ctx.word(k - 1) == "]":  # ARRAY[...][i]
            j = _opening(ctx, k - 1, "[", "]")
            if j >= 1 and ctx.word(j - 1) == "ARRAY":
                edits.append((ctx.toks[j - 1].start, "("))
                edits.append((ctx.toks[k - 1].end, ")"))
            continue
        if ctx.word(k) != "[" or ctx.word(k - 1) != ")":
            continue
        j = _opening(ctx, k - 1, "(", ")")
        start = _call_start(ctx, j) if j >= 0 else None
        if start is not None:
            edits.append((ctx.toks[start].start, "("))
            edits.append((ctx.toks[k - 1].end, ")"))
    for k in range(n):
        t = ctx.toks[k]
        if ctx.word(k) in ("LEFT", "RIGHT") and ctx.ptext[t.start] != '"' \
                and ctx.word(k + 1) not in ("JOIN", "OUTER", "("):
            edits.append((t.start, '"'))
            edits.append((t.end, '"'))
    insert_text(ctx, edits)


def quote_reserved_index_relation(ctx) -> None:
    """``CREATE INDEX fk ON order (...)``: Materialize's grammar takes a reserved word as the
    indexed relation's name (CH-benCHmark's schema writes it so); PostgreSQL's wants it
    quoted, so it is quoted in the text pglast sees (an insertion, like the others here)."""
    j = next((k for k in range(len(ctx.toks)) if ctx.word(k) == "ON"), None)
    if j is None or j + 2 >= len(ctx.toks) or ctx.toks[j + 1].kind != "RESERVED_KEYWORD" or ctx.word(j + 2) != "(":
        return
    t = ctx.toks[j + 1]
    word = ctx.ptext[t.start:t.end]
    if word != word.lower():  # the name is the folded word: ``"order"``
        insert_text(ctx, [(t.start, '"' + word.lower() + '" /*'), (t.end, "*/")])
    else:
        insert_text(ctx, [(t.start, '"'), (t.end, '"')])
