"""Generic plans of parameterised SELECTs: planned once over placeholders, bound per execution.

Owns ``generic_select`` (``Database.plan``'s path for a SELECT with parameters).  Invariant:
a generic plan is used only after it equalled the value-bound plan of its first parameter
set, and its optimized form only after that equalled the optimized value-bound plan, so a
statement answers exactly as planning it with its values would; any plan that cannot be
built or compared over placeholders falls back to binding the values, every time.
Deliberately not here: the binding of placeholders (``planner.generic``) and the plan cache
(``Database.plans``).
"""
from __future__ import annotations

from sql import errors as E
from planner import plan_statement

#: the parameter types a generic SELECT plan is tried for (``planner.generic``): scalars whose
#: values bind as typed literals (a string or NULL binds untyped, read by its context)
_GENERIC_TYPES = frozenset({"int2", "int4", "int8", "numeric", "float8", "bool", "date", "timestamp",
                            "timestamptz", "uuid"})


def generic_select(db, stmt, params):
    """The plan of a SELECT with ``params`` from its generic plan (``planner.generic``), or None
    to bind the values as usual.  The generic plan is kept per text, parameter types and
    catalog version, and used only once it equalled the value-bound plan of its first
    parameter set (a prepared point read is then bound, not planned, per execution); its
    optimized form likewise, once it equalled the optimized value-bound plan.
    Sabotage seen red: skipping that comparison (``tests/test_generic_plans.py``)."""
    from planner.generic import bind_generic, plan_generic_select
    from planner.params import engine_values, parameter_types
    try:
        types = parameter_types(params)
    except E.Error:
        return None
    if not _GENERIC_TYPES.issuperset(types):
        return None
    # [generic plan (False: none), verified, its optimized expression (None: optimize per
    # execution), the ids of their subtrees without placeholders (``bind_generic``'s ``free``)]
    entry = db.plans.get(("generic", stmt.text, types, db.catalog_version), lambda: [None, False, None, set()])
    if entry[0] is False:
        return None
    if entry[0] is None:
        try:
            entry[0] = plan_generic_select(stmt, db.catalog, types)
        except Exception:  # not bindable with placeholders (LIMIT $1, ...): values every time
            entry[0] = False
            return None
    values = engine_values(params)
    if entry[1]:
        plan = bind_generic(entry[0], values, entry[3])
        if entry[2] is not None:
            db.reader.prime_optimized(plan, bind_generic(entry[2], values, entry[3]))
        return plan
    plan = plan_statement(stmt, db.catalog, params)
    try:
        same = bind_generic(entry[0], values) == plan
    except Exception:
        same = False
    if not same:
        entry[0] = False
        return plan
    entry[1] = True
    try:  # the optimizer over placeholders, kept where it agrees with the optimizer over values
        from planner.optimize import optimize
        opt = optimize(entry[0].expr)
        if bind_generic(opt, values) == db.reader.optimized(plan):
            entry[2] = opt
    except Exception:
        pass
    return plan
