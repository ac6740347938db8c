"""Signatures of Materialize's map functions and operators.

Owns the polymorphic resolution of ``map_length`` (``resolve_function``) and of the map
operators (``resolve_operator``): ``m ? k`` (has the key), ``m ?& ks`` / ``m ?| ks`` (has every
/ any key of a ``text[]``), ``m @> m2`` / ``m <@ m2`` (containment: every entry of the
contained map is in the other, values equal), ``m -> k`` (the value, NULL when absent),
``m -> ks`` (the values as an array), and the comparisons of two maps of one type.  An
unknown-typed operand is read as the type the operator needs (``text``, ``text[]``, or the
other operand's map type).
Invariant: every func id here is implemented in ``expr.functions.maps`` (comparisons:
``expr.functions.generic``); a hook returns None for every name and operand type that is not
its own, except the unknown-operand forms Materialize calls ambiguous because a map and a
jsonb both fit (``NULL -> 'k'::text``, 42725) or undeterminable (``NULL -> ks``,
``NULL ?& 'k'``, 42P18).
Deliberately not here: map values and evaluation, the type names (``sql.types.maps``).
"""
from __future__ import annotations

from sql.functions.common import CMP, Resolution, err, no_function, no_operator
from sql.types.maps import is_map, value_type

#: func ids the resolution produces beyond the tables above
FUNC_IDS = {"map_length": "resolve_function", "map_contains_key": "resolve_operator ?",
            "map_contains_all_keys": "resolve_operator ?&", "map_contains_any_keys": "resolve_operator ?|",
            "map_contains_map": "resolve_operator @>", "map_contained_by_map": "resolve_operator <@",
            "map_get_value": "resolve_operator -> text", "map_get_values": "resolve_operator -> text[]"}

_KEY_OPS = {"?": ("map_contains_key", "text"), "?&": ("map_contains_all_keys", "text[]"),
            "?|": ("map_contains_any_keys", "text[]")}


def resolve_function(name: str, args: tuple):
    """``map_length(m)``; None for every other name."""
    if name != "map_length":
        return None
    if len(args) == 1 and is_map(args[0]):
        return Resolution("map_length", args, "int4")
    raise no_function(name, args)


def resolve_operator(o: str, left: str, right):
    """The map operators when the left operand is a map (or ``->`` on an unknown one); None
    otherwise."""
    if right is None:
        return None
    if not is_map(left):
        if is_map(right) and (o in CMP or o in ("@>", "<@")) and left == "unknown":
            return resolve_operator(o, right, right)
        if is_map(right):
            raise no_operator(o, left, right)
        if left == "unknown" and ((o == "->" and right == "text[]") or (o in ("?&", "?|") and right == "unknown")):
            raise err("could not determine polymorphic type because input has type unknown", "42P18")
        if left == "unknown" and o == "->" and right == "text":
            raise err("operator is not unique: unknown -> text", "42725")
        return None
    if o in _KEY_OPS:
        fid, want = _KEY_OPS[o]
        if right in (want, "unknown"):
            return Resolution(fid, (left, want), "bool")
        raise no_operator(o, left, right)
    if o == "->":
        if right in ("text", "unknown"):
            return Resolution("map_get_value", (left, "text"), value_type(left))
        if right == "text[]":
            return Resolution("map_get_values", (left, "text[]"), value_type(left) + "[]")
        raise no_operator(o, left, right)
    if o in CMP or o in ("@>", "<@"):
        if right not in (left, "unknown"):
            raise no_operator(o, left, right)
        fid = CMP.get(o) or ("map_contains_map" if o == "@>" else "map_contained_by_map")
        return Resolution(fid, (left, left), "bool")
    return None
