"""The bulk-insert fast path: ``INSERT INTO t [(cols)] VALUES ($1, ..., $n)`` with many
parameter sets, without planning the statement once per set.

Owns the recognition of that statement shape and the conversion of Python parameter
values to column values.  Invariant: the fast path produces exactly the rows the
general path (plan per parameter set) would, or declines: any value whose conversion
is not the identity-or-widening of an assignment cast (a float for an integer column,
a string for a number, ...) makes it return ``None`` so the general path runs and
raises the proper error.  Deliberately not here: validation beyond types (the writer
checks NOT NULL) or committing.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Optional

from pglast import ast

_INT_RANGES = {"int2": (-32768, 32767), "int4": (-2147483648, 2147483647),
               "int8": (-9223372036854775808, 9223372036854775807)}


def _converter(typ: str):
    """A function value -> column value, raising ``_Decline`` when the fast path must not decide."""
    if typ in _INT_RANGES:
        lo, hi = _INT_RANGES[typ]

        def conv(v):
            if v is None:
                return None
            if type(v) is not int or v < lo or v > hi:
                raise _Decline
            return v
        return conv
    if typ == "numeric":
        def conv(v):
            if v is None or type(v) is Decimal:
                return v
            if type(v) is int:
                return Decimal(v)
            raise _Decline
        return conv
    if typ == "float8":
        def conv(v):
            if v is None or type(v) is float:
                return v
            if type(v) is int:
                return float(v)
            raise _Decline
        return conv
    if typ == "text":
        def conv(v):
            if v is None or type(v) is str:
                return v
            raise _Decline
        return conv
    if typ == "bool":
        def conv(v):
            if v is None or type(v) is bool:
                return v
            raise _Decline
        return conv
    return None


class _Decline(Exception):
    pass


def plan_bulk_insert(catalog, stmt):
    """``(table_item, builder)`` when ``stmt`` has the bulk shape, else ``None``.
    ``builder(param_sets)`` returns the rows, or ``None`` to decline."""
    node = stmt.node
    if not isinstance(node, ast.InsertStmt) or getattr(node, "returningClause", None) or getattr(node, "returningList", None) or node.onConflictClause or node.withClause:
        return None
    sel = node.selectStmt
    if not isinstance(sel, ast.SelectStmt) or not sel.valuesLists or len(sel.valuesLists) != 1:
        return None
    values = sel.valuesLists[0]
    if not all(isinstance(v, ast.ParamRef) for v in values):
        return None
    rv = node.relation
    parts = tuple(x for x in (rv.catalogname, rv.schemaname, rv.relname) if x)
    item = catalog.try_resolve(parts)
    if item is None or item.kind != "table":
        return None
    names = [c.name for c in node.cols] if node.cols else [c.name for c in item.columns][:len(values)]
    if len(names) != len(values) or len(set(names)) != len(names):
        return None
    positions = {c.name: i for i, c in enumerate(item.columns)}
    if any(n not in positions for n in names):
        return None
    from compute.compile import evaluate_constant
    sources = []   # per table column: (param index, converter) or (None, default value)
    by_name = dict(zip(names, (v.number - 1 for v in values)))
    for col in item.columns:
        if col.name in by_name:
            conv = _converter(col.type)
            if conv is None:
                return None
            sources.append((by_name[col.name], conv))
        else:
            if col.default is None:
                sources.append((None, None))
            else:
                try:
                    sources.append((None, evaluate_constant(col.default)))
                except Exception:
                    return None

    identity = all(p == i for i, (p, _) in enumerate(sources)) and len(sources) == len(values)
    convs = [c for _, c in sources]

    def build(param_sets) -> Optional[list]:
        try:
            if identity:
                return [tuple([c(v) for c, v in zip(convs, ps)]) if len(ps) == len(convs) else _bad()
                        for ps in param_sets]
            out = []
            for ps in param_sets:
                out.append(tuple(conv(ps[p]) if p is not None else conv for p, conv in sources))
            return out
        except (_Decline, IndexError, TypeError):
            return None

    return item, build


def _bad():
    raise _Decline
