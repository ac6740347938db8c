"""The functions over Materialize's lists (``repr.lists.List``).

Owns the func ids ``sql.functions.lists`` and ``planner.bind_lists`` produce: the
constructor (``list_create``), indexing and slicing (``list_index``, ``list_slice``: 1-based,
out-of-range index NULL, a slice clamped to the list), ``list_length``, ``list_append``,
``list_prepend``, ``list_cat`` (NULL operands act as empty lists, as Materialize's list
concatenations do), ``list_remove`` (every element equal to the value, NULL included),
``list_contains``/``list_contained`` (``@>``/``<@``: a NULL element on the contained side is
never contained), and, synthesized per type (``RESOLVERS``): ``list_n_layers_<n>`` (the
layer count is the type's, fixed at plan time), ``cast_text_to_int4 list``
(``repr.lists.parse_list`` with the innermost element's input function), ``cast_int4
list_to_text``, ``cast_int4 list_to_jsonb`` (a JSON array), ``cast_int4 list_to_int8 list``
(element by element) and ``cast_int4[]_to_int4 list``.
Invariant: raises only ``EvalError``; values built here are ``List``s.
Deliberately not here: the value class and text format (``repr.lists``) and signatures.
"""
from __future__ import annotations

import functools

from expr.functions.common import FuncImpl, add
from expr.functions.jsonb import to_jsonb_value
from repr.jsonb import Jsonb
from repr.lists import List, parse_list
from repr.strconv import to_text

FUNCTIONS: dict = {}
_reg = functools.partial(add, FUNCTIONS)

_SUFFIX = " list"


def _element_cast(frm: str, to: str, functions):
    """The element conversion ``frm -> to`` (None: no such cast)."""
    if frm == to:
        return lambda x: x
    impl = functions.get(f"cast_{frm}_to_{to}")
    return None if impl is None else impl.fn


def _text_input(t: str, functions):
    """The text input function of the (non-list) type ``t``."""
    if t == "text":
        return lambda s: s
    impl = functions.get(f"cast_text_to_{t}")
    return None if impl is None else impl.fn


def _list_functions(fid: str, functions):
    """Synthesize ``cast_text_to_L``, ``cast_L_to_text``, ``cast_L1_to_L2``,
    ``cast_A[]_to_L`` and ``list_n_layers_<n>`` (None: not one of them)."""
    if not isinstance(fid, str):
        return None
    if fid.startswith("list_n_layers_") and fid[14:].isdigit():
        n = int(fid[14:])
        return FuncImpl(lambda lst: n)
    if not fid.startswith("cast_") or _SUFFIX not in fid:
        return None
    frm, _, to = fid[5:].partition("_to_")
    if frm == "text" and to.endswith(_SUFFIX):
        inner, layers = to, 0
        while inner.endswith(_SUFFIX):
            inner, layers = inner[:-len(_SUFFIX)], layers + 1
        parse = _text_input(inner, functions)
        if parse is None:
            return None
        return FuncImpl(lambda s: parse_list(s, parse, layers))
    if frm.endswith(_SUFFIX) and to == "text":
        return FuncImpl(to_text)
    if frm.endswith(_SUFFIX) and to == "jsonb":
        return FuncImpl(list_jsonb)
    if frm.endswith(_SUFFIX) and to.endswith(_SUFFIX):
        f = _element_cast(frm[:-len(_SUFFIX)], to[:-len(_SUFFIX)], functions)
        if f is None:
            return None
        return FuncImpl(lambda lst: List([None if x is None else f(x) for x in lst]))
    if frm.endswith("[]") and to.endswith(_SUFFIX):
        f = _element_cast(frm[:-2], to[:-len(_SUFFIX)], functions)
        if f is None:
            return None
        return FuncImpl(lambda arr: List([None if x is None else f(x) for x in arr]))
    return None


#: see ``expr.functions.Registry``
RESOLVERS = (_list_functions,)


def _jsonb_value(x):
    return tuple(None if e is None else _jsonb_value(e) for e in x) if isinstance(x, List) else to_jsonb_value(x)


def list_jsonb(lst):
    """A list as a JSON array (layers as nested arrays, NULL elements as JSON null)."""
    return Jsonb(_jsonb_value(lst))


def list_index(lst, i):
    return lst[i - 1] if 1 <= i <= len(lst) else None


def list_slice(lst, lo, hi):
    if lst is None:
        return None
    n = len(lst)
    lo = 1 if lo is None else max(lo, 1)
    hi = n if hi is None else min(hi, n)
    return List(lst[lo - 1:hi]) if lo <= hi else List(())


def list_cat(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return List(tuple(a) + tuple(b))


def list_append(lst, x):
    return List((tuple(lst) if lst is not None else ()) + (x,))


def list_prepend(x, lst):
    return List((x,) + (tuple(lst) if lst is not None else ()))


def _same(x, y) -> bool:
    return (x is None and y is None) or (x is not None and y is not None and x == y)


def list_remove(lst, x):
    if lst is None:
        return None
    return List([e for e in lst if not _same(e, x)])


def list_contains(a, b) -> bool:
    if any(y is None for y in b):
        return False
    have = [x for x in a if x is not None]
    return all(any(y == x for x in have) for y in b)


_reg("list_create", lambda *xs: List(xs), strict=False)
_reg("list_index", list_index)
_reg("list_slice", list_slice, strict=False)
_reg("list_length", len)
_reg("list_cat", list_cat, strict=False)
_reg("list_append", list_append, strict=False)
_reg("list_prepend", list_prepend, strict=False)
_reg("list_remove", list_remove, strict=False)
_reg("list_contains", list_contains)
_reg("list_contained", lambda a, b: list_contains(b, a))
