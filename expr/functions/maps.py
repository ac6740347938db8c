"""The functions over Materialize's maps (``repr.maps.Map``).

Owns the func ids ``sql.functions.maps`` produces: ``map_length``, ``map_contains_key``
(``?``), ``map_contains_all_keys`` / ``map_contains_any_keys`` (``?&`` / ``?|``: a NULL key in
the array is never present), ``map_contains_map`` / ``map_contained_by_map`` (``@>`` /
``<@``), ``map_get_value`` / ``map_get_values`` (``->``: NULL for an absent key), and,
synthesized per type (``RESOLVERS``), the casts ``cast_text_to_map[text=>T]``
(``repr.maps.parse_map`` with ``T``'s input function, nested maps through their own) and
``cast_map[text=>T]_to_text``.
Invariant: raises only ``EvalError``; values built here are ``Map``s.
Deliberately not here: the value class and text format (``repr.maps``) and signatures.
"""
from __future__ import annotations

import functools

from expr.functions.common import FuncImpl, add
from repr.arrays import Array
from repr.maps import Map, parse_map
from repr.strconv import to_text

FUNCTIONS: dict = {}
_reg = functools.partial(add, FUNCTIONS)

_PREFIX = "map[text=>"


def _input(t: str, functions):
    """The text input function of the value type ``t`` (a map type: its map parser)."""
    if t == "text":
        return lambda s: s
    if t.startswith(_PREFIX) and t.endswith("]"):
        inner = _input(t[len(_PREFIX):-1], functions)
        if inner is None:
            return None
        nested = t[len(_PREFIX):-1].startswith(_PREFIX)
        return lambda s: parse_map(s, inner, nested)
    impl = functions.get(f"cast_text_to_{t}")
    return None if impl is None else impl.fn


def _map_functions(fid, functions):
    """Synthesize ``cast_text_to_M`` and ``cast_M_to_text`` (None: not one of them)."""
    if not isinstance(fid, str) or not fid.startswith("cast_") or _PREFIX not in fid:
        return None
    if fid.startswith("cast_text_to_" + _PREFIX):
        parse = _input(fid[len("cast_text_to_"):], functions)
        return None if parse is None else FuncImpl(parse)
    if fid.startswith("cast_" + _PREFIX) and fid.endswith("]_to_text"):
        return FuncImpl(to_text)
    return None


#: see ``expr.functions.Registry``
RESOLVERS = (_map_functions,)


def _keys(ks):
    return [k for k in ks if k is not None]


def contains_all(m, ks) -> bool:
    have = m.key_set()
    return all(k is not None and k in have for k in ks)


def contains_any(m, ks) -> bool:
    have = m.key_set()
    return any(k in have for k in _keys(ks))


_MISSING = object()


def contains_map(a, b) -> bool:
    """Every entry of ``b`` is in ``a`` with an equal value (NULL values equal as entries)."""
    for k, v in b:
        w = a.get(k, _MISSING)
        if w is _MISSING or w != v:
            return False
    return True


_reg("map_length", len)
_reg("map_contains_key", lambda m, k: k in m.key_set())
_reg("map_contains_all_keys", contains_all)
_reg("map_contains_any_keys", contains_any)
_reg("map_contains_map", contains_map)
_reg("map_contained_by_map", lambda a, b: contains_map(b, a))
_reg("map_get_value", lambda m, k: m.get(k))
_reg("map_get_values", lambda m, ks: Array([None if k is None else m.get(k) for k in ks]))
