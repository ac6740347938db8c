"""Resolution of SQL functions, operators, casts, aggregates and table functions over the
signature tables of every type family, assembled once.

Owns which function/operator/cast/aggregate a name and argument types resolve to, as
PostgreSQL resolves them (exact match, then implicit coercions ranked by exact matches,
preferred types, and the category of unknown-typed arguments: func_select_candidate), over
the tables of ``FAMILIES``: one module per type family, paired module for module with
``expr.functions`` (and ``sql.types`` for the casts), each exporting plain tables:
``FUNCTIONS``/``OPERATORS`` (name -> ``Sig``s), ``UNARY`` ((operator, type) -> ``Sig``),
the special forms' tables (``generic``, ``boolean``, ``text.LIKE``), optionally hooks for
its polymorphic forms (``resolve_function``/``resolve_operator``/``resolve_table_function``,
asked in ``FAMILIES`` order before the tables; None: not theirs), ``TABLE_FUNCTIONS`` and
``FUNC_IDS`` (the ids the hooks produce or the binder writes for syntax);
``aggregates`` holds the aggregate and window signatures.  A ``Resolution`` names the
implementation (``func_id``, a key of ``expr.functions.FUNCTIONS``), the type each argument
must be cast to first (``arg_types``; the binder inserts the casts with
``resolve_cast(.., "implicit")``) and the result type.
Invariant: every func id a family names is implemented in the same-named ``expr.functions``
family or, for the comparisons and tests shared by every type, ``expr.functions.generic``
(``family_func_ids``; tests/test_registries.py pairs them); no two families declare the
same signature (assembly raises); failures raise ``sql.errors`` with SQLSTATE 42883 (no
match), 42725 (ambiguous), 42804 (wrong type for AND/OR/NOT/IS TRUE) or 42846 (no such cast).
Deliberately not here: building expressions (the binder in ``planner``) and evaluation
(``expr``).
"""
from __future__ import annotations

from sql import types as T
from sql.functions import (aggregates, arrays, boolean, bytea, char, datetime, floats, generic, integer,
                           jsonb, lists, maps, numeric, text, uuid)
from sql.functions.common import (CMP, OPERATOR_HINT, AggResolution, Resolution, Sig, err, no_function,
                                  type_list)
from sql.types.common import merged

__all__ = ["FAMILIES", "FUNCTIONS", "OPERATORS", "UNARY", "resolve_function", "resolve_operator", "resolve_cast",
           "resolve_aggregate", "resolve_table_function", "aggregate_names", "family_func_ids", "all_func_ids"]

#: family name -> its module, in the order the hooks are asked (lists before arrays: an
#: ``int4[] list`` is a list; bytea and jsonb ``||`` before arrays, arrays before text)
FAMILIES = {"generic": generic, "boolean": boolean, "integer": integer, "numeric": numeric, "floats": floats,
            "datetime": datetime, "char": char, "bytea": bytea, "uuid": uuid, "maps": maps, "jsonb": jsonb, "lists": lists,
            "arrays": arrays, "text": text}


def _merged_sigs(tables) -> dict[str, tuple[Sig, ...]]:
    out: dict[str, list[Sig]] = {}
    for table in tables:
        for name, sigs in table.items():
            have = out.setdefault(name, [])
            for s in sigs:
                if any(h.params == s.params for h in have):
                    raise AssertionError(f"sql.functions: {name}{s.params} declared twice")
                have.append(s)
    return {k: tuple(v) for k, v in out.items()}


def _first(hooks, *args):
    """The first answer of ``hooks`` that is not None (None: no hook owns the call)."""
    for hook in hooks:
        r = hook(*args)
        if r is not None:
            return r
    return None


#: function name -> its signatures (every family's)
FUNCTIONS: dict[str, tuple[Sig, ...]] = _merged_sigs(getattr(f, "FUNCTIONS", {}) for f in FAMILIES.values())
#: binary operator -> its signatures
OPERATORS: dict[str, tuple[Sig, ...]] = _merged_sigs(getattr(f, "OPERATORS", {}) for f in FAMILIES.values())
#: (prefix operator, operand type) -> its signature
UNARY: dict[tuple[str, str], Sig] = merged(FAMILIES, "UNARY", "sql.functions")
_TABLE_FUNCTIONS: dict = merged(FAMILIES, "TABLE_FUNCTIONS", "sql.functions")
_AGGS = aggregates.AGGREGATES
_FUNCTION_HOOKS = tuple(f.resolve_function for f in FAMILIES.values() if hasattr(f, "resolve_function"))
_OPERATOR_HOOKS = tuple(f.resolve_operator for f in FAMILIES.values() if hasattr(f, "resolve_operator"))
_TABLE_HOOKS = tuple(f.resolve_table_function for f in FAMILIES.values() if hasattr(f, "resolve_table_function"))


# ------------------------------------------------------------------------- candidates

def _select(cands, args: tuple[str, ...]) -> Sig | None | str:
    """PostgreSQL's func_select_candidate; returns a signature, None (no match) or
    "ambiguous"."""
    cands = [c for c in cands if len(c.params) == len(args)]
    for c in cands:
        if c.params == args:
            return c
    viable = [c for c in cands if all(T.can_cast(a, p, "implicit") for a, p in zip(args, c.params))]
    if len(viable) <= 1:
        return viable[0] if viable else None

    def keep_best(score):
        best = max(score(c) for c in viable)
        return [c for c in viable if score(c) == best]

    viable = keep_best(lambda c: sum(a == p for a, p in zip(args, c.params)))
    if len(viable) == 1:
        return viable[0]
    viable = keep_best(lambda c: sum(a != p and T.is_preferred(p) for a, p in zip(args, c.params)))
    if len(viable) == 1:
        return viable[0]
    unknown_pos = [i for i, a in enumerate(args) if a == "unknown"]
    if unknown_pos:
        for i in unknown_pos:
            cats = {T.category(c.params[i]) for c in viable}
            if "S" in cats:
                cat = "S"
            elif len(cats) == 1:
                cat = cats.pop()
            else:
                continue
            narrowed = [c for c in viable if T.category(c.params[i]) == cat]
            pref = [c for c in narrowed if T.is_preferred(c.params[i])]
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


# -------------------------------------------------------------------------- functions

def resolve_function(name: str, arg_types) -> Resolution:
    """The implementation of ``name(arg_types...)``; raises 42883 / 42725 / 42804."""
    name = name.lower()
    if name.startswith("pg_catalog."):
        name = name[len("pg_catalog."):]
    args = tuple(arg_types)
    if name in generic.SPECIAL_FORMS:
        if not args or (name == "nullif" and len(args) != 2):
            raise err(f"function {name}({type_list(args)}) does not exist", "42883")
        if name == "nullif":
            # PostgreSQL: the type is the left input type of the chosen "=" operator; it has
            # cross-type integer operators (int48eq), so integers keep the first's type
            eq = resolve_operator("=", args[0], args[1])
            if args[0] in T.INTEGER_TYPES and args[1] in T.INTEGER_TYPES:
                return Resolution("nullif", args, args[0])
            return Resolution("nullif", eq.arg_types, eq.arg_types[0])
        t = T.common_type(args)
        if t is None:
            known = [a for a in args if a != "unknown"]
            other = next((a for a in known if T.category(a) != T.category(known[0])), known[-1])
            raise err(f"{name.upper()} types {T.display_name(known[0])} and {T.display_name(other)} cannot be "
                      f"matched", "42804")
        return Resolution(generic.SPECIAL_FORMS[name], (t,) * len(args), t)
    if name in generic.ROW:
        return Resolution(generic.ROW[name], args, "record")
    hooked = _first(_FUNCTION_HOOKS, name, args)
    if hooked is not None:
        return hooked
    cands = FUNCTIONS.get(name)
    if cands is None:
        raise no_function(name, args)
    sig = _select(cands, args)
    if sig is None:
        raise no_function(name, args)
    if sig == "ambiguous":
        raise err(f"function {name}({type_list(args)}) is not unique", "42725")
    return Resolution(sig.func_id, sig.params, sig.ret)


# -------------------------------------------------------------------------- operators

def _require_bool(what: str, t: str) -> str:
    """``bool`` for an operand of AND/OR/NOT/IS TRUE..., else 42804 in Materialize's words
    (PostgreSQL's are ``argument of AND must be type boolean, ...``)."""
    if t in ("bool", "unknown"):
        return "bool"
    raise err(f"{what} argument must have type boolean, not type {T.display_name(t)}", "42804")


def resolve_operator(op: str, left: str, right: str | None = None) -> Resolution:
    """The implementation of ``left op right`` (``right`` None: a prefix/postfix unary
    operator such as ``-``, ``NOT``, ``IS NULL``).  Operator names are SQL's (``+``,
    ``=``, ``||``, ``LIKE``/``~~``, ``AND``, ``IS DISTINCT FROM``, ...), case-insensitive."""
    o = " ".join(op.lower().split())
    if o in ("and", "or"):
        return Resolution(boolean.LOGIC[o], (_require_bool(o.upper(), left), _require_bool(o.upper(), right)), "bool")
    if o == "not":
        return Resolution(boolean.LOGIC[o], (_require_bool("NOT", left),), "bool")
    if o in generic.NULL_TESTS:
        return Resolution(generic.NULL_TESTS[o], (left,), "bool")
    if o in boolean.BOOL_TESTS:
        return Resolution(boolean.BOOL_TESTS[o], (_require_bool(o.upper(), left),), "bool")
    if right is None:
        sig = UNARY.get((o, left))
        if sig is not None:
            return Resolution(sig.func_id, sig.params, sig.ret)
        if left == "unknown" and o in ("-", "+"):
            raise err(f"operator is not unique: {op} unknown", "42725")
        raise err(f"operator does not exist: {op} {T.display_name(left)}", "42883",
                  hint="No operator matches the given name and argument type. "
                       "You might need to add an explicit type cast.")
    if o in generic.DISTINCT:
        r = resolve_operator("=", left, right)
        return Resolution(generic.DISTINCT[o], r.arg_types, "bool")
    hooked = _first(_OPERATOR_HOOKS, o, left, right)
    if hooked is not None:
        return hooked
    cands = OPERATORS.get(o)
    if cands is None:
        raise err(f"operator does not exist: {T.display_name(left)} {op} {T.display_name(right)}", "42883")
    if left == "unknown" and right == "unknown" and o != "^":
        if o in CMP or o in ("~", "~*", "!~", "!~*"):
            sig = _select(cands, ("text", "text"))
            return Resolution(sig.func_id, sig.params, sig.ret)
        raise err(f"operator is not unique: unknown {op} unknown", "42725")
    sig = _select(cands, (left, right))
    if sig is None or sig == "ambiguous":
        raise err(f"operator does not exist: {T.display_name(left)} {op} {T.display_name(right)}", "42883",
                  hint=OPERATOR_HINT)
    return Resolution(sig.func_id, sig.params, sig.ret)


# ------------------------------------------------------------------------------ casts

def resolve_cast(from_: str, to: str, context: str = "explicit") -> str | None:
    """The func id converting ``from_`` to ``to`` in ``context``; None when the types are
    equal.  Raises 42846 ``cannot cast type X to Y`` when no such cast exists in context."""
    if from_ == to:
        return None
    if T.can_cast(from_, to, context):
        if from_ == "unknown":
            return "cast_unknown_to_text" if to == "text" else f"cast_text_to_{to}"
        return f"cast_{from_}_to_{to}"
    raise err(f"cannot cast type {T.display_name(from_)} to {T.display_name(to)}", "42846")


# ------------------------------------------------------------------------- aggregates

def resolve_aggregate(name: str, arg_types) -> AggResolution:
    """The aggregate ``name(arg_types...)``; ``count(*)`` is ``count`` with no arguments.
    For ``string_agg`` the input type is that of the value (the delimiter is text)."""
    n = aggregates.ALIASES.get(name.lower(), name.lower())
    args = tuple(arg_types)
    if n == "count":
        if len(args) > 1:
            raise err(f"function count({type_list(args)}) does not exist", "42883")
        t = args[0] if args else "bool"
        return AggResolution("count", "text" if t == "unknown" else t, "int8")
    hooked = aggregates.resolve_aggregate(n, args)
    if hooked is not None:
        return hooked
    cands = _AGGS.get(n)
    if cands is None:
        raise err(f"function {name}({type_list(args)}) does not exist", "42883")
    if n in aggregates.NUMERIC_ONLY and "unknown" in args:
        raise err(f"function {name}({type_list(args)}) is not unique", "42725")
    sig = _select(cands, args)
    if sig is None or sig == "ambiguous":
        raise no_function(name, args)
    return AggResolution(sig.func_id, sig.params[0], sig.ret)


def aggregate_names() -> frozenset[str]:
    """Every name ``resolve_aggregate`` accepts (the binder tells aggregates from functions)."""
    return frozenset(_AGGS) | frozenset(aggregates.POLYMORPHIC) | frozenset(aggregates.ALIASES) | {"count"}


# -------------------------------------------------------------------- table functions

def resolve_table_function(name: str, args: tuple):
    """``(func id, parameter types, column names, column types)`` of the table functions
    over arrays, lists and jsonb (``unnest(anyarray)``, ``jsonb_each``, ...); None for other
    names."""
    hooked = _first(_TABLE_HOOKS, name, args)
    if hooked is not None:
        return hooked
    sig = _TABLE_FUNCTIONS.get(name)
    if sig is None:
        return None
    params, names, types = sig
    if len(args) != len(params) or not all(T.can_cast(a, p, "implicit") for a, p in zip(args, params)):
        raise no_function(name, args)
    return name, params, names, types


# ---------------------------------------------------------------------------- pairing

_SPECIAL_TABLES = ("SPECIAL_FORMS", "ROW", "NULL_TESTS", "DISTINCT", "LOGIC", "BOOL_TESTS", "LIKE")


def family_func_ids(name: str) -> set[str]:
    """Every func id family ``name`` names: its signatures', its special forms', its
    ``FUNC_IDS`` and the casts its ``sql.types`` family declares."""
    fam = FAMILIES[name]
    ids = {s.func_id for attr in ("FUNCTIONS", "OPERATORS") for sigs in getattr(fam, attr, {}).values()
           for s in sigs}
    ids |= {s.func_id for s in getattr(fam, "UNARY", {}).values()}
    for attr in _SPECIAL_TABLES:
        ids |= set(getattr(fam, attr, {}).values())
    ids |= set(getattr(fam, "FUNC_IDS", {}))
    types = T.FAMILIES.get(name)
    if types is not None:
        ids |= {f"cast_{a}_to_{b}" for a, b in types.CASTS}
    return ids


def all_func_ids() -> set[str]:
    """Every func id the families name (for the registry-coverage test)."""
    return set().union(*(family_func_ids(n) for n in FAMILIES))
