"""The INSERT path: an ``InsertPlan`` applied to one parameter set or many, as one write.

Owns ``PreparedInsert`` (a ``rows``-form plan compiled once: its VALUES rows become one
MapFilterProject over a parameter set, compiled by ``expr.compile``, or are recognised as
the parameter sets themselves, or as constants), the grouping of many parameter sets by the
types their values bind as (``planner.params``), evaluation, the NOT NULL check, RETURNING
and the handoff of the rows to ``Writer.apply``.  Every INSERT takes this path:
``execute`` with or without parameters (the sequencer's ``InsertPlan`` handler, ``insert``)
and ``executemany`` (``insert_many``).

Invariants: the rows written, and the error raised, are those of planning each parameter
set with its values bound as literals (``planner.plan_statement``) and evaluating the sets
in order, as the general path always did: a set whose compiled evaluation fails, or whose
types cannot be parameterised (``plan_insert`` gives None or raises), is planned that way,
and the first error in set order (binding errors first, as all sets are bound before any is
evaluated) is raised; a failed statement writes nothing.  A plan is prepared once per
(statement text, catalog version, parameter types) and never re-planned per parameter set.
A ``None`` parameter binds as ``unknown``; it shares the plan of the sets whose values at
its position bind as a type T only where that parameter is nothing but a whole VALUES item
turned into its column's value by strict conversions (``PreparedInsert.null_transparent``):
there NULL gives NULL whatever the type, and nothing else read the parameter's type.
Deliberately not here: binding (``planner.bind_dml``), committing (``Writer.apply``),
UPDATE and DELETE (``mzlite.writes``, ``mzlite.bulk_modify``).
"""
from __future__ import annotations

import collections
from itertools import chain
from operator import itemgetter
from typing import Optional

from expr.compile import compile_mfp, compile_mfp_pairs, compile_scalar, evaluate_constant
from expr.functions import FUNCTIONS
from expr.mfp import MapFilterProject
from expr.scalar import Call, Column, Literal, columns_referenced
from mzlite.cursor import Result
from planner import plan_insert, plan_statement
from planner.params import column_type, engine_values, parameter_types
from repr.errors import EvalError
from sql import errors as E
from sql.types import display_name

#: the conversions an assignment wraps a parameter in: strict, so NULL stays NULL
_CONVERSIONS = ("cast_", "typmod_")


def _bare(e):
    """``e`` without its identity conversions (compiled inline as their argument)."""
    while isinstance(e, Call) and len(e.args) == 1 and getattr(FUNCTIONS.get(e.func), "inline", None) == "{0}":
        e = e.args[0]
    return e


def _conversion_of(e) -> Optional[int]:
    """The parameter ``e`` is, through strict conversions whose other arguments are literals."""
    while isinstance(e, Call):
        impl = FUNCTIONS.get(e.func)
        rest = [a for a in e.args if not isinstance(a, Literal)]
        if impl is None or not impl.strict or not e.func.startswith(_CONVERSIONS) or len(rest) != 1 \
                or not isinstance(e.args[0], (Call, Column)) or e.args[0] is not rest[0]:
            return None
        e = rest[0]
    return e.index if isinstance(e, Column) else None


class PreparedInsert:
    """A ``rows``-form ``InsertPlan`` compiled for evaluation over parameter sets."""

    def __init__(self, plan):
        self.plan = plan
        rows = plan.rows
        n = len(plan.param_types)
        arity = len(plan.column_names)
        #: VALUES rows per parameter set
        self.k = len(rows)
        #: all rows constant: their values (no evaluation at all)
        self.constants = None
        #: the one row is the parameter set itself, column for column
        self.identity = False
        #: the compiled rows: one MFP over a parameter set, its output every row side by side
        self.fn = None
        if all(type(e) is Literal for row in rows for e in row):
            self.constants = [tuple(e.value for e in row) for row in rows]
        elif n and self.k == 1 and arity == n and all(_bare(e) == Column(i) for i, e in enumerate(rows[0])):
            self.identity = True
        elif n:
            exprs = tuple(chain.from_iterable(rows))
            self.mfp = MapFilterProject(n, exprs, (), tuple(range(n, n + len(exprs))))
            self.fn = compile_mfp(self.mfp)
        self.arity = arity
        #: the one row as (parameter position, list form or None) per column, when each column
        #: is a parameter itself or a strict one-argument conversion of one that has a list
        #: form (``FuncImpl.many``: text timestamps, dates, numerics): evaluated a column at a
        #: time, one C-level pass per column; None where any column is anything else
        self.columnar = _columnar_form(rows[0]) if self.fn is not None and self.k == 1 else None
        #: parameter positions where a NULL value may share the plan of another type: the
        #: parameter is only ever a whole VALUES item (``plan.bare_parameters``), and each
        #: column reading it is it through strict conversions alone
        self.null_transparent = frozenset(
            k for k in plan.bare_parameters
            if all(_conversion_of(e) == k for row in rows for e in row if k in columns_referenced(e)))
        self.returning = tuple(compile_scalar(e) for e in plan.returning)

    def evaluate(self, sets: list) -> tuple[list, list]:
        """``(rows, failed)``: every row for ``sets`` (engine values; ``k`` rows per set, in set
        order) and the positions of the sets whose evaluation raised (their rows left out)."""
        if self.constants is not None:
            return (self.constants * len(sets) if self.k > 1 else [self.constants[0]] * len(sets)), []
        if self.identity:
            return (sets if type(sets) is list else list(sets)), []
        if self.fn is None:  # no parameters: each expression evaluated once a set, walking its tree
            out, failed = [], []
            for i in range(len(sets)):
                try:
                    out += [tuple(evaluate_constant(e) for e in row) for row in self.plan.rows]
                except EvalError:
                    failed.append(i)
            return out, failed
        if self.columnar is not None:
            out = _evaluate_columnar(self.columnar, sets)
            if out is not None:
                return out, []
        out, errors = self.fn(sets)
        failed = []
        if errors:
            out, bad = compile_mfp_pairs(self.mfp)(list(zip(sets, range(len(sets)))))
            out = [row for row, _i in out]
            failed = [i for _e, i in bad]
        if self.k > 1:
            a = self.arity
            out = [row[j * a:(j + 1) * a] for row in out for j in range(self.k)]
        return out, failed


def _columnar_form(row) -> Optional[tuple]:
    """``PreparedInsert.columnar`` for the one VALUES ``row``, or None."""
    cols = []
    for e in row:
        e = _bare(e)
        if type(e) is Column:
            cols.append((e.index, None))
            continue
        impl = FUNCTIONS.get(e.func) if isinstance(e, Call) and len(e.args) == 1 else None
        arg = _bare(e.args[0]) if impl is not None else None
        if impl is None or impl.many is None or not impl.strict or type(arg) is not Column:
            return None
        cols.append((arg.index, impl.many))
    return tuple(cols) if any(many is not None for _i, many in cols) else None


def _evaluate_columnar(columnar: tuple, sets) -> Optional[list]:
    """The rows of ``sets`` evaluated a column at a time, or None when a list form raised
    (the caller then evaluates row by row, which finds the failing sets in order)."""
    cols = []
    by_position = list(zip(*sets))  # the parameter sets transposed, in C
    if not by_position:
        return []
    for i, many in columnar:
        col = by_position[i]
        if many is not None:
            try:
                if None in col:  # strict: NULL stays NULL, the rest go through the list form
                    it = iter(many([v for v in col if v is not None]))
                    col = [None if v is None else next(it) for v in col]
                else:
                    col = many(list(col))
            except (EvalError, TypeError):
                return None
        cols.append(col)
    return list(zip(*cols))


def prepared(db, stmt, types) -> Optional[PreparedInsert]:
    """The prepared ``rows`` form of the INSERT ``stmt`` for parameters of ``types``, or None
    (plan each set with its values); kept in ``db.plans`` when the statement has parameters."""
    def build():
        try:
            plan = plan_insert(stmt, db.catalog, types)
        except (E.Error, EvalError):
            return False  # the literal plan of each set raises it (or, folding, does not)
        return PreparedInsert(plan) if plan is not None else False
    if not stmt.param_count:
        return build() or None
    return db.plans.get(("insert", stmt.text, db.catalog_version, types), build) or None


def _prepared_plan(db, stmt, plan) -> PreparedInsert:
    """``plan`` (the ``rows`` form ``plan_for`` gave) prepared, from ``db.plans`` when it is there."""
    if not stmt.param_count:
        return PreparedInsert(plan)
    return db.plans.get(("insert", stmt.text, db.catalog_version, plan.param_types), lambda: PreparedInsert(plan))


def plan_for(db, stmt, params):
    """The ``InsertPlan`` of the INSERT ``stmt`` for one parameter set: the ``rows`` form for
    its types when there is one (prepared once for a statement with parameters), else the
    ``expr`` form with the values bound."""
    if stmt.param_count:
        try:
            prep = prepared(db, stmt, parameter_types(params))
        except E.Error:
            prep = None  # a value no parameter type fits: the literal plan raises it
        if prep is not None:
            return prep.plan
    else:
        try:
            plan = plan_insert(stmt, db.catalog, ())
        except (E.Error, EvalError):
            plan = None
        if plan is not None:
            return plan
    return plan_statement(stmt, db.catalog, params)


def _groups(db, stmt, param_sets):
    """``(groups, literal)``: ``(prepared, set positions or None for all, engine sets)`` per
    parameter types, and the positions of the sets to plan with their values."""
    width = len(param_sets[0])
    if set(map(len, param_sets)) == {width}:
        cols = [list(map(itemgetter(i), param_sets)) for i in range(width)]  # not zip(*..): much slower
        info = [column_type(c) for c in cols]
        if all(t is not None for t, _n, _c in info):
            prep = prepared(db, stmt, tuple(t for t, _n, _c in info))
            nullable = {i for i, (t, has_null, _c) in enumerate(info) if has_null and t != "unknown"}
            if prep is not None and nullable <= prep.null_transparent:
                converted = [(i, conv) for i, (_t, _n, conv) in enumerate(info) if conv is not None]
                if converted:
                    for i, conv in converted:
                        cols[i] = [None if v is None else conv(v) for v in cols[i]]
                    param_sets = list(zip(*cols))
                return [(prep, None, param_sets)], []
    by_types: dict = {}
    for i, ps in enumerate(param_sets):
        try:
            types = parameter_types(ps)
        except E.Error:
            types = None
        by_types.setdefault(types, []).append(i)
    groups, literal = [], []
    for types, positions in by_types.items():
        prep = prepared(db, stmt, types) if types is not None else None
        if prep is None:
            literal.extend(positions)
        else:
            groups.append((prep, positions, [engine_values(param_sets[i]) for i in positions]))
    return groups, literal


def _rows(db, session, stmt, param_sets, groups, literal):
    """``(rows, a plan of the statement)``: every row to insert, validated; raises as the
    literal plans of the sets would."""
    rows, failed = [], []
    for prep, positions, sets in groups:
        out, bad = prep.evaluate(sets)
        rows.extend(out)
        failed.extend(bad if positions is None else [positions[j] for j in bad])
    if groups and not failed and not literal:
        plan = groups[0][0].plan
        if not any(None in map(itemgetter(i), rows) for i in plan.not_null):  # one C-level pass a column
            return rows, plan
        if len(groups) == 1 and groups[0][1] is None:  # rows in set order: the first violation
            db.writer.check_not_null(plan, rows)
    return _rows_one_set_at_a_time(db, session, stmt, param_sets, groups, set(failed) | set(literal))


def _rows_one_set_at_a_time(db, session, stmt, param_sets, groups, redo):
    """``(rows, a plan)``: the rows of every set in order, the sets in ``redo`` planned with
    their values (all planned first: binding errors come before evaluation errors, as on the
    general path)."""
    plans = {i: plan_statement(stmt, db.catalog, param_sets[i]) for i in sorted(redo)}
    where = {}
    for prep, positions, sets in groups:
        for j, s in enumerate(sets):
            where[j if positions is None else positions[j]] = (prep, s)
    out = []
    for i in range(len(param_sets)):
        if i in plans:
            plan = plans[i]
            rows = db.writer.evaluate(session, plan.expr)
        else:
            prep, s = where[i]
            plan = prep.plan
            rows, _failed = prep.evaluate([s])
        db.writer.check_not_null(plan, rows)
        out.extend(rows)
    return out, plan


def _write(db, session, table_id, rows) -> None:
    """One write of ``rows``: each row once with its count (distinct rows, the common case,
    in one C-level pass, no ``(row, 1)`` pair per row; storage keeps the dict as the log entry)."""
    counts = dict.fromkeys(rows, 1)
    if len(counts) != len(rows):
        counts = dict(collections.Counter(rows))
    # No gc.freeze() after a bulk load: frozen objects leave the collector's long-lived
    # count near zero, so every tenth gen-1 collection became a full one, each walking
    # the structures the next index build was filling.
    db.writer.apply(session, {table_id: counts}, consolidated=True)


def insert(db, session, plan, stmt, params) -> Result:
    """The sequencer's handler of an ``InsertPlan``: the plan's rows for the parameter sets
    ``params`` (the ``expr`` form: its one set), written as one write; RETURNING's rows for
    one set."""
    if plan.rows is not None:
        prep = _prepared_plan(db, stmt, plan)
        groups = [(prep, None, [engine_values(p) for p in params])]
        rows, _plan = _rows(db, session, stmt, params, groups, [])
    else:
        rows = db.writer.evaluate(session, plan.expr)
        db.writer.check_not_null(plan, rows)
        prep = None
    _write(db, session, plan.table_id, rows)
    n = len(rows)
    if not plan.returning:
        return Result(f"INSERT 0 {n}", None, rowcount=n)
    if prep is not None:
        ps = engine_values(params[0])
        out = [tuple(f(r + ps) for f in prep.returning) for r in rows]
    else:
        fns = [compile_scalar(e) for e in plan.returning]
        out = [tuple(f(r) for f in fns) for r in rows]
    return Result(f"INSERT 0 {n}", [(c, display_name(t)) for c, t in plan.returning_columns], out, n)


def insert_many(db, session, stmt, param_sets) -> Result:
    """``executemany`` of an INSERT: every parameter set's rows in one write (RETURNING is
    not returned)."""
    groups, literal = _groups(db, stmt, param_sets)
    rows, plan = _rows(db, session, stmt, param_sets, groups, literal)
    _write(db, session, plan.table_id, rows)
    return Result(f"INSERT 0 {len(rows)}", None, rowcount=len(rows))
