"""Signatures of Materialize's list functions, operators and ``list_agg``.

Owns the polymorphic (``listany``/``listelementany``) resolution of ``list_length``,
``list_append``, ``list_prepend``, ``list_cat``, ``list_remove``, ``list_n_layers``, the
operators ``||`` (list || list, list || element, element || list), ``@>``/``<@`` and the
comparisons on lists, the aggregate ``list_agg(x) -> x list`` and ``unnest(list)``; consulted
first by ``sql.functions`` through ``resolve_function_hook``/``resolve_operator_hook``/
``resolve_aggregate_hook`` (and by ``sql.functions_document.resolve_table_function``).
Polymorphic func ids do not depend on the element type; a ``Resolution``'s argument types
carry the concrete list types.  An unknown-typed argument in a ``listany`` position is read
as that list type (as PostgreSQL reads one against ``anyarray``).
Invariant: every func id named here is implemented in ``expr.functions.lists``; a hook
returns None for every name and operand type that is not its own.
Deliberately not here: constructors and subscripts (``planner.bind_lists``), evaluation.
"""
from __future__ import annotations

from sql import functions as F
from sql.errors import ProgrammingError
from sql.types import can_cast, common_type, display_name
from sql.types_lists import element_type, is_list, layers, list_of

Resolution = F.Resolution
AggResolution = F.AggResolution

F._AGGS.setdefault("list_agg", [])

#: func ids produced by the hooks (for ``sql.functions.all_func_ids``)
HOOK_FUNC_IDS = {"list_length", "list_append", "list_prepend", "list_cat", "list_remove", "list_n_layers_1",
                 "list_contains", "list_contained", "eq", "neq", "lt", "lte", "gt", "gte"}

_FUNCS = ("list_length", "list_append", "list_prepend", "list_cat", "list_remove", "list_n_layers")


def _nofunc(name, args):
    return ProgrammingError(f"function {name}({', '.join(display_name(a) for a in args)}) does not exist",
                            sqlstate="42883", hint="No function matches the given name and argument types. "
                                                   "You might need to add explicit type casts.")


def _noop(o, left, right):
    return ProgrammingError(f"operator does not exist: {display_name(left)} {o} {display_name(right)}",
                            sqlstate="42883", hint="No operator matches the given name and argument types. "
                                                   "You might need to add explicit type casts.")


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


def resolve_function_hook(name: str, args: tuple):
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
        raise _nofunc(name, args)
    return r


def resolve_operator_hook(o: str, left: str, right):
    """``||``, ``@>``, ``<@`` and the comparisons when an operand is a list; None otherwise."""
    if right is None or not (is_list(left) or is_list(right)):
        return None
    if o == "||":
        r = _cat(left, right) if (is_list(left) and is_list(right)) or "unknown" in (left, right) else None
        r = r or _append(left, right) or _prepend(left, right)
        if r is None:
            raise _noop(o, left, right)
        return r
    if o in F._CMP or o in ("@>", "<@"):
        t = left if right == "unknown" else right if left == "unknown" else common_type([left, right])
        if t is None or not is_list(t):
            raise _noop(o, left, right)
        fid = F._CMP.get(o) or ("list_contains" if o == "@>" else "list_contained")
        return Resolution(fid, (t, t), "bool")
    return None


def resolve_aggregate_hook(n: str, args: tuple):
    """``list_agg(x) -> x list`` (an unknown argument is text)."""
    if n != "list_agg":
        return None
    if len(args) != 1:
        raise _nofunc(n, args)
    t = "text" if args[0] == "unknown" else args[0]
    if t == "record":
        raise _nofunc(n, args)
    return AggResolution("list_agg", t, list_of(t))


def resolve_table_function(name: str, args: tuple):
    """``unnest(l)``: one row per element; None when the argument is not a list."""
    if name != "unnest" or len(args) != 1 or not is_list(args[0]):
        return None
    return "unnest", (args[0],), ("unnest",), (element_type(args[0]),)
