"""Generic plans of parameterised SELECTs: planned once over placeholders, bound per execution.

Owns ``generic_select`` (``Database.plan``'s path for a SELECT with parameters) and the
prepared point read (``PeekTemplate``: a verified generic plan that peek planning makes a
key lookup on an index becomes that fast-path peek with the values put in, skipping
binding, the optimizer and peek planning per execution).  Invariant:
a generic plan is used only after it equalled the value-bound plan of its first parameter
set, and its optimized form only after that equalled the optimized value-bound plan, so a
statement answers exactly as planning it with its values would; any plan that cannot be
built or compared over placeholders falls back to binding the values, every time; a
template's peek, values put in, is the one peek planning gives that optimized form bound
with them (parameters only as looked-up values; a NULL value falls back).
Deliberately not here: the binding of placeholders (``planner.generic``) and the plan cache
(``Database.plans``).
"""
from __future__ import annotations

import dataclasses

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
    # execution), the ids of their subtrees without placeholders (``bind_generic``'s ``free``),
    # its fast-path peek template (None: not built yet, False: none)]
    entry = db.plans.get(("generic", stmt.text, types, db.catalog_version),
                         lambda: [None, False, None, set(), None])
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
        template = entry[4]
        if template:  # a point read off an index: no binding, no optimizer, no peek planning
            peek = template.instantiate(values)
            if peek is not None:
                plan = dataclasses.replace(template.plan)  # its own identity: its read is primed
                db.reader.prime_peek(plan, peek, template.clock)
                return plan
        plan = bind_generic(entry[0], values, entry[3])
        if entry[2] is not None:
            if template is None:
                template = entry[4] = peek_template(db, entry[0], entry[2], plan) or False
            peek = template.instantiate(values) if template else None
            if peek is not None:
                db.reader.prime_peek(plan, peek, template.clock)
            else:
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


class PeekTemplate:
    """A prepared point read: its fast-path peek with ``Slot`` literals where the parameters'
    values go (only in its key lookup's constraints), whether it reads the clock, and its
    plan bound with some values (every execution's plan but for the looked-up values, which
    only the peek reads)."""
    __slots__ = ("peek", "clock", "plan")

    def __init__(self, peek, clock: bool, plan):
        self.peek, self.clock, self.plan = peek, clock, plan

    def instantiate(self, values: tuple):
        """The ``FastPathPeek`` that peek planning gives the optimized plan bound with
        ``values``, or None when a value is NULL (a NULL pins no key: the plan differs)."""
        from planner.generic import Slot
        from planner.peek import FastPathPeek
        if any(v is None for v in values):
            return None
        p = self.peek
        # peek planning deduplicates each key's values; two parameters with one value give
        # one lookup here too (the product's order is kept)
        rows = tuple(dict.fromkeys(tuple(values[v.k] if type(v) is Slot else v for v in row)
                                   for row in p.literal_constraints))
        return FastPathPeek(p.index_id, p.on_id, p.key, rows, p.mfp, p.finishing)


def peek_template(db, generic, optimized, plan) -> "PeekTemplate | None":
    """The template of a verified generic plan (``generic``, its optimized expression
    ``optimized``, ``plan`` bound with values) when peek planning makes it a key lookup on
    an index in which the parameters appear only as looked-up values (nowhere in the map,
    filter or projection, the finishing or an AS OF), else None."""
    from planner.generic import Slot, bind_slots, has_slot
    from planner.peek import FastPathPeek, plan_peek
    try:
        slotted = bind_slots(generic)
        if slotted.finishing is not generic.finishing or slotted.as_of is not generic.as_of:
            return None
        expr = bind_slots(optimized)
        peek = plan_peek(expr, plan.finishing, db.lowering.available_indexes(), optimized=True)
    except Exception:  # a template is an optimisation: without one the plan is peeked as usual
        return None
    if not isinstance(peek, FastPathPeek) or peek.literal_constraints is None or has_slot(peek.mfp):
        return None
    if not any(type(v) is Slot for row in peek.literal_constraints for v in row):
        return None
    return PeekTemplate(peek, db.reader.reads_the_clock(expr, {peek.index_id}), plan)
