"""Signatures of the bytea, uuid, jsonb and array functions, operators and aggregates.

Owns: the fixed-type signatures (added to ``sql.functions``' tables, e.g.
``jsonb_typeof(jsonb) -> text``, ``bytea || bytea``, ``jsonb -> text``) and the
*polymorphic* ones PostgreSQL declares over ``anyarray``/``anyelement`` (``array_length``,
``array_position``, ``array_to_string``, ``cardinality``, ``=``/``<``/``@>``/``||`` on arrays,
``to_jsonb``, ``jsonb_build_*``), resolved by the hooks ``resolve_function_hook``,
``resolve_operator_hook`` and ``resolve_aggregate_hook`` that ``sql.functions`` consults
first.  Polymorphic func ids are element-type independent (``array_length``), the argument
types of a ``Resolution`` carry the concrete array types.
Invariant: every func id named here is implemented in ``expr.functions.document``.
Deliberately not here: array constructor/subscript/ANY binding (``planner.bind_expr``)
and evaluation (``compute``).
"""
from __future__ import annotations

from sql import functions as F
from sql.errors import ProgrammingError
from sql.types import TYPES, can_cast, common_type, display_name
from sql.types_document import array_of, element_type, is_array

_add = F._add
Resolution = F.Resolution
AggResolution = F.AggResolution

# ------------------------------------------------------------------ fixed-type functions

for _n in ("length", "octet_length"):
    _add(_n, ("bytea",), "int4", "bytea_length")
for _n in ("substr", "substring"):
    _add(_n, ("bytea", "int4"), "bytea", "bytea_substr")
    _add(_n, ("bytea", "int4", "int4"), "bytea", "bytea_substr")
_add("encode", ("bytea", "text"), "text", "bytea_encode")
_add("decode", ("text", "text"), "bytea", "bytea_decode")
_add("md5", ("bytea",), "text", "bytea_md5")
_add("get_byte", ("bytea", "int4"), "int4", "bytea_get_byte")
_add("gen_random_uuid", (), "uuid", "gen_random_uuid")

_add("jsonb_typeof", ("jsonb",), "text", "jsonb_typeof")
_add("jsonb_array_length", ("jsonb",), "int4", "jsonb_array_length")
_add("jsonb_strip_nulls", ("jsonb",), "jsonb", "jsonb_strip_nulls")
_add("jsonb_pretty", ("jsonb",), "text", "jsonb_pretty")
_add("regexp_match", ("text", "text"), "text[]", "regexp_match")
_add("regexp_match", ("text", "text", "text"), "text[]", "regexp_match")
_add("regexp_split_to_array", ("text", "text"), "text[]", "regexp_split_to_array")
_add("regexp_split_to_array", ("text", "text", "text"), "text[]", "regexp_split_to_array")
_add("string_to_array", ("text", "text"), "text[]", "string_to_array")
_add("string_to_array", ("text", "text", "text"), "text[]", "string_to_array")

for _op, _fid, _r, _ret in (("->", "jsonb_get", "text", "jsonb"), ("->", "jsonb_get", "int4", "jsonb"),
                            ("->>", "jsonb_get_text", "text", "text"), ("->>", "jsonb_get_text", "int4", "text"),
                            ("#>", "jsonb_get_path", "text[]", "jsonb"),
                            ("#>>", "jsonb_get_path_text", "text[]", "text"),
                            ("@>", "jsonb_contains", "jsonb", "bool"), ("<@", "jsonb_contained", "jsonb", "bool"),
                            ("?", "jsonb_exists", "text", "bool"), ("?|", "jsonb_exists_any", "text[]", "bool"),
                            ("?&", "jsonb_exists_all", "text[]", "bool"), ("-", "jsonb_delete", "text", "jsonb"),
                            ("-", "jsonb_delete", "int4", "jsonb"), ("-", "jsonb_delete_keys", "text[]", "jsonb"),
                            ("#-", "jsonb_delete_path", "text[]", "jsonb")):
    F._OPS.setdefault(_op, []).append(F._Sig(("jsonb", _r), _ret, _fid))
for _op, _name in F._CMP.items():
    for _t in ("bytea", "uuid", "jsonb"):
        F._OPS.setdefault(_op, []).append(F._Sig((_t, _t), "bool", _name))

#: extra aggregate names (resolved by ``resolve_aggregate_hook``)
for _n in ("array_agg", "jsonb_agg", "jsonb_object_agg"):
    F._AGGS.setdefault(_n, [])

#: func ids produced by the hooks below (for ``sql.functions.all_func_ids``)
HOOK_FUNC_IDS = {"array_length", "array_cardinality", "array_position", "array_to_string", "array_cat",
                 "array_append", "array_prepend", "array_contains", "array_contained", "array_overlap",
                 "array_lower", "array_upper", "eq", "neq", "lt", "lte", "gt", "gte", "to_jsonb",
                 "jsonb_build_object", "jsonb_build_array", "jsonb_extract_path", "jsonb_extract_path_text",
                 "bytea_concat", "jsonb_concat", "array_remove", "array_replace",
                 "array_ndims", "array_dims"}  # multi-dimensional arrays (repr.arrays)


def _err(msg: str, code: str = "42883") -> ProgrammingError:
    return ProgrammingError(msg, sqlstate=code,
                            hint="No function matches the given name and argument types. "
                                 "You might need to add explicit type casts." if code == "42883" else None)


def _nofunc(name, args):
    return _err(f"function {name}({', '.join(display_name(a) for a in args)}) does not exist")


def _array_arg(t: str):
    """The array type an argument of ``anyarray`` has (None: not an array)."""
    return t if is_array(t) else None


def resolve_function_hook(name: str, args: tuple):
    """A ``Resolution`` for the polymorphic functions, None for every other name."""
    if name in ("array_length", "array_lower", "array_upper"):
        if len(args) != 2 or not _array_arg(args[0]) or not can_cast(args[1], "int4", "implicit"):
            raise _nofunc(name, args)
        return Resolution(name if name != "array_length" else "array_length", (args[0], "int4"), "int4")
    if name == "cardinality":
        if len(args) != 1 or not _array_arg(args[0]):
            raise _nofunc(name, args)
        return Resolution("array_cardinality", args, "int4")
    if name in ("array_ndims", "array_dims"):  # multi-dimensional arrays (repr.arrays)
        if len(args) != 1 or not _array_arg(args[0]):
            raise _nofunc(name, args)
        return Resolution(name, args, "int4" if name == "array_ndims" else "text")
    if name == "array_position":
        if len(args) not in (2, 3) or not _array_arg(args[0]):
            raise _nofunc(name, args)
        el = element_type(args[0])
        if not can_cast(args[1], el, "implicit"):
            raise _nofunc(name, args)
        return Resolution("array_position", (args[0], el) + (("int4",) if len(args) == 3 else ()), "int4")
    if name in ("array_remove",):
        if len(args) != 2 or not _array_arg(args[0]) or not can_cast(args[1], element_type(args[0]), "implicit"):
            raise _nofunc(name, args)
        return Resolution("array_remove", (args[0], element_type(args[0])), args[0])
    if name == "array_replace":
        if len(args) != 3 or not _array_arg(args[0]):
            raise _nofunc(name, args)
        el = element_type(args[0])
        return Resolution("array_replace", (args[0], el, el), args[0])
    if name == "array_to_string":
        if len(args) not in (2, 3) or not _array_arg(args[0]):
            raise _nofunc(name, args)
        return Resolution("array_to_string", (args[0],) + ("text",) * (len(args) - 1), "text")
    if name in ("array_cat", "array_append", "array_prepend"):
        if len(args) != 2:
            raise _nofunc(name, args)
        r = _array_concat(*args) if name == "array_cat" else None
        if name == "array_append" and _array_arg(args[0]):
            r = Resolution("array_append", (args[0], element_type(args[0])), args[0])
        if name == "array_prepend" and _array_arg(args[1]):
            r = Resolution("array_prepend", (element_type(args[1]), args[1]), args[1])
        if r is None or r.func_id != name:
            raise _nofunc(name, args)
        return r
    if name == "to_jsonb":
        if len(args) != 1:
            raise _nofunc(name, args)
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
            raise _nofunc(name, args)
        return Resolution(name, ("jsonb",) + ("text",) * (len(args) - 1),
                          "jsonb" if name == "jsonb_extract_path" else "text")
    return None


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


def resolve_operator_hook(o: str, left: str, right):
    """Array operators (comparisons, ``@>``/``<@``/``&&``, ``||``) and ``bytea``/``jsonb``
    ``||``; None for everything else."""
    if right is None:
        return None
    la, ra = is_array(left), is_array(right)
    if o == "||":
        if left == "bytea" and right in ("bytea", "unknown") or right == "bytea" and left == "unknown":
            return Resolution("bytea_concat", ("bytea", "bytea"), "bytea")
        if left == "jsonb" and right in ("jsonb", "unknown") or right == "jsonb" and left == "unknown":
            return Resolution("jsonb_concat", ("jsonb", "jsonb"), "jsonb")
        if la or ra:
            if (la and right == "text") or (ra and left == "text"):
                if not ((la and element_type(left) == "text") or (ra and element_type(right) == "text")):
                    return None
            r = _array_concat(left, right)
            if r is None:
                raise _err(f"operator does not exist: {display_name(left)} || {display_name(right)}")
            return r
        return None
    if not (la or ra):
        return None
    t = left if la else right
    other = right if la else left
    if other != "unknown" and not is_array(other):
        return None  # e.g. jsonb - text[]: the fixed-type tables
    if other != "unknown" and other != t:
        t = common_type([left, right]) if is_array(other) else None
    if t is None:
        raise _err(f"operator does not exist: {display_name(left)} {o} {display_name(right)}")
    if o in F._CMP:
        return Resolution(F._CMP[o], (t, t), "bool")
    ops = {"@>": "array_contains", "<@": "array_contained", "&&": "array_overlap"}
    if o in ops:
        return Resolution(ops[o], (t, t), "bool")
    return None


def resolve_aggregate_hook(n: str, args: tuple):
    """``array_agg(x) -> x[]``, ``jsonb_agg(x) -> jsonb``, ``jsonb_object_agg(k, v) -> jsonb``."""
    if n == "array_agg":
        if len(args) != 1:
            raise _nofunc(n, args)
        t = "text" if args[0] == "unknown" else args[0]
        if is_array(t):  # array_agg(anyarray): one more dimension (expr.functions.arrays)
            return AggResolution("array_agg", t, t)
        if t not in TYPES:
            raise _nofunc(n, args)
        return AggResolution("array_agg", t, array_of(t))
    if n == "jsonb_agg":
        if len(args) != 1:
            raise _nofunc(n, args)
        return AggResolution("jsonb_agg", "text" if args[0] == "unknown" else args[0], "jsonb")
    if n == "jsonb_object_agg":
        if len(args) != 2:
            raise _nofunc(n, args)
        return AggResolution("jsonb_object_agg", "record", "jsonb")
    return None


# ------------------------------------------------------------------ table functions

#: name -> (parameter types, output column names, output column types)
TABLE_FUNCTIONS = {
    "jsonb_each": (("jsonb",), ("key", "value"), ("text", "jsonb")),
    "jsonb_each_text": (("jsonb",), ("key", "value"), ("text", "text")),
    "jsonb_array_elements": (("jsonb",), ("value",), ("jsonb",)),
    "jsonb_array_elements_text": (("jsonb",), ("value",), ("text",)),
    "jsonb_object_keys": (("jsonb",), ("jsonb_object_keys",), ("text",)),
}


def resolve_table_function(name: str, args: tuple):
    """``(func id, parameter types, column names, column types)`` of the table functions
    over arrays and jsonb (``unnest(anyarray)``, ``jsonb_each``, ...); None for other names."""
    if name == "unnest" and len(args) == 1 and args[0].endswith(" list"):  # lists (sql.functions_lists)
        from sql.functions_lists import resolve_table_function as lists
        return lists(name, args)
    if name == "unnest":
        if len(args) > 1:  # unnest(a, b, ...) in FROM: zipped (repr.arrays.unnest_zip)
            if "unknown" in args:
                raise ProgrammingError("function unnest(unknown) is not unique", sqlstate="42725",
                                       hint="Could not choose a best candidate function. "
                                            "You might need to add explicit type casts.")
            if not all(is_array(a) for a in args):
                raise _nofunc(name, args)
            return "unnest_zip", tuple(args), ("unnest",) * len(args), tuple(element_type(a) for a in args)
        if len(args) != 1:
            raise _nofunc(name, args)
        if args[0] == "unknown":
            raise ProgrammingError("function unnest(unknown) is not unique", sqlstate="42725",
                                   hint="Could not choose a best candidate function. "
                                        "You might need to add explicit type casts.")
        if not is_array(args[0]):
            raise _nofunc(name, args)
        return "unnest", (args[0],), ("unnest",), (element_type(args[0]),)
    sig = TABLE_FUNCTIONS.get(name)
    if sig is None:
        return None
    params, names, types = sig
    if len(args) != len(params) or not all(can_cast(a, p, "implicit") for a, p in zip(args, params)):
        raise _nofunc(name, args)
    return name, params, names, types
