"""Materialize's ``CREATE TYPE name AS LIST (...)`` / ``AS MAP (...)``, parsed over
``sql.parse``'s token cursor.

Owns the grammar ``CREATE TYPE name AS LIST (ELEMENT TYPE [=] type)`` and ``CREATE TYPE
name AS MAP (KEY TYPE [=] type, VALUE TYPE [=] type)`` (an option name also spelled with an
underscore, ``element_type = int4``, as Materialize accepts) and the node it produces,
``CreateNamedType``: the name's parts, ``list`` or ``map``, and each option as ``(name,
type text, location)`` with the type left as the user's text (a type name pglast parses:
``pg_catalog.text``, ``numeric(38,0)``, ``int4 list``).
Invariant: option names are ``element type``, ``key type`` or ``value type``; anything else
is a 42601 syntax error in Materialize's words (``Expected one of KEY or VALUE, found
identifier "x"``).
Deliberately not here: what the types mean and whether the options are complete
(``planner.bind_types``).
"""
from __future__ import annotations

from dataclasses import dataclass

from sql import errors

_OPTIONS = {"list": ("element",), "map": ("key", "value")}


@dataclass(frozen=True)
class CreateNamedType:
    name: tuple[str, ...]
    kind: str                                   #: "list" or "map"
    options: tuple[tuple[str, str, int], ...]   #: (option name, type text, location)


def is_create_named_type(ctx) -> bool:
    """Whether ``ctx`` starts ``CREATE TYPE name AS LIST|MAP (``."""
    if ctx.peek(0) != "CREATE" or ctx.peek(1) != "TYPE":
        return False
    j = 2
    while ctx.word(j + 1) == ".":
        j += 2
    return ctx.word(j + 1) == "AS" and ctx.word(j + 2) in ("LIST", "MAP") and ctx.word(j + 3) == "("


def _expected(ctx, kind: str) -> errors.Error:
    want = " or ".join(w.upper() for w in _OPTIONS[kind])
    t = ctx.toks[ctx.i] if ctx.i < len(ctx.toks) else None
    found = "EOF" if t is None else f'identifier "{ctx.ptext[t.start:t.end].lower()}"'
    msg = f"Expected one of {want}, found {found}" if len(_OPTIONS[kind]) > 1 else f"Expected {want}, found {found}"
    return errors.error_for(errors.SYNTAX_ERROR, msg, position=ctx.pos(ctx.loc()))


def parse_create_named_type(ctx):
    """The statement at ``ctx`` (see ``is_create_named_type``)."""
    ctx.i = 2
    name = ctx.name()
    ctx.expect("AS")
    kind = ctx.word(ctx.i).lower()
    ctx.i += 1
    close, items = ctx.items_between(ctx.i)
    opts = []
    for lo, hi in items:
        ctx.i = lo
        w = ctx.word(lo).lower()
        if "_" in w and w.endswith("_type") and w[:-5] in _OPTIONS[kind]:
            opt, ctx.i = w[:-5], lo + 1
        elif w in _OPTIONS[kind] and ctx.word(lo + 1) == "TYPE":
            opt, ctx.i = w, lo + 2
        else:
            raise _expected(ctx, kind)
        ctx.accept("=")
        if ctx.i >= hi:
            raise ctx.error_here()
        start, end = ctx.toks[ctx.i].start, ctx.toks[hi - 1].end
        opts.append((opt + " type", " ".join(ctx.ptext[start:end].split()), start))
    ctx.i = close + 1
    if ctx.i < len(ctx.toks) and ctx.word(ctx.i) != ";":
        raise ctx.error_here()
    return ctx.stmt("create_named_type", CreateNamedType(name, kind, tuple(opts)))
