"""SQL typing of Materialize's ``list`` types (``int4 list``, ``text list list``, ``int4[] list``).

Owns the list type names (the element type's short name followed by `` list``; one
`` list`` per layer: ``is_list``, ``element_type``, ``list_of``, ``layers``), their category
(``CATEGORY``, a pseudo-category ``L``), spelling (``normalize``) and casts (``cast_context``:
list to list when the elements convert, in the elements' context; list to text implicitly
and text to list explicitly, as Materialize documents; array to list and list to jsonb
explicitly).  Like array types, list types are not keys of ``sql.types.TYPES`` (there is
one per element type): ``sql.types`` asks this module.
Invariant: ``element_type(list_of(t)) == t``; an array of lists does not exist.
Deliberately not here: values and evaluation (``repr.lists``, ``expr.functions.lists``),
signatures (``sql.functions.lists``) and the ``int list`` syntax (``sql.syntax_lists``).
"""
from __future__ import annotations

from sql.errors import ProgrammingError
from sql.types.common import element_wise

SUFFIX = " list"
CATEGORY = "L"


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


def cast_context(from_: str, to: str, element_context):
    """The least context converting ``from_`` to ``to`` when either is a list type (None:
    no such cast); ``element_context`` is ``sql.types.cast_context``, for the elements."""
    c = element_wise(from_, to, is_list, element_type, element_context, "implicit")
    if c is not None:
        return c
    if is_list(from_) and to == "jsonb":
        return "explicit"
    if is_list(to) and from_.endswith("[]") and element_context(from_[:-2], element_type(to)) is not None:
        return "explicit"
    return None


def normalize(n: str, normalize_type_name) -> str:
    """The short name of the spelling ``n`` ending in `` list`` (``int list`` -> ``int4 list``)."""
    el = normalize_type_name(n[:-len(SUFFIX)])
    if el == "unknown":
        raise ProgrammingError(f'type "{n}" does not exist', sqlstate="42704")
    return list_of(el)
