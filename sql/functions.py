"""Signatures of SQL functions, operators, casts and aggregates (pure tables, no evaluation).

Owns: which function/operator/cast/aggregate a name and argument types resolve to, as
PostgreSQL resolves them (exact match, then implicit coercions ranked by exact matches,
preferred types, and the category of unknown-typed arguments: func_select_candidate).
A ``Resolution`` names the implementation (``func_id``, a key of
``expr.functions.FUNCTIONS``), the type each argument must be cast to first
(``arg_types``; the binder inserts the casts with ``resolve_cast(.., "implicit")``) and
the result type.
Invariant: every func id produced here is implemented in ``expr.functions`` (checked
by ``tests/test_functions.py``); failures raise ``sql.errors`` with SQLSTATE 42883
(no match), 42725 (ambiguous), 42804 (wrong type for AND/OR/NOT/IS TRUE) or 42846
(no such cast).
Deliberately not here: building expressions (the binder in ``planner``), evaluation
(``compute``).  ``sql`` imports nothing of this project except ``sql.errors``.
"""
from __future__ import annotations

from dataclasses import dataclass

from sql.errors import ProgrammingError
from sql.types import (INTEGER_TYPES, NUMERIC_TYPES, TYPES, can_cast, category, common_type, display_name,
                       is_preferred)


@dataclass(frozen=True)
class Resolution:
    func_id: str
    #: the type each argument must be converted to (equal to the input type when none is needed)
    arg_types: tuple[str, ...]
    return_type: str


@dataclass(frozen=True)
class AggResolution:
    #: one of the names in ``expr.relation.AggregateExpr``'s docstring
    func: str
    #: the type the argument must be converted to before aggregation
    input_type: str
    output_type: str


@dataclass(frozen=True)
class _Sig:
    params: tuple[str, ...]
    ret: str
    func_id: str


def _err(msg: str, code: str, hint: str | None = None) -> ProgrammingError:
    return ProgrammingError(msg, sqlstate=code, hint=hint)


def _list(types) -> str:
    return ", ".join(display_name(t) for t in types)


# ------------------------------------------------------------------------- candidates

def _select(cands: list[_Sig], args: tuple[str, ...]) -> _Sig | None | str:
    """PostgreSQL's func_select_candidate; returns a signature, None (no match) or
    "ambiguous"."""
    cands = [c for c in cands if len(c.params) == len(args)]
    for c in cands:
        if c.params == args:
            return c
    viable = [c for c in cands if all(can_cast(a, p, "implicit") for a, p in zip(args, c.params))]
    if len(viable) <= 1:
        return viable[0] if viable else None

    def keep_best(score):
        best = max(score(c) for c in viable)
        return [c for c in viable if score(c) == best]

    viable = keep_best(lambda c: sum(a == p for a, p in zip(args, c.params)))
    if len(viable) == 1:
        return viable[0]
    viable = keep_best(lambda c: sum(a != p and is_preferred(p) for a, p in zip(args, c.params)))
    if len(viable) == 1:
        return viable[0]
    unknown_pos = [i for i, a in enumerate(args) if a == "unknown"]
    if unknown_pos:
        for i in unknown_pos:
            cats = {category(c.params[i]) for c in viable}
            if "S" in cats:
                cat = "S"
            elif len(cats) == 1:
                cat = cats.pop()
            else:
                continue
            narrowed = [c for c in viable if category(c.params[i]) == cat]
            pref = [c for c in narrowed if is_preferred(c.params[i])]
            viable = pref or narrowed
        if len(viable) == 1:
            return viable[0]
        known = {a for a in args if a != "unknown"}
        if len(known) == 1:
            t = known.pop()
            same = [c for c in viable if all(c.params[i] == t for i in unknown_pos)]
            if len(same) == 1:
                return same[0]
    return "ambiguous"


_FUNCS: dict[str, list[_Sig]] = {}


def _add(name: str, params, ret: str, func_id: str) -> None:
    _FUNCS.setdefault(name, []).append(_Sig(tuple(params), ret, func_id))


for _t in NUMERIC_TYPES:
    _add("abs", (_t,), _t, f"abs_{_t}")
for _t in ("numeric", "float8"):
    for _n in ("ceil", "ceiling", "floor", "trunc", "round", "sqrt", "sign", "ln"):
        if (_n, _t) != ("ln", "numeric"):
            _add(_n, (_t,), _t, f"{'ceil' if _n == 'ceiling' else _n}_{_t}")
    _add("power", (_t, _t), _t, f"power_{_t}")
    _add("pow", (_t, _t), _t, f"power_{_t}")
_add("round", ("numeric", "int4"), "numeric", "round_numeric_int4")
for _t in INTEGER_TYPES + ("numeric",):
    _add("mod", (_t, _t), _t, f"mod_{_t}")
_add("div", ("numeric", "numeric"), "numeric", "div_trunc_numeric")
for _n, _id in (("cbrt", "cbrt_float8"), ("exp", "exp_float8"), ("log", "log10_float8"),
                ("log10", "log10_float8")):
    _add(_n, ("float8",), "float8", _id)
_add("pi", (), "float8", "pi")
_add("exp", ("numeric",), "numeric", "exp_numeric")
_add("log", ("numeric",), "numeric", "log10_numeric")
_add("log10", ("numeric",), "numeric", "log10_numeric")
_add("ln", ("numeric",), "numeric", "ln_numeric")
for _n in ("upper", "lower", "initcap", "reverse"):
    _add(_n, ("text",), "text", _n)
for _n in ("length", "char_length", "character_length"):
    _add(_n, ("text",), "int4", "char_length")
_add("octet_length", ("text",), "int4", "octet_length")
for _n in ("substr", "substring"):
    _add(_n, ("text", "int4"), "text", "substr")
    _add(_n, ("text", "int4", "int4"), "text", "substr")
_add("replace", ("text", "text", "text"), "text", "replace")
_add("overlay", ("text", "text", "int4"), "text", "overlay")
_add("overlay", ("text", "text", "int4", "int4"), "text", "overlay")
_add("trunc", ("numeric", "int4"), "numeric", "trunc_numeric_int4")
for _n, _id in (("btrim", "btrim"), ("trim", "btrim"), ("ltrim", "ltrim"), ("rtrim", "rtrim")):
    _add(_n, ("text",), "text", _id)
    _add(_n, ("text", "text"), "text", _id)
for _n in ("position", "strpos"):
    _add(_n, ("text", "text"), "int4", "strpos")
for _n in ("lpad", "rpad"):
    _add(_n, ("text", "int4"), "text", _n)
    _add(_n, ("text", "int4", "text"), "text", _n)
for _n in ("left", "right", "repeat"):
    _add(_n, ("text", "int4"), "text", _n)
_add("split_part", ("text", "text", "int4"), "text", "split_part")
_add("starts_with", ("text", "text"), "bool", "starts_with")
_add("regexp_replace", ("text", "text", "text"), "text", "regexp_replace")
_add("regexp_replace", ("text", "text", "text", "text"), "text", "regexp_replace")
_add("ascii", ("text",), "int4", "ascii")
_add("chr", ("int4",), "text", "chr")
_add("md5", ("text",), "text", "md5")
_add("translate", ("text", "text", "text"), "text", "translate")

#: functions whose arguments all take one common type (PostgreSQL's special forms)
_COMMON = {"coalesce": "coalesce", "greatest": "greatest", "least": "least", "nullif": "nullif"}


def resolve_function(name: str, arg_types) -> Resolution:
    """The implementation of ``name(arg_types...)``; raises 42883 / 42725 / 42804."""
    name = name.lower()
    if name.startswith("pg_catalog."):
        name = name[len("pg_catalog."):]
    args = tuple(arg_types)
    if name in _COMMON:
        if not args or (name == "nullif" and len(args) != 2):
            raise _err(f"function {name}({_list(args)}) does not exist", "42883")
        if name == "nullif":
            # PostgreSQL: the type is the left input type of the chosen "=" operator; it has
            # cross-type integer operators (int48eq), so integers keep the first's type
            eq = resolve_operator("=", args[0], args[1])
            if args[0] in INTEGER_TYPES and args[1] in INTEGER_TYPES:
                return Resolution("nullif", args, args[0])
            return Resolution("nullif", eq.arg_types, eq.arg_types[0])
        t = common_type(args)
        if t is None:
            known = [a for a in args if a != "unknown"]
            other = next((a for a in known if category(a) != category(known[0])), known[-1])
            raise _err(f"{name.upper()} types {display_name(known[0])} and {display_name(other)} cannot be matched",
                       "42804")
        return Resolution(_COMMON[name], (t,) * len(args), t)
    if name == "concat":
        return Resolution("concat", tuple("text" if a == "unknown" else a for a in args), "text")
    if name == "concat_ws":
        if not args or not can_cast(args[0], "text", "implicit"):
            raise _err(f"function concat_ws({_list(args)}) does not exist", "42883")
        return Resolution("concat_ws", ("text",) + tuple("text" if a == "unknown" else a for a in args[1:]), "text")
    if name in ("row", "record"):
        return Resolution("record", args, "record")
    hooked = _lists.resolve_function_hook(name, args)  # Materialize's list functions (sql.functions_lists)
    if hooked is not None:
        return hooked
    hooked = _doc.resolve_function_hook(name, args)  # polymorphic array/jsonb functions
    if hooked is not None:
        return hooked
    cands = _FUNCS.get(name)
    if cands is None:
        raise _err(f"function {name}({_list(args)}) does not exist", "42883",
                   hint="No function matches the given name and argument types. "
                        "You might need to add explicit type casts.")
    sig = _select(cands, args)
    if sig is None:
        raise _err(f"function {name}({_list(args)}) does not exist", "42883",
                   hint="No function matches the given name and argument types. "
                        "You might need to add explicit type casts.")
    if sig == "ambiguous":
        raise _err(f"function {name}({_list(args)}) is not unique", "42725")
    return Resolution(sig.func_id, sig.params, sig.ret)


# -------------------------------------------------------------------------- operators

_OPS: dict[str, list[_Sig]] = {}
_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}
_CMP = {"=": "eq", "<>": "neq", "!=": "neq", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}
_ORDERABLE = ("bool", "int2", "int4", "int8", "numeric", "float4", "float8", "text", "mz_timestamp")  # float4:
for _op, _name in _ARITH.items():
    for _t in NUMERIC_TYPES:
        if _op == "%" and _t in ("float4", "float8"):
            continue
        _OPS.setdefault(_op, []).append(_Sig((_t, _t), _t, f"{_name}_{_t}"))
for _t in ("numeric", "float8"):
    _OPS.setdefault("^", []).append(_Sig((_t, _t), _t, f"power_{_t}"))
for _op, _name in (("&", "bitand"), ("|", "bitor"), ("#", "bitxor")):
    for _t in INTEGER_TYPES:
        _OPS.setdefault(_op, []).append(_Sig((_t, _t), _t, f"{_name}_{_t}"))
for _op, _name in (("<<", "shl"), (">>", "shr")):
    for _t in INTEGER_TYPES:
        _OPS.setdefault(_op, []).append(_Sig((_t, "int4"), _t, f"{_name}_{_t}"))
for _op, _name in (("~", "regex_match"), ("~*", "regex_imatch"), ("!~", "regex_not_match"),
                   ("!~*", "regex_not_imatch")):
    _OPS.setdefault(_op, []).append(_Sig(("text", "text"), "bool", _name))
for _op, _name in _CMP.items():
    for _t in _ORDERABLE:
        fid = f"{_name}_{_t}" if _t in ("float4", "float8", "numeric") else _name
        _OPS.setdefault(_op, []).append(_Sig((_t, _t), "bool", fid))
# ---- PostgreSQL's cross-type real/double operators (float48*, float84*): a real
# operand meets a double without a cast, so `real * int` resolves to double as in PostgreSQL
for _ops, _ret in ((_ARITH, "float8"), (_CMP, "bool")):
    for _op, _name in _ops.items():
        if _op != "%":
            _OPS[_op].append(_Sig(("float4", "float8"), _ret, f"{_name}_float48"))
            _OPS[_op].append(_Sig(("float8", "float4"), _ret, f"{_name}_float84"))
# ---- end
_LIKE = {"~~": "like", "like": "like", "!~~": "not_like", "not like": "not_like",
         "~~*": "ilike", "ilike": "ilike", "!~~*": "not_ilike", "not ilike": "not_ilike"}
_BOOL_TESTS = {"is true": "is_true", "is not true": "is_not_true", "is false": "is_false",
               "is not false": "is_not_false", "is unknown": "is_null", "is not unknown": "is_not_null"}
_NULL_TESTS = {"is null": "is_null", "isnull": "is_null", "is not null": "is_not_null", "notnull": "is_not_null"}


def _require_bool(what: str, t: str) -> str:
    if t in ("bool", "unknown"):
        return "bool"
    raise _err(f"argument of {what} must be type boolean, not type {display_name(t)}", "42804")


def resolve_operator(op: str, left: str, right: str | None = None) -> Resolution:
    """The implementation of ``left op right`` (``right`` None: a prefix/postfix unary
    operator such as ``-``, ``NOT``, ``IS NULL``).  Operator names are SQL's (``+``,
    ``=``, ``||``, ``LIKE``/``~~``, ``AND``, ``IS DISTINCT FROM``, ...), case-insensitive."""
    o = " ".join(op.lower().split())
    if o in ("and", "or"):
        return Resolution(o, (_require_bool(o.upper(), left), _require_bool(o.upper(), right)), "bool")
    if o == "not":
        return Resolution("not", (_require_bool("NOT", left),), "bool")
    if o in _NULL_TESTS:
        return Resolution(_NULL_TESTS[o], (left,), "bool")
    if o in _BOOL_TESTS:
        return Resolution(_BOOL_TESTS[o], (_require_bool(o.upper(), left),), "bool")
    if right is None:
        if o in ("-", "+") and left in NUMERIC_TYPES:
            return Resolution(f"neg_{left}" if o == "-" else "identity", (left,), left)
        if o in ("-", "+") and left in _dt.UNARY_MINUS:  # interval
            return Resolution(_dt.UNARY_MINUS[left] if o == "-" else "identity", (left,), left)
        if o == "~" and left in INTEGER_TYPES + ("unknown",):
            t = "int4" if left == "unknown" else left
            return Resolution(f"bitnot_{t}", (t,), t)
        if left == "unknown" and o in ("-", "+"):
            raise _err(f"operator is not unique: {op} unknown", "42725")
        raise _err(f"operator does not exist: {op} {display_name(left)}", "42883",
                   hint="No operator matches the given name and argument type. "
                        "You might need to add an explicit type cast.")
    if o in ("is distinct from", "is not distinct from"):
        r = resolve_operator("=", left, right)
        return Resolution(o.replace(" ", "_"), r.arg_types, "bool")
    hooked = _lists.resolve_operator_hook(o, left, right)  # lists (sql.functions_lists)
    if hooked is not None:
        return hooked
    hooked = _doc.resolve_operator_hook(o, left, right)  # arrays, bytea/jsonb ||
    if hooked is not None:
        return hooked
    if o == "||":
        lt, rt = left, right
        # char(n) concatenates as text (its trailing blanks dropped), as in PostgreSQL
        lt, rt = ("text" if lt == "bpchar" else lt), ("text" if rt == "bpchar" else rt)
        if lt in ("text", "unknown") and rt in ("text", "unknown"):
            return Resolution("textcat", ("text", "text"), "text")
        if lt in ("text", "unknown") and rt in TYPES:
            return Resolution("textcat", ("text", rt), "text")
        if rt in ("text", "unknown") and lt in TYPES:
            return Resolution("textcat", (lt, "text"), "text")
        raise _err(f"operator does not exist: {display_name(lt)} || {display_name(rt)}", "42883")
    if o in _LIKE:
        if all(t in ("text", "unknown") for t in (left, right)):
            return Resolution(_LIKE[o], ("text", "text"), "bool")
        if left == "bpchar" and right in ("text", "unknown", "bpchar"):  # bpcharlike sees the blanks
            return Resolution(_LIKE[o], ("bpchar", "text"), "bool")
        shown = {"like": "~~", "not like": "!~~", "ilike": "~~*", "not ilike": "!~~*"}.get(o, op)
        raise _err(f"operator does not exist: {display_name(left)} {shown} {display_name(right)}", "42883")
    cands = _OPS.get(o)
    if cands is None:
        raise _err(f"operator does not exist: {display_name(left)} {op} {display_name(right)}", "42883")
    if left == "unknown" and right == "unknown" and o != "^":
        if o in _CMP or o in ("~", "~*", "!~", "!~*"):
            sig = _select(cands, ("text", "text"))
            return Resolution(sig.func_id, sig.params, sig.ret)
        raise _err(f"operator is not unique: unknown {op} unknown", "42725")
    sig = _select(cands, (left, right))
    if sig is None or sig == "ambiguous":
        raise _err(f"operator does not exist: {display_name(left)} {op} {display_name(right)}", "42883",
                   hint="No operator matches the given name and argument types. "
                        "You might need to add explicit type casts.")
    return Resolution(sig.func_id, sig.params, sig.ret)


# ------------------------------------------------------------------------------ casts

def resolve_cast(from_: str, to: str, context: str = "explicit") -> str | None:
    """The func id converting ``from_`` to ``to`` in ``context``; None when the types are
    equal.  Raises 42846 ``cannot cast type X to Y`` when no such cast exists in context."""
    if from_ == to:
        return None
    if can_cast(from_, to, context):
        if from_ == "unknown":
            return "cast_unknown_to_text" if to == "text" else f"cast_text_to_{to}"
        return f"cast_{from_}_to_{to}"
    raise _err(f"cannot cast type {display_name(from_)} to {display_name(to)}", "42846")


# ------------------------------------------------------------------------- aggregates

_AGG_ALIASES = {"stddev": "stddev_samp", "variance": "var_samp", "every": "bool_and"}
_AGGS: dict[str, list[_Sig]] = {
    "sum": [_Sig(("int2",), "int8", "sum"), _Sig(("int4",), "int8", "sum"), _Sig(("int8",), "numeric", "sum"),
            _Sig(("numeric",), "numeric", "sum"), _Sig(("float8",), "float8", "sum"),
            _Sig(("float4",), "float4", "sum")],
    # real's avg/variance are double's (its input converted exactly), as in PostgreSQL
    "avg": [_Sig((t,), "float8" if t == "float8" else "numeric", "avg") for t in NUMERIC_TYPES if t != "float4"],
    "min": [_Sig((t,), t, "min") for t in _ORDERABLE if t != "bool"],
    "max": [_Sig((t,), t, "max") for t in _ORDERABLE if t != "bool"],
    "bool_and": [_Sig(("bool",), "bool", "bool_and")],
    "bool_or": [_Sig(("bool",), "bool", "bool_or")],
    "string_agg": [_Sig(("text", "text"), "text", "string_agg")],
}
for _n in ("stddev_samp", "stddev_pop", "var_samp", "var_pop"):
    _AGGS[_n] = [_Sig((t,), "float8" if t == "float8" else "numeric", _n) for t in NUMERIC_TYPES if t != "float4"]


def resolve_aggregate(name: str, arg_types) -> AggResolution:
    """The aggregate ``name(arg_types...)``; ``count(*)`` is ``count`` with no arguments.
    For ``string_agg`` the input type is that of the value (the delimiter is text)."""
    n = _AGG_ALIASES.get(name.lower(), name.lower())
    args = tuple(arg_types)
    if n == "count":
        if len(args) > 1:
            raise _err(f"function count({_list(args)}) does not exist", "42883")
        t = args[0] if args else "bool"
        return AggResolution("count", "text" if t == "unknown" else t, "int8")
    hooked = _lists.resolve_aggregate_hook(n, args)  # list_agg (sql.functions_lists)
    if hooked is not None:
        return hooked
    hooked = _doc.resolve_aggregate_hook(n, args)  # array_agg, jsonb_agg, jsonb_object_agg
    if hooked is not None:
        return hooked
    cands = _AGGS.get(n)
    if cands is None:
        raise _err(f"function {name}({_list(args)}) does not exist", "42883")
    if n in ("sum", "avg") + tuple(k for k in _AGGS if k.startswith(("stddev", "var"))) and "unknown" in args:
        raise _err(f"function {name}({_list(args)}) is not unique", "42725")
    sig = _select(cands, args)
    if sig is None or sig == "ambiguous":
        raise _err(f"function {name}({_list(args)}) does not exist", "42883",
                   hint="No function matches the given name and argument types. "
                        "You might need to add explicit type casts.")
    return AggResolution(sig.func_id, sig.params[0], sig.ret)


def aggregate_names() -> frozenset[str]:
    """Every name ``resolve_aggregate`` accepts (the binder tells aggregates from functions)."""
    return frozenset(_AGGS) | frozenset(_AGG_ALIASES) | {"count"}


# ---- window functions (bound by planner.windows) ----
#: name -> (argument types, result type); "any" takes the argument's type, "anycompatible"
#: the common type of the value and the default (lag/lead); optional arguments trail
WINDOW_FUNCTIONS: dict[str, tuple[tuple[tuple[str, ...], ...], str]] = {
    "row_number": (((),), "int8"),
    "rank": (((),), "int8"),
    "dense_rank": (((),), "int8"),
    "percent_rank": (((),), "float8"),
    "cume_dist": (((),), "float8"),
    "ntile": ((("int4",),), "int4"),
    "lag": ((("any",), ("any", "int4"), ("anycompatible", "int4", "anycompatible")), "anycompatible"),
    "lead": ((("any",), ("any", "int4"), ("anycompatible", "int4", "anycompatible")), "anycompatible"),
    "first_value": ((("any",),), "any"),
    "last_value": ((("any",),), "any"),
    "nth_value": ((("any", "int4"),), "any"),
}
# ---- end window functions ----


def all_func_ids() -> set[str]:
    """Every func id this module can produce (for the registry-coverage test)."""
    ids = {s.func_id for sigs in _FUNCS.values() for s in sigs}
    ids |= {s.func_id for sigs in _OPS.values() for s in sigs}
    ids |= set(_COMMON.values()) | {"concat", "concat_ws", "record", "and", "or", "not", "textcat", "identity"}
    ids |= set(_LIKE.values()) | set(_BOOL_TESTS.values()) | set(_NULL_TESTS.values())
    ids |= {"is_distinct_from", "is_not_distinct_from"} | {f"neg_{t}" for t in NUMERIC_TYPES}
    ids |= {f"bitnot_{t}" for t in INTEGER_TYPES}
    ids |= _doc.HOOK_FUNC_IDS
    ids |= _lists.HOOK_FUNC_IDS  # lists
    ids |= set(_dt.UNARY_MINUS.values())  # date/time family
    for a in TYPES:
        for b in TYPES:
            if a != b and can_cast(a, b, "explicit"):
                ids.add(resolve_cast(a, b, "explicit"))
    return ids


from sql import (  # noqa: E402,F401  (date/time family); noqa: E402  (bytea, uuid, jsonb, arrays); noqa: E402  (Materialize's lists)
    functions_datetime as _dt, functions_document as _doc, functions_lists as _lists)
