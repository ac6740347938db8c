"""The executemany fast path of an UPDATE or DELETE whose WHERE pins an indexed key with
parameters: one index read for every parameter set, one write.

Owns the template of such a statement (planned once per parameter types with marked
parameters, the markers then turned into columns over the parameter set), the index
lookup of every key the sets name, and applying the sets in order to the rows found.
Invariant: the updates are exactly what applying each parameter set as its own statement,
in order, would write, consolidated (each row once, no zero diff); anything the template
cannot be sure of (a parameter folded away, no index pinned, a NULL key) declines, and
the general path (``Writer.modify_many``) runs.  Deliberately not here: committing (the
caller writes the updates), UPDATE/DELETE of one parameter set without an index.
"""
from __future__ import annotations

from decimal import Decimal
import functools
from operator import itemgetter

from expr.compile import compile_predicates, compile_scalar
from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from expr.scalar import Call, Column, If, Literal
from planner import plan_statement
from planner.plans import DeletePlan, UpdatePlan


class _Marker:
    """Mixin marking a parameter value with its position, so the bound plan shows where each
    parameter landed (``Literal(value)`` whose value is a marker)."""
    __slots__ = ()


class _MInt(int, _Marker):
    pass


class _MFloat(float, _Marker):
    pass


class _MStr(str, _Marker):
    pass


class _MDec(Decimal, _Marker):
    pass


def _mark(value, k):
    for base, cls in ((bool, None), (int, _MInt), (float, _MFloat), (str, _MStr), (Decimal, _MDec)):
        if type(value) is base:
            if cls is None:
                return None
            m = cls(value)
            m.__dict__["k"] = k
            return m
    return None


for _cls in (_MInt, _MFloat, _MStr, _MDec):
    _cls.__slots__ = ()  # type: ignore[misc]


def _substitute_markers(expr, arity, seen):
    """``expr`` with each marked literal replaced by ``Column(arity + k)``."""
    if isinstance(expr, Literal):
        v = expr.value
        if isinstance(v, _Marker):
            seen.add(v.k)
            return Column(arity + v.k)
        return expr
    if isinstance(expr, Call):
        return Call(expr.func, tuple(_substitute_markers(a, arity, seen) for a in expr.args), expr.type)
    if isinstance(expr, If):
        return If(_substitute_markers(expr.cond, arity, seen), _substitute_markers(expr.then, arity, seen),
                  _substitute_markers(expr.els, arity, seen), expr.type)
    return expr


def plan_bulk_modify(db, stmt, param_sets):
    """For ``executemany`` of an UPDATE or DELETE whose WHERE pins an indexed key with
    parameters: ``(plan, updates, rowcount)`` computed with one index read for all
    parameter sets, applying the sets in order; ``None`` to decline (general path).
    ``updates`` are consolidated (each row once, no zero diffs)."""
    if stmt.kind not in ("update", "delete") or not param_sets:
        return None
    n = len(param_sets[0])
    if set(map(len, param_sets)) != {n}:  # one C-level pass
        return None
    types = tuple(type(v) for v in param_sets[0])
    template = db.plans.get(("modify", stmt.text, db.catalog_version, types),
                            lambda: _modify_template(db, stmt, param_sets[0]))
    if template is False:
        return None
    plan, arity, ix, cols, pinned, check, new_fns, fast = template
    for i, t in enumerate(types):  # one C-level pass per parameter position
        if set(map(type, map(itemgetter(i), param_sets))) != {t}:
            return None
    return _apply_template(db, plan, arity, ix, cols, pinned, check, new_fns, fast, param_sets)


def _modify_template(db, stmt, sample):
    """The parameter-independent part of a bulk UPDATE/DELETE, or False to decline."""
    n = len(sample)
    markers = tuple(_mark(v, k) for k, v in enumerate(sample))
    if any(m is None for m in markers):
        return False
    plan = plan_statement(stmt, db.catalog, markers)
    if not isinstance(plan, (UpdatePlan, DeletePlan)) or plan.selection is not None or not plan.predicates:
        return False
    table = db.catalog.get(plan.table_id)
    arity = table.arity()
    seen: set = set()
    preds = [_substitute_markers(p, arity, seen) for p in plan.predicates]
    assigns = []
    if isinstance(plan, UpdatePlan):
        assigns = [(i, _substitute_markers(e, arity, seen)) for i, e in plan.assignments]
    if seen != set(range(n)):
        return False  # a parameter was folded away at bind time: the template would be wrong
    # an index whose key columns are all pinned to parameters by equality
    pinned = {}
    for p in preds:
        if isinstance(p, Call) and p.func.startswith("eq") and len(p.args) == 2:
            a, b = p.args
            if isinstance(a, Column) and isinstance(b, Column):
                if a.index < arity <= b.index:
                    pinned[a.index] = b.index - arity
                elif b.index < arity <= a.index:
                    pinned[b.index] = a.index - arity
    index = None
    for ix in db.lowering.indexes_on(plan.table_id):
        cols = []
        for e in ix.key:
            if not isinstance(e, Column) or e.index not in pinned:
                break
            cols.append(e.index)
        else:
            index = (ix, cols)
            break
    if index is None:
        return False
    ix, cols = index
    check = compile_predicates(tuple(preds))
    new_fns = [(i, compile_scalar(e)) for i, e in assigns]
    # the shortcut's plain shapes: a WHERE that is exactly the key's equalities (an index
    # lookup already guarantees them: the key holds the same values, compared the same way)
    # and assignments of a column or a parameter (read straight off the row or the set)
    key_only = len(preds) == len(cols) and all(
        isinstance(p, Call) and p.func.startswith("eq") and len(p.args) == 2
        and all(isinstance(a, Column) for a in p.args)
        and {a.index for a in p.args} in ({c, arity + pinned[c]} for c in cols)
        for p in preds)
    direct = [(i, e.index) for i, e in assigns] if all(isinstance(e, Column) for _, e in assigns) else None
    fast = (key_only and _lookup_equality_is_sql_equality(table, cols), direct)
    return plan, arity, ix, cols, pinned, check, new_fns, fast


def _lookup_equality_is_sql_equality(table, cols) -> bool:
    """Python's ``==`` on these key columns is SQL's ``=`` (no NaN, no collation or padding
    subtleties), so a row found by key lookup satisfies the key's equalities."""
    return all(table.columns[c].type in ("int2", "int4", "int8", "text", "bool", "uuid", "date")
               for c in cols)


def _apply_template(db, plan, arity, ix, cols, pinned, check, new_fns, fast, param_sets):
    positions = [pinned[c] for c in cols]
    if len(positions) == 1:
        key_list = list(zip(map(itemgetter(positions[0]), param_sets)))
        keys = set(key_list)
        if (None,) in keys:
            return None
    else:
        key_list = list(map(itemgetter(*positions), param_sets))
        keys = set(key_list)
        if any(v is None for key in keys for v in key):
            return None
    if ix.id not in db.controller.collections:
        return None
    # one read of every candidate row, through the index
    session = _NoTxnSession()
    ts, holds = db.reader.choose_and_hold(session, {ix.id})
    try:
        resp = db.controller.peek(ix.id, tuple(keys), ts, RowSetFinishing(),
                                  MapFilterProject.identity(arity))
    finally:
        db.reader.release(holds)
    rows = db.reader.rows_of(resp, session)
    if len(cols) == 1 and len(keys) == len(key_list) and fast[0] and not any(i in cols for i, _f in new_fns):
        done = _apply_row_by_row(rows, cols[0], positions[0], param_sets, new_fns, fast[1], arity)
        if done is not None:
            return (plan,) + done
    by_key: dict = {}
    row_key = (lambda row, c0=cols[0]: (row[c0],)) if len(cols) == 1 else \
        (lambda row, g=itemgetter(*cols): g(row))
    for row, c in rows:
        bucket = by_key.setdefault(row_key(row), {})
        bucket[row] = bucket.get(row, 0) + c
    if len(keys) == len(key_list) and not any(i in cols for i, _f in new_fns):
        # every parameter set has its own key and no assignment moves a row to another
        # key: each row is touched by at most one set, so the order of the sets does not
        # matter and the change is computed row by row, without re-bucketing
        updates, matched = _apply_disjoint(by_key, key_list, param_sets, check, new_fns, fast, arity)
        if any(len(b) > 1 for b in by_key.values()):
            # rows sharing a key may be updated into each other: sum them
            acc: dict = {}
            for row, d in updates:
                acc[row] = acc.get(row, 0) + d
            updates = [(row, d) for row, d in acc.items() if d]
        return plan, updates, matched
    initial = {row: c for bucket in by_key.values() for row, c in bucket.items()}
    matched = 0
    for ps in param_sets:
        key = tuple(ps[pinned[c]] for c in cols)
        bucket = by_key.get(key)
        if not bucket:
            continue
        for row, c in list(bucket.items()):
            ext = row + tuple(ps)
            if not check(ext):
                continue
            matched += c
            del bucket[row]
            if new_fns:
                new = list(row)
                for i, f in new_fns:
                    new[i] = f(ext)
                new = tuple(new)
                nk = tuple(new[c_] for c_ in cols)
                b2 = by_key.setdefault(nk, {})
                b2[new] = b2.get(new, 0) + c
    final: dict = {}
    for bucket in by_key.values():
        for row, c in bucket.items():
            final[row] = final.get(row, 0) + c
    updates = [(row, c - initial.get(row, 0)) for row, c in final.items() if c != initial.get(row, 0)]
    updates += [(row, -c) for row, c in initial.items() if row not in final]
    return plan, updates, matched


def _apply_disjoint(by_key, key_list, param_sets, check, new_fns, fast, arity):
    """``(updates, matched)`` when each parameter set owns its key (see the caller)."""
    updates = []
    append = updates.append
    matched = 0
    get = by_key.get
    key_only, direct = fast
    if key_only:
        check = None  # the key lookup already satisfied the WHERE
    build = None
    if direct is not None:
        new_fns = None  # plain copies from the set or the row, below
        build = _direct_builder(tuple(direct), arity) if direct else None
    for key, ps in zip(key_list, param_sets):
        bucket = get(key)
        if not bucket:
            continue
        for row, c in bucket.items():
            if check is not None or new_fns:
                ext = row + ps
                if check is not None and not check(ext):
                    continue
            matched += c
            if build is not None or new_fns:
                if build is not None:
                    new = build(row, ps)
                else:
                    new = list(row)
                    for i, f in new_fns:
                        new[i] = f(ext)
                    new = tuple(new)
                if new == row:
                    continue
                append((new, c))
            append((row, -c))
    return updates, matched


def _apply_row_by_row(rows, col: int, position: int, param_sets, new_fns, direct, arity: int):
    """``(updates, matched)`` without bucketing rows by key, or ``None`` to decline: each
    set owns its key (one column, ``col``), the WHERE is exactly that key's equality (the
    lookup found only matching rows) and no assignment touches the key, so every row found
    is changed by the one set holding its key.  Declines when a key holds several rows
    (their new rows may coincide and must be summed) or an assignment is computed."""
    if not new_fns:  # DELETE: every row found goes, with its count
        return [(row, -c) for row, c in rows], sum(map(_COUNT, rows))
    if direct is None or len(set(map(itemgetter(col), map(itemgetter(0), rows)))) != len(rows):
        return None  # (rows are distinct: a peek answers each row once)
    by_key = dict(zip(map(itemgetter(position), param_sets), param_sets))
    updates: list = []
    _direct_updater(tuple(direct), arity, col)(rows, by_key, updates.append)
    return updates, sum(map(_COUNT, rows))


_COUNT = itemgetter(1)


@functools.lru_cache(maxsize=256)
def _direct_updater(direct: tuple, arity: int, col: int):
    """``(rows, sets by key, append)``: append ``(new, c)`` and ``(row, -c)`` for every row
    whose new row differs, the new row built from the set holding the row's key (``col``)
    by one tuple display (``_new_row_display``, inlined in the loop)."""
    parts = _new_row_display(direct, arity)
    code = (f"def _update(rows, by_key, append):\n"
            f"    for row, c in rows:\n"
            f"        ps = by_key[row[{col}]]\n"
            f"        new = ({parts},)\n"
            f"        if new != row:\n"
            f"            append((new, c))\n"
            f"            append((row, -c))\n")
    ns: dict = {}
    exec(compile(code, "<mzlite:bulk_update>", "exec"), ns)
    return ns["_update"]


@functools.lru_cache(maxsize=256)
def _direct_builder(direct: tuple, arity: int):
    """``(row, params) -> new row`` for assignments that copy a parameter or a column
    (``SET amount = ?``), generated once per shape: one tuple display, no list per row."""
    return eval(f"lambda row, ps: ({_new_row_display(direct, arity)},)")


def _new_row_display(direct: tuple, arity: int) -> str:
    """The new row's columns as source over ``row`` and the parameter set ``ps``: each
    assigned column (``direct``: ``(column, source)``, a source ``>= arity`` being parameter
    ``source - arity``) copies its source, the others the old row's value."""
    src = {i: (f"ps[{j - arity}]" if j >= arity else f"row[{j}]") for i, j in direct}
    return ", ".join(src.get(i, f"row[{i}]") for i in range(arity))


class _NoTxnSession:
    """The minimal session view ``Reader`` needs for a read inside a bulk write."""

    def __init__(self):
        self.vars = {"transaction_isolation": "strict serializable", "statement_timeout": 0}
        self.txn = None
        self.cancel_requested = False
