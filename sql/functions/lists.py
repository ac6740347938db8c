"""Signatures of Materialize's list functions and operators.

Owns the polymorphic (``listany``/``listelementany``) resolution of ``list_length``,
``list_append``, ``list_prepend``, ``list_cat``, ``list_remove``, ``list_n_layers``
(``resolve_function``), the operators ``||`` (list || list, list || element, element ||
list), ``@>``/``<@`` and the comparisons on lists (``resolve_operator``) and ``unnest(list)``
(``resolve_table_function``), which ``sql.functions`` asks before the tables.
Polymorphic func ids do not depend on the element type; a ``Resolution``'s argument types
carry the concrete list types.  An unknown-typed argument in a ``listany`` position is read
as that list type (as PostgreSQL reads one against ``anyarray``).
Invariant: every func id here is implemented in ``expr.functions.lists`` (comparisons:
``expr.functions.generic``); a hook returns None for every name and operand type that is
not its own.
Deliberately not here: constructors and subscripts (``planner.bind_lists``, whose func ids
``FUNC_IDS`` names), ``list_agg`` (``sql.functions.aggregates``), evaluation.
"""
from __future__ import annotations

from sql.functions.common import CMP, Resolution, no_function, no_operator
from sql.types import can_cast, common_type
from sql.types.lists import element_type, is_list, layers

#: func ids the resolution produces or the binder writes beyond the tables above
FUNC_IDS = {**{f: "resolve_function" for f in ("list_length", "list_append", "list_prepend", "list_cat",
                                                 "list_remove")},
            "list_n_layers_1": "resolve_function (list_n_layers_<n>, one per layer count, synthesized)",
            "list_contains": "resolve_operator @>", "list_contained": "resolve_operator <@",
            "list_create": "LIST[x, ...] (planner.bind_lists)", "list_index": "l[i]", "list_slice": "l[i:j]"}

_FUNCS = ("list_length", "list_append", "list_prepend", "list_cat", "list_remove", "list_n_layers")


def _element_fits(et: str, el: str) -> bool:
    """``et`` converts to the element type ``el`` (a list never through its cast to text)."""
    return can_cast(et, el, "implicit") and (is_list(et) == is_list(el) or et == "unknown")


def _append(lt: str, et: str):
    if is_list(lt) and _element_fits(et, element_type(lt)):
        return Resolution("list_append", (lt, element_type(lt)), lt)
    return None


def _prepend(et: str, rt: str):
    if is_list(rt) and _element_fits(et, element_type(rt)):
        return Resolution("list_prepend", (element_type(rt), rt), rt)
    return None


def _cat(lt: str, rt: str):
    if is_list(lt) and rt == "unknown":
        return Resolution("list_cat", (lt, lt), lt)
    if is_list(rt) and lt == "unknown":
        return Resolution("list_cat", (rt, rt), rt)
    if is_list(lt) and is_list(rt):
        t = common_type([lt, rt])
        if t is not None:
            return Resolution("list_cat", (t, t), t)
    return None


def resolve_function(name: str, args: tuple):
    """A ``Resolution`` for the list functions; None for every other name."""
    if name not in _FUNCS:
        return None
    r = None
    if name == "list_length" and len(args) == 1 and is_list(args[0]):
        r = Resolution(name, args, "int4")
    elif name == "list_n_layers" and len(args) == 1 and is_list(args[0]):  # the type's layer count
        r = Resolution(f"list_n_layers_{layers(args[0])}", args, "int4")
    elif name == "list_append" and len(args) == 2:
        r = _append(*args)
    elif name == "list_prepend" and len(args) == 2:
        r = _prepend(*args)
    elif name == "list_cat" and len(args) == 2:
        r = _cat(*args)
    elif name == "list_remove" and len(args) == 2 and is_list(args[0]) \
            and _element_fits(args[1], element_type(args[0])):
        r = Resolution("list_remove", (args[0], element_type(args[0])), args[0])
    if r is None:
        raise no_function(name, args)
    return r


def resolve_operator(o: str, left: str, right):
    """``||``, ``@>``, ``<@`` and the comparisons when an operand is a list; None otherwise."""
    if right is None or not (is_list(left) or is_list(right)):
        return None
    if o == "||":
        r = _cat(left, right) if (is_list(left) and is_list(right)) or "unknown" in (left, right) else None
        r = r or _append(left, right) or _prepend(left, right)
        if r is None:
            raise no_operator(o, left, right)
        return r
    if o in CMP or o in ("@>", "<@"):
        t = left if right == "unknown" else right if left == "unknown" else common_type([left, right])
        if t is None or not is_list(t):
            raise no_operator(o, left, right)
        fid = CMP.get(o) or ("list_contains" if o == "@>" else "list_contained")
        return Resolution(fid, (t, t), "bool")
    return None


def resolve_table_function(name: str, args: tuple):
    """``unnest(l)``: one row per element; None when the argument is not a list."""
    if name != "unnest" or len(args) != 1 or not is_list(args[0]):
        return None
    return "unnest", (args[0],), ("unnest",), (element_type(args[0]),)
