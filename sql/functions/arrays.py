"""Signatures of the functions and operators over arrays (PostgreSQL's ``anyarray`` forms).

Owns the polymorphic resolution ``sql.functions`` asks this module for
(``resolve_function``: ``array_length``/``array_lower``/``array_upper``, ``cardinality``,
``array_ndims``/``array_dims``, ``array_position``, ``array_remove``/``array_replace``,
``array_to_string``, ``array_cat``/``array_append``/``array_prepend``, ``array_fill`` (an
element of any type but an array, list, map or ``char``, as Materialize allows);
``resolve_operator``: ``=``/``<``/..., ``@>``/``<@``/``&&`` and ``||`` when an operand is an
array; ``resolve_table_function``: ``unnest(anyarray)`` and the zipped ``unnest(a, b, ...)``).
Polymorphic func ids are element-type independent (``array_length``); the argument types of
a ``Resolution`` carry the concrete array types.
Invariant: every func id here is implemented in ``expr.functions.arrays`` (comparisons:
``expr.functions.generic``); a hook returns None for every name and operand it does not own.
Deliberately not here: binding the array syntax (constructors, subscripts, ANY/ALL:
``planner.bind_document``, whose func ids ``FUNC_IDS`` names) and ``array_agg``
(``sql.functions.aggregates``).
"""
from __future__ import annotations

from sql.errors import ProgrammingError
from sql.functions.common import CMP, FUNCTION_HINT, Resolution, err, no_function
from sql.types import can_cast, common_type, display_name
from sql.types.arrays import element_type, is_array

#: func ids the resolution produces or the binder writes beyond the tables above
FUNC_IDS = {**{f: "resolve_function" for f in (
    "array_length", "array_lower", "array_upper", "array_cardinality", "array_ndims", "array_dims",
    "array_position", "array_remove", "array_replace", "array_to_string", "array_cat", "array_append",
    "array_prepend", "array_fill")},
    **{f: "resolve_operator" for f in ("array_contains", "array_contained", "array_overlap")},
    "array_create": "ARRAY[x, ...] (planner.bind_document)", "array_create_md": "ARRAY[array, ...]",
    "array_index": "a[i]", "array_slice": "a[i:j]", "array_any": "x op ANY(a)", "array_all": "x op ALL(a)"}


def _array_arg(t: str):
    """The array type an argument of ``anyarray`` has (None: not an array)."""
    return t if is_array(t) else None


def resolve_function(name: str, args: tuple):
    """A ``Resolution`` for the polymorphic array functions, None for every other name."""
    if name in ("array_length", "array_lower", "array_upper"):
        if len(args) != 2 or not _array_arg(args[0]) or not can_cast(args[1], "int4", "implicit"):
            raise no_function(name, args)
        return Resolution(name, (args[0], "int4"), "int4")
    if name == "cardinality":
        if len(args) != 1 or not _array_arg(args[0]):
            raise no_function(name, args)
        return Resolution("array_cardinality", args, "int4")
    if name in ("array_ndims", "array_dims"):  # multi-dimensional arrays (repr.arrays)
        if len(args) != 1 or not _array_arg(args[0]):
            raise no_function(name, args)
        return Resolution(name, args, "int4" if name == "array_ndims" else "text")
    if name == "array_position":
        if len(args) not in (2, 3) or not _array_arg(args[0]):
            raise no_function(name, args)
        el = element_type(args[0])
        if not can_cast(args[1], el, "implicit"):
            raise no_function(name, args)
        return Resolution("array_position", (args[0], el) + (("int4",) if len(args) == 3 else ()), "int4")
    if name == "array_remove":
        if len(args) != 2 or not _array_arg(args[0]) or not can_cast(args[1], element_type(args[0]), "implicit"):
            raise no_function(name, args)
        return Resolution("array_remove", (args[0], element_type(args[0])), args[0])
    if name == "array_replace":
        if len(args) != 3 or not _array_arg(args[0]):
            raise no_function(name, args)
        el = element_type(args[0])
        return Resolution("array_replace", (args[0], el, el), args[0])
    if name == "array_to_string":
        if len(args) not in (2, 3) or not _array_arg(args[0]):
            raise no_function(name, args)
        return Resolution("array_to_string", (args[0],) + ("text",) * (len(args) - 1), "text")
    if name == "array_fill":
        return _array_fill(args)
    if name in ("array_cat", "array_append", "array_prepend"):
        if len(args) != 2:
            raise no_function(name, args)
        r = _array_concat(*args) if name == "array_cat" else None
        if name == "array_append" and _array_arg(args[0]):
            r = Resolution("array_append", (args[0], element_type(args[0])), args[0])
        if name == "array_prepend" and _array_arg(args[1]):
            r = Resolution("array_prepend", (element_type(args[1]), args[1]), args[1])
        if r is None or r.func_id != name:
            raise no_function(name, args)
        return r
    return None


def _array_fill(args: tuple) -> Resolution:
    """``array_fill(value, dims int[] [, lower_bounds int[]])``: an array of ``value``'s type."""
    from sql.types import category
    if len(args) not in (2, 3) or not all(can_cast(a, "int4[]", "implicit") for a in args[1:]):
        raise no_function("array_fill", args)
    el = args[0]
    if el == "unknown":
        raise err("could not determine polymorphic type because input has type unknown", "42804")
    if is_array(el):
        raise err("array_fill with arrays not yet supported", "0A000")
    if category(el) in ("L", "M") or el == "bpchar":
        raise err(f"array_fill on {display_name(el)} not yet supported", "0A000")
    return Resolution("array_fill", (el,) + ("int4[]",) * (len(args) - 1), el + "[]")


def _array_concat(lt: str, rt: str):
    la, ra = is_array(lt), is_array(rt)
    if la and ra:
        t = common_type([lt, rt])
        if t is None:
            return None
        return Resolution("array_cat", (t, t), t)
    if la and rt == "unknown":
        return Resolution("array_cat", (lt, lt), lt)
    if ra and lt == "unknown":
        return Resolution("array_cat", (rt, rt), rt)
    if la and can_cast(rt, element_type(lt), "implicit"):
        return Resolution("array_append", (lt, element_type(lt)), lt)
    if ra and can_cast(lt, element_type(rt), "implicit"):
        return Resolution("array_prepend", (element_type(rt), rt), rt)
    return None


def _no_operator(o: str, left: str, right: str):
    return err(f"operator does not exist: {display_name(left)} {o} {display_name(right)}", "42883", FUNCTION_HINT)


def resolve_operator(o: str, left: str, right):
    """Array operators (comparisons, ``@>``/``<@``/``&&``, ``||``); None for everything else."""
    if right is None:
        return None
    la, ra = is_array(left), is_array(right)
    if not (la or ra):
        return None
    if o == "||":
        if (la and right == "text") or (ra and left == "text"):
            if not ((la and element_type(left) == "text") or (ra and element_type(right) == "text")):
                return None
        r = _array_concat(left, right)
        if r is None:
            raise _no_operator(o, left, right)
        return r
    t = left if la else right
    other = right if la else left
    if other != "unknown" and not is_array(other):
        return None  # e.g. jsonb - text[]: the fixed-type tables
    if other != "unknown" and other != t:
        t = common_type([left, right]) if is_array(other) else None
    if t is None:
        raise _no_operator(o, left, right)
    if o in CMP:
        return Resolution(CMP[o], (t, t), "bool")
    ops = {"@>": "array_contains", "<@": "array_contained", "&&": "array_overlap"}
    if o in ops:
        return Resolution(ops[o], (t, t), "bool")
    return None


def _not_unique():
    return ProgrammingError("function unnest(unknown) is not unique", sqlstate="42725",
                            hint="Could not choose a best candidate function. "
                                 "You might need to add explicit type casts.")


def resolve_table_function(name: str, args: tuple):
    """``(func id, parameter types, column names, column types)`` of ``unnest`` over arrays
    (several arrays: zipped, ``repr.arrays.unnest_zip``); None for other names."""
    if name != "unnest":
        return None
    if len(args) > 1:
        if "unknown" in args:
            raise _not_unique()
        if not all(is_array(a) for a in args):
            raise no_function(name, args)
        return "unnest_zip", tuple(args), ("unnest",) * len(args), tuple(element_type(a) for a in args)
    if len(args) != 1:
        raise no_function(name, args)
    if args[0] == "unknown":
        raise _not_unique()
    if not is_array(args[0]):
        raise no_function(name, args)
    return "unnest", (args[0],), ("unnest",), (element_type(args[0]),)
