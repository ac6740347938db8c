"""SQL typing of Materialize's ``list`` types (``int4 list``, ``text list list``, ``int4[] list``).

Owns the list type names (the element type's short name followed by `` list``; one
`` list`` per layer), their display names (``integer list``), category, validity and casts
(``list_cast_context``: list to list when the elements convert, in the elements' context;
list to text implicitly and text to list explicitly, as Materialize documents; array to
list and list to jsonb explicitly).  Like array types, list types are not keys of ``sql.types.TYPES`` (there
is one per element type): ``sql.types`` asks this module through small hooks.
Invariant: ``element_type(list_of(t)) == t``; an array of lists does not exist.
Deliberately not here: values and evaluation (``repr.lists``, ``expr.functions.lists``),
signatures (``sql.functions_lists``) and the ``int list`` syntax (``sql.syntax_lists``).
"""
from __future__ import annotations

SUFFIX = " list"


def is_list(t: str) -> bool:
    return t.endswith(SUFFIX)


def element_type(t: str) -> str:
    return t[:-len(SUFFIX)]


def list_of(t: str) -> str:
    return t + SUFFIX


def layers(t: str) -> int:
    """The number of list layers of ``t`` (0 for a non-list type)."""
    n = 0
    while is_list(t):
        t = element_type(t)
        n += 1
    return n


def innermost(t: str) -> str:
    while is_list(t):
        t = element_type(t)
    return t


def list_cast_context(from_: str, to: str):
    """The least context converting ``from_`` to ``to`` when either is a list type (None:
    no such cast, or neither is a list)."""
    from sql import types as T
    fl, tl = is_list(from_), is_list(to)
    if fl and tl:
        return T.cast_context(element_type(from_), element_type(to))
    if fl and to == "text":
        return "implicit"
    if fl and to == "jsonb":
        return "explicit"
    if tl and from_ == "text":
        return "explicit"
    if tl and from_.endswith("[]") and T.cast_context(from_[:-2], element_type(to)) is not None:
        return "explicit"
    return None


def normalize(n: str, normalize_type_name) -> str:
    """The short name of the spelling ``n`` ending in `` list`` (``int list`` -> ``int4 list``)."""
    el = normalize_type_name(n[:-len(SUFFIX)])
    if el == "unknown":
        from sql.errors import ProgrammingError
        raise ProgrammingError(f'type "{n}" does not exist', sqlstate="42704")
    return list_of(el)
