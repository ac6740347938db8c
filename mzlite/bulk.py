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
import functools
from itertools import repeat
from operator import itemgetter
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
        conv.column_kind = ({int, type(None)}, (lo, hi))
        return conv
    if typ == "numeric":
        def conv(v):
            if v is None or type(v) is Decimal:
                return v
            if type(v) is int:
                return Decimal(v)
            raise _Decline
        conv.column_kind = ({Decimal, type(None)}, None)
        return conv
    if typ == "float8":
        def conv(v):
            if v is None or type(v) is float:
                return v
            if type(v) is int:
                return float(v)
            raise _Decline
        conv.column_kind = ({float, type(None)}, None)
        return conv
    if typ == "float4":  # real (repr.strconv's canonical float32 values)
        from repr.strconv import float4_canon

        def conv(v):
            if v is None:
                return None
            if type(v) is not float and type(v) is not int:
                raise _Decline
            try:
                r = float4_canon(float(v))
            except OverflowError:
                raise _Decline from None
            if r == 0.0 and v != 0:
                raise _Decline
            return r
        return conv
    if typ in ("text", "bpchar"):  # bpchar: padding is the column's typmod check
        def conv(v):
            if v is None or type(v) is str:
                return v
            raise _Decline
        conv.column_kind = ({str, type(None)}, None)
        return conv
    if typ == "bool":
        def conv(v):
            if v is None or type(v) is bool:
                return v
            raise _Decline
        conv.column_kind = ({bool, type(None)}, None)
        return conv
    return None


class _Decline(Exception):
    pass


def _with_typmod(conv, typmod):
    """``conv`` followed by the column's modifier check (``expr.functions.char``/``numeric``), as the
    general path's assignment cast does; a value the check refuses declines, so the general
    path raises the error (22001/22003) with its statement context."""
    from expr.functions import FUNCTIONS
    from repr.errors import EvalError
    check = FUNCTIONS["typmod_" + typmod[0]].fn
    extra = typmod[1:] if typmod[0] == "numeric" else (typmod[1], False)

    def f(v):
        v = conv(v)
        if v is None:
            return None
        try:
            return check(v, *extra)
        except EvalError:
            raise _Decline from None
    return f


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
    from expr.compile import evaluate_constant
    sources = []   # per table column: (param index, converter) or (None, default value)
    by_name = dict(zip(names, (v.number - 1 for v in values)))
    for col in item.columns:
        if col.name in by_name:
            conv = _converter(col.type)
            if conv is not None and col.typmod is not None and col.typmod[1] is not None:
                conv = _with_typmod(conv, col.typmod)  # only modified columns pay for it
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

    width = len(values)
    col_convs = [(p, _column_converter(conv) if p is not None else conv) for p, conv in sources]

    def build(param_sets) -> Optional[list]:
        """Column-wise: transpose once, check each column's types with C-level set/min/max
        calls, convert only columns that need it, transpose back (about 10x cheaper than a
        converter call per value at a million rows)."""
        try:
            if not param_sets or set(map(len, param_sets)) != {width}:
                return None
            by_param = [list(map(itemgetter(i), param_sets)) for i in range(width)]  # not zip(*..): 20x slower
            cols = [cc(by_param[p]) if p is not None else repeat(cc) for p, cc in col_convs]
            if all(p == i for i, (p, _) in enumerate(col_convs)) and len(cols) == width and \
                    all(c is by_param[i] for i, c in enumerate(cols)):
                return param_sets if type(param_sets) is list else list(param_sets)
            return list(zip(*cols))
        except (_Decline, IndexError, TypeError):
            return None

    return item, build


_NONE = type(None)


def _column_converter(conv):
    """``conv`` over a whole column (a tuple): the column itself when every value is already
    the column's type (ints in range, str, bool, Decimal, float), else a list of converted
    values; raises ``_Decline`` as ``conv`` does."""
    kind = getattr(conv, "column_kind", None)

    def convert(col):
        types = set(map(type, col))
        if kind is not None and types <= kind[0]:
            bounds = kind[1]
            if bounds is not None:
                present = col if _NONE not in types else [v for v in col if v is not None]
                if present and (min(present) < bounds[0] or max(present) > bounds[1]):
                    raise _Decline
            return col
        return list(map(conv, col))
    return convert


# ---------------------------------------------------------------- UPDATE / DELETE


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
    from expr.scalar import Call, Column, If, Literal
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
    from expr.compile import compile_predicates, compile_scalar
    from expr.scalar import Call, Column
    from planner import plan_statement
    from planner.plans import DeletePlan, UpdatePlan
    if stmt.kind not in ("update", "delete") or not param_sets:
        return None
    n = len(param_sets[0])
    if set(map(len, param_sets)) != {n}:  # one C-level pass
        return None
    types = tuple(type(v) for v in param_sets[0])
    key = (stmt.text, db.catalog_version, types)
    cache = db.__dict__.setdefault("_bulk_templates", {})
    template = cache.get(key)
    if template is None:
        template = _modify_template(db, stmt, param_sets[0])
        if len(cache) > 256:
            cache.clear()
        cache[key] = template
    if template is False:
        return None
    plan, arity, ix, cols, pinned, check, new_fns, fast = template
    for i, t in enumerate(types):  # one C-level pass per parameter position
        if set(map(type, map(itemgetter(i), param_sets))) != {t}:
            return None
    return _apply_template(db, plan, arity, ix, cols, pinned, check, new_fns, fast, param_sets)


def _modify_template(db, stmt, sample):
    """The parameter-independent part of a bulk UPDATE/DELETE, or False to decline."""
    from expr.compile import compile_predicates, compile_scalar
    from expr.scalar import Call, Column
    from planner import plan_statement
    from planner.plans import DeletePlan, UpdatePlan
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
    from expr.finishing import RowSetFinishing
    from expr.mfp import MapFilterProject
    ts = db.reader.choose_timestamp(_NoTxnSession.of(db), {ix.id})
    holds = db.reader.hold({ix.id}, ts)
    try:
        resp = db.controller.peek(ix.id, tuple(keys), ts, RowSetFinishing(),
                                  MapFilterProject.identity(arity))
    finally:
        db.reader.release(holds)
    rows = db.reader._rows(resp, _NoTxnSession.of(db))
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

    @classmethod
    def of(cls, db):
        return cls()
