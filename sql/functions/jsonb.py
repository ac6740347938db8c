"""Signatures of the functions, operators and table functions over ``jsonb``.

Owns the fixed-type entries (``jsonb_typeof``, ``jsonb_array_length``,
``jsonb_strip_nulls``, ``jsonb_pretty``; ``->``/``->>`` by key or index, ``#>``/``#>>``,
``@>``/``<@``, ``?``/``?|``/``?&``, ``-``/``#-``, the comparisons), the polymorphic ones
PostgreSQL declares over ``anyelement``/``variadic "any"`` (``resolve_function``:
``to_jsonb``, ``jsonb_build_object``/``jsonb_build_array``, ``jsonb_extract_path[_text]``),
``||`` (``resolve_operator``: ``jsonb || jsonb``, an unknown operand read as jsonb) and the
table functions (``TABLE_FUNCTIONS``: ``jsonb_each`` ...).
Invariant: every func id here is implemented in ``expr.functions.jsonb`` (comparisons:
``expr.functions.generic``), every table function in its ``TABLE_FUNCTIONS``; a hook
returns None for every name and operand it does not own.
Deliberately not here: ``jsonb_agg``/``jsonb_object_agg`` (``sql.functions.aggregates``).
"""
from __future__ import annotations

from sql.errors import ProgrammingError
from sql.functions.common import CMP, Resolution, no_function, sigs
from sql.types import can_cast

FUNCTIONS = sigs(("jsonb_typeof", ("jsonb",), "text", "jsonb_typeof"),
                 ("jsonb_array_length", ("jsonb",), "int4", "jsonb_array_length"),
                 ("jsonb_strip_nulls", ("jsonb",), "jsonb", "jsonb_strip_nulls"),
                 ("jsonb_pretty", ("jsonb",), "text", "jsonb_pretty"))
OPERATORS = sigs(*((op, ("jsonb", r), ret, fid) for op, fid, r, ret in (
    ("->", "jsonb_get", "text", "jsonb"), ("->", "jsonb_get", "int4", "jsonb"),
    ("->>", "jsonb_get_text", "text", "text"), ("->>", "jsonb_get_text", "int4", "text"),
    ("#>", "jsonb_get_path", "text[]", "jsonb"), ("#>>", "jsonb_get_path_text", "text[]", "text"),
    ("@>", "jsonb_contains", "jsonb", "bool"), ("<@", "jsonb_contained", "jsonb", "bool"),
    ("?", "jsonb_exists", "text", "bool"), ("?|", "jsonb_exists_any", "text[]", "bool"),
    ("?&", "jsonb_exists_all", "text[]", "bool"), ("-", "jsonb_delete", "text", "jsonb"),
    ("-", "jsonb_delete", "int4", "jsonb"), ("-", "jsonb_delete_keys", "text[]", "jsonb"),
    ("#-", "jsonb_delete_path", "text[]", "jsonb"))),
                 *((op, ("jsonb", "jsonb"), "bool", fid) for op, fid in CMP.items()))
#: func ids the resolution produces beyond the tables above
FUNC_IDS = {"to_jsonb": "resolve_function", "jsonb_build_object": "resolve_function",
            "jsonb_build_array": "resolve_function", "jsonb_extract_path": "resolve_function",
            "jsonb_extract_path_text": "resolve_function", "jsonb_concat": "resolve_operator ||"}

#: name -> (parameter types, output column names, output column types)
TABLE_FUNCTIONS = {
    "jsonb_each": (("jsonb",), ("key", "value"), ("text", "jsonb")),
    "jsonb_each_text": (("jsonb",), ("key", "value"), ("text", "text")),
    "jsonb_array_elements": (("jsonb",), ("value",), ("jsonb",)),
    "jsonb_array_elements_text": (("jsonb",), ("value",), ("text",)),
    "jsonb_object_keys": (("jsonb",), ("jsonb_object_keys",), ("text",)),
}


def resolve_function(name: str, args: tuple):
    """The polymorphic jsonb functions; None for every other name."""
    if name == "to_jsonb":
        if len(args) != 1:
            raise no_function(name, args)
        return Resolution("to_jsonb", tuple("text" if a == "unknown" else a for a in args), "jsonb")
    if name in ("jsonb_build_object", "jsonb_build_array"):
        if name == "jsonb_build_object" and len(args) % 2:
            raise ProgrammingError("argument list must have even number of elements", sqlstate="22023",
                                   hint="The arguments of jsonb_build_object() must consist of alternating "
                                        "keys and values.")
        return Resolution(name, tuple("text" if a == "unknown" else a for a in args), "jsonb")
    if name in ("jsonb_extract_path", "jsonb_extract_path_text"):
        if not args or not can_cast(args[0], "jsonb", "implicit") or \
                not all(can_cast(a, "text", "implicit") for a in args[1:]):
            raise no_function(name, args)
        return Resolution(name, ("jsonb",) + ("text",) * (len(args) - 1),
                          "jsonb" if name == "jsonb_extract_path" else "text")
    return None


def resolve_operator(o: str, left: str, right):
    if o == "||" and right is not None and (left == "jsonb" and right in ("jsonb", "unknown")
                                            or right == "jsonb" and left == "unknown"):
        return Resolution("jsonb_concat", ("jsonb", "jsonb"), "jsonb")
    return None
