"""The registry of scalar function implementations: every type family's table, assembled once.

Owns ``FUNCTIONS: dict[func_id, FuncImpl]`` (the implementation of each func id that
``sql.functions`` resolves to or the binder writes), ``TABLE_FUNCTIONS`` (name ->
(implementation, column names, column types), for the FlatMap operator) and ``VOLATILE``
(func ids never folded nor maintained), built here and nowhere else from ``FAMILIES``, one
module per type family paired with the same-named ``sql.functions`` module.  A family
module exports plain tables and mutates nothing of another module:
``FUNCTIONS`` (its own func ids), optionally ``DERIVED`` (func id -> ``builder(functions)``
for an implementation defined through other func ids, built once every family's
``FUNCTIONS`` is in), ``RESOLVERS`` (``(func_id, functions) -> FuncImpl | None``: ids
synthesized on first lookup, one per type, e.g. ``cast_text_to_int4[]``), ``TABLE_FUNCTIONS``
and ``VOLATILE``.  Shared helpers live in ``expr.functions.common``, which imports no family;
the aggregate finishers in ``expr.functions.aggregates`` (no func ids).
Invariant: a func id has one implementation (a second one, in any family or table, raises
at assembly); an inline template's ``env`` name means one object across the registry (the
compiler binds env names into one namespace); an implementation raises only ``EvalError``
for bad data, and a ``strict`` one is never called with a NULL argument (the compiler
checks).
Deliberately not here: NULL propagation and laziness (``expr.compile``: ``and``, ``or``,
``coalesce`` are compiled specially) and SQL signatures (``sql.functions``).
"""
from __future__ import annotations

from expr.functions import (arrays, boolean, bytea, char, datetime, floats, generic, integer, jsonb, lists,
                            maps, numeric, text, uuid)
from expr.functions.common import FuncImpl

__all__ = ["FAMILIES", "FUNCTIONS", "TABLE_FUNCTIONS", "VOLATILE", "Registry", "assemble"]

#: family name -> its module (``sql.functions`` has a module of each name)
FAMILIES = {"generic": generic, "boolean": boolean, "integer": integer, "numeric": numeric, "floats": floats,
            "text": text, "char": char, "bytea": bytea, "uuid": uuid, "datetime": datetime, "jsonb": jsonb,
            "arrays": arrays, "lists": lists, "maps": maps}


class Registry(dict):
    """``FUNCTIONS``: a dict whose missing func ids may be synthesized on first lookup by the
    families' ``RESOLVERS`` (array and list casts, one per element type); a synthesized
    entry is stored."""

    def __init__(self, resolvers=()):
        super().__init__()
        self.resolvers = tuple(resolvers)

    def __missing__(self, k):
        for r in self.resolvers:
            impl = r(k, self)
            if impl is not None:
                self[k] = impl
                return impl
        raise KeyError(k)

    def get(self, k, default=None):
        try:
            return self[k]
        except KeyError:
            return default

    def __contains__(self, k):
        return self.get(k) is not None


def assemble(families: dict) -> Registry:
    """The registry of ``families`` (name -> module); raises ``AssertionError`` on a func id
    defined twice or an env name bound to two objects."""
    functions = Registry(r for fam in families.values() for r in getattr(fam, "RESOLVERS", ()))
    owner: dict[str, str] = {}

    def put(name: str, fid: str, impl: FuncImpl) -> None:
        if fid in owner:
            raise AssertionError(f"expr.functions: {fid} is defined by both {owner[fid]} and {name}")
        owner[fid] = name
        functions[fid] = impl

    for name, fam in families.items():
        for fid, impl in fam.FUNCTIONS.items():
            put(name, fid, impl)
    for name, fam in families.items():
        for fid, build in getattr(fam, "DERIVED", {}).items():
            put(name, fid, build(functions))
    env: dict = {}
    for fid, impl in functions.items():
        for k, v in impl.env.items():
            if env.setdefault(k, v) is not v:
                raise AssertionError(f"expr.functions: env name {k} of {fid} is bound to two objects")
    return functions


def _merged(attr: str) -> dict:
    out: dict = {}
    for name, fam in FAMILIES.items():
        for k, v in getattr(fam, attr, {}).items():
            if k in out:
                raise AssertionError(f"expr.functions: {attr} {k} defined twice ({name})")
            out[k] = v
    return out


FUNCTIONS: dict[str, FuncImpl] = assemble(FAMILIES)
#: table function name -> (implementation, output column names, output types)
TABLE_FUNCTIONS: dict = _merged("TABLE_FUNCTIONS")
#: func ids whose value changes per call: never constant-folded, refused in maintained objects
VOLATILE: frozenset = frozenset().union(*(getattr(fam, "VOLATILE", ()) for fam in FAMILIES.values()))
