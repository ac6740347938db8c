"""What the type families of ``sql.types`` build with.

Owns ``io_casts`` (PostgreSQL's I/O conversion casts of a type: to ``text`` by assignment,
from ``text`` explicitly, the entries most types' cast tables start from), ``element_wise``
(the casts every parametric type has), ``bad`` (a modifier's ``ProgrammingError``) and
``merged`` (how an assembler, this package's or ``sql.functions``', joins its families'
tables).
Invariant: imports no family and not the assembler (``sql.types``), so no family module
closes an import circle.
Deliberately not here: any family's types, spellings or casts.
"""
from __future__ import annotations

from sql.errors import ProgrammingError


def io_casts(*types: str) -> dict[tuple[str, str], str]:
    """``{(t, "text"): "assignment", ("text", t): "explicit"}`` for each of ``types``."""
    out: dict[tuple[str, str], str] = {}
    for t in types:
        out[(t, "text")] = "assignment"
        out[("text", t)] = "explicit"
    return out


def element_wise(from_: str, to: str, is_type, element_type, element_context, to_text: str):
    """The casts of a parametric type (``is_type``): between two of its types when their
    elements convert, in the elements' context (``element_context``); to ``text`` in context
    ``to_text``; from ``text`` explicitly.  None for any other pair."""
    f, t = is_type(from_), is_type(to)
    if f and t:
        return element_context(element_type(from_), element_type(to))
    if f and to == "text":
        return to_text
    if t and from_ == "text":
        return "explicit"
    return None


def bad(msg: str, code: str = "22023") -> ProgrammingError:
    return ProgrammingError(msg, sqlstate=code)


def merged(families: dict, attr: str, where: str) -> dict:
    """One table from the tables named ``attr`` of ``families`` (name -> module); a key two
    families declare raises."""
    out: dict = {}
    for name, fam in families.items():
        for k, v in getattr(fam, attr, {}).items():
            if k in out:
                raise AssertionError(f"{where}: {attr} {k!r} declared twice ({name})")
            out[k] = v
    return out
