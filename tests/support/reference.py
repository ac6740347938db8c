"""The reference evaluator: an obviously-correct, from-scratch evaluation of a RelationExpr.

Owns ``evaluate`` / ``evaluate_with_errors``: the testing oracle every other package
compares against (optimizer rules, rendering, peeks, maintained views).  Invariant: the
result is a *consolidated* multiset ``dict[row, count]`` with zero counts removed; counts
are signed (``Negate`` may make them negative until ``Threshold`` clips them).  Data
errors (``EvalError``) never escape ``evaluate_with_errors``: they are collected as error
rows ``(sqlstate, message) -> count``.  Deliberately not here: speed (nested loops,
whole-collection recomputation), incrementality, and scalar function implementations
(``expr.compile`` provides them; ``fallback_compile``, a tiny tree-walker over a handful
of generic functions, is what tests of plans built with those functions patch in).  It is
independent of the production evaluator it checks (``expr.interpret``: compiled MFPs, hash
joins, the maintained aggregates).

Over 600 lines: it evaluates every MIR node from scratch in one evaluator, on purpose
independent of the operators it checks; window and recursion semantics live in
``tests/support/window_reference.py`` and ``expr/iterate.py``.
"""
from __future__ import annotations

import decimal
from decimal import Decimal
import functools
import math
from typing import Any, Callable, Mapping, Optional

from expr.relation import (ORDINALITY, ArrangeBy, ColumnOrder, Constant, Filter, FlatMap, Get, Join, Let,
                           LocalId, Map, Negate, Project, Reduce, Threshold, TopK, Union)
from expr.scalar import Call, CallMzNow, Column, If, Literal, columns_referenced
from repr.errors import EvalError

Collection = dict  # dict[tuple, int]

# ------------------------------------------------------------------ scalar fallback


def _and(*args):
    saw_null = False
    for a in args:
        v = a()
        if v is False:
            return False
        if v is None:
            saw_null = True
    return None if saw_null else True


def _or(*args):
    saw_null = False
    for a in args:
        v = a()
        if v is True:
            return True
        if v is None:
            saw_null = True
    return None if saw_null else False


def _strict(f):
    """Lift ``f`` to NULL-in NULL-out over eagerly evaluated arguments."""
    def g(*thunks):
        vals = [t() for t in thunks]
        if any(v is None for v in vals):
            return None
        return f(*vals)
    return g


def _div(a, b):
    if b == 0:
        raise EvalError("22012", "division by zero")
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _mod(a, b):
    if b == 0:
        raise EvalError("22012", "division by zero")
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


#: The fallback's functions.  Each takes zero-argument thunks (so ``and``/``or`` can
#: short-circuit).  Only what this package's tests need; ``expr.functions`` is the
#: real table.
FALLBACK_FUNCTIONS: dict[str, Callable] = {
    "and": _and,
    "or": _or,
    "not": _strict(lambda a: not a),
    "is_null": lambda a: a() is None,
    "is_not_null": lambda a: a() is not None,
    "is_true": lambda a: a() is True,
    "is_not_distinct_from": lambda a, b: (lambda x, y: x == y if x is not None and y is not None
                                          else x is None and y is None)(a(), b()),
    "eq": _strict(lambda a, b: a == b),
    "neq": _strict(lambda a, b: a != b),
    "lt": _strict(lambda a, b: a < b),
    "lte": _strict(lambda a, b: a <= b),
    "gt": _strict(lambda a, b: a > b),
    "gte": _strict(lambda a, b: a >= b),
    "add": _strict(lambda a, b: a + b),
    "sub": _strict(lambda a, b: a - b),
    "mul": _strict(lambda a, b: a * b),
    "div": _strict(_div),
    "mod": _strict(_mod),
    "neg": _strict(lambda a: -a),
    "record": lambda *ts: tuple(t() for t in ts),
    "coalesce": lambda *ts: next((v for v in (t() for t in ts) if v is not None), None),
}


def fallback_compile(expr) -> Callable[..., Any]:
    """A slow tree-walking 'compiler' over ``FALLBACK_FUNCTIONS`` (same calling convention
    as ``expr.compile.compile_scalar``: ``f(row, time=None)``)."""
    def ev(e, row, time):
        if isinstance(e, Column):
            return row[e.index]
        if isinstance(e, Literal):
            return e.value
        if isinstance(e, CallMzNow):
            return time
        if isinstance(e, If):
            return ev(e.then, row, time) if ev(e.cond, row, time) is True else ev(e.els, row, time)
        if isinstance(e, Call):
            f = FALLBACK_FUNCTIONS.get(e.func)
            if f is None:
                raise EvalError("XX000", f"reference fallback: unknown function {e.func}")
            return f(*[functools.partial(ev, a, row, time) for a in e.args])
        raise TypeError(f"not a scalar expression: {e!r}")

    def run(row, time=None):
        return ev(expr, row, time)
    return run


def evaluate_constant(expr):
    """The value of a scalar expression that reads no column (raises ``EvalError``)."""
    return default_compiler()(expr)(())


def default_compiler() -> Callable:
    """``expr.compile.compile_scalar`` when it exists, else ``fallback_compile``."""
    try:
        from expr.compile import compile_scalar  # type: ignore
        return compile_scalar
    except Exception:  # noqa: BLE001 - the module may not exist yet
        return fallback_compile


# ------------------------------------------------------------------ helpers


def consolidate(pairs) -> Collection:
    out: dict = {}
    for row, c in pairs:
        out[row] = out.get(row, 0) + c
    return {r: c for r, c in out.items() if c != 0}


def _cmp_values(a, b, nulls_last: bool = True) -> int:
    """Compare two SQL values; NULL is greater than every value when ``nulls_last``."""
    if a is None or b is None:
        if a is None and b is None:
            return 0
        return (1 if a is None else -1) * (1 if nulls_last else -1)
    if a < b:
        return -1
    if b < a:
        return 1
    return 0


def cmp_rows(a: tuple, b: tuple) -> int:
    """Total order on rows: column by column, NULLs last (PostgreSQL's default)."""
    for x, y in zip(a, b):
        c = _cmp_values(x, y)
        if c:
            return c
    return (len(a) > len(b)) - (len(a) < len(b))


def cmp_by_order(order: tuple[ColumnOrder, ...]) -> Callable[[tuple, tuple], int]:
    """Comparator for ``order`` (DESC flips values; ``nulls_last`` places NULLs in the
    *output* order), ties broken by the whole row."""
    def cmp(a, b):
        for o in order:
            x, y = a[o.column], b[o.column]
            if x is None or y is None:
                c = _cmp_values(x, y, o.nulls_last)
            else:
                c = _cmp_values(x, y)
                if o.desc:
                    c = -c
            if c:
                return c
        return cmp_rows(a, b)
    return cmp


def sort_rows(rows, order: tuple[ColumnOrder, ...] = ()) -> list:
    return sorted(rows, key=functools.cmp_to_key(cmp_by_order(order)))


# ------------------------------------------------------------------ aggregates


def _as_decimal(v):
    return v if isinstance(v, Decimal) else Decimal(str(v)) if isinstance(v, float) else Decimal(v)


def _finishers():
    """``expr.functions``' aggregate finishers (PostgreSQL's result types and numeric
    scales) when that module exists, so the oracle agrees with compute on value
    representation; the relational semantics here stay independent."""
    try:
        from expr.functions import aggregates as F  # type: ignore
        from repr.numeric import NUMERIC_CONTEXT
        return F.sum_finish, F.avg_finish, F.variance_finish, NUMERIC_CONTEXT
    except Exception:  # noqa: BLE001
        return None


def _exact_sum(vals):
    """Sum without rounding (Decimals summed in a wide context)."""
    if any(isinstance(v, Decimal) for v in vals):
        with decimal.localcontext() as ctx:
            ctx.prec = 1000
            return sum((_as_decimal(v) for v in vals), Decimal(0))
    return sum(vals)


def _agg_sum(vals, out_type):
    if not vals:
        return None
    if out_type == "float8":
        return float(sum(float(v) for v in vals))
    total = _exact_sum(vals)
    fin = _finishers()
    if fin is not None:
        return fin[0](total, out_type)
    return _as_decimal(total) if out_type == "numeric" else total


def _agg_avg(vals, out_type):
    if not vals:
        return None
    fin = _finishers()
    if out_type == "float8":
        total = sum(float(v) for v in vals)
    else:
        total = _exact_sum(vals)
    if fin is not None:
        return fin[1](total, len(vals), out_type)
    if out_type == "float8":
        return total / len(vals)
    return _as_decimal(total) / Decimal(len(vals))


def _agg_var(vals, out_type, func: str):
    sample = func.endswith("samp") or func in ("variance", "stddev")
    n = len(vals)
    if n == 0 or (sample and n < 2):
        return None
    fin = _finishers()
    if fin is not None:
        if out_type == "float8":
            xs = [float(v) for v in vals]
            return fin[2](n, sum(xs), sum(x * x for x in xs), func, out_type)
        xs = [_as_decimal(v) for v in vals]
        return fin[2](n, _exact_sum(xs), _exact_sum([x * x for x in xs]), func, out_type)
    sqrt = func.startswith("stddev")
    if out_type == "float8":
        xs = [float(v) for v in vals]
        mean = sum(xs) / n
        var = sum((x - mean) ** 2 for x in xs) / (n - 1 if sample else n)
        return math.sqrt(var) if sqrt else var
    xs = [_as_decimal(v) for v in vals]
    mean = sum(xs, Decimal(0)) / n
    var = sum(((x - mean) ** 2 for x in xs), Decimal(0)) / (n - 1 if sample else n)
    return var.sqrt() if sqrt else var


def _agg_bool(vals, is_and):
    if not vals:
        return None
    return all(vals) if is_and else any(vals)


def apply_aggregate(func: str, values: list, distinct: bool, out_type: str):
    """Aggregate ``values`` (one entry per unit of multiplicity; may contain NULLs)."""
    if func in ("array_agg", "jsonb_agg"):
        vals = list(values)
        if distinct:
            vals = list(dict.fromkeys(vals))
        if not vals:
            return None
        from expr.functions.aggregates import collect_finish  # Array / Jsonb values
        return collect_finish(func, [r[0] for r in sort_rows([(v,) for v in vals])])
    if func == "string_agg":
        vals = [v for v in values if v is not None and v[0] is not None]
        if distinct:
            vals = list(dict.fromkeys(vals))
        if not vals:
            return None
        vals = sort_rows(vals)
        out = vals[0][0]
        for v, d in vals[1:]:
            out += (d or "") + v
        return out
    vals = [v for v in values if v is not None]
    if distinct:
        vals = list(dict.fromkeys(vals))
    if func == "count":
        return len(vals)
    if func == "sum":
        return _agg_sum(vals, out_type)
    if func in ("min", "max"):
        # NaN sorts above every number (PostgreSQL); Python's min/max would depend on order
        nans = [v for v in vals if v != v or (hasattr(v, "is_nan") and v.is_nan())]
        nums = [v for v in vals if not (v != v or (hasattr(v, "is_nan") and v.is_nan()))]
        if func == "max" and nans:
            return nans[0]
        if nums:
            return min(nums) if func == "min" else max(nums)
        return nans[0] if nans else None
    if func == "avg":
        return _agg_avg(vals, out_type)
    if func in ("bool_and", "bool_or"):
        return _agg_bool(vals, func == "bool_and")
    if func in ("var_samp", "var_pop", "stddev_samp", "stddev_pop", "variance", "stddev"):
        return _agg_var(vals, out_type, func)
    raise EvalError("XX000", f"reference: unknown aggregate {func}")


def apply_ordered_aggregate(a, values: list):
    """An ordered-form aggregate (``AggregateExpr.is_ordered_form``) from scratch: NULL
    records skipped, DISTINCT over the records, then compute's deterministic ordering."""
    from expr.functions.aggregates import ordered_aggregate
    recs = [v for v in values if v is not None]
    if a.distinct:
        recs = list(dict.fromkeys(recs))
    counts: dict = {}
    for r in recs:
        counts[r] = counts.get(r, 0) + 1
    return ordered_aggregate(a.func, list(counts.items()), a.order_by)


# ------------------------------------------------------------------ table functions


def _generate_series(*args):
    if any(a is None for a in args):
        return []
    start, stop = args[0], args[1]
    step = args[2] if len(args) > 2 else 1
    if step == 0:
        raise EvalError("22023", "step size cannot equal zero")
    out = []
    v = start
    while (v <= stop) if step > 0 else (v >= stop):
        out.append((v,))
        v += step
    return out


def _unnest(arr):
    if arr is None:
        return []
    return [(v,) for v in arr]


TABLE_FUNCTIONS: dict[str, Callable[..., list]] = {
    "generate_series": _generate_series,
    "unnest": _unnest,
    "unnest_array": _unnest,
    "unnest_window": lambda lst: list(lst) if lst is not None else [],  # window functions
    "unnest_zip": lambda *arrays: _unnest_zip(arrays),  # unnest(a, b, ...) in FROM
}


def _unnest_zip(arrays) -> list:
    """Written out again (not ``repr.arrays.unnest_zip``): zip, padding with NULL."""
    out = []
    i = 0
    while any(a is not None and i < len(a) for a in arrays):
        out.append(tuple(a[i] if a is not None and i < len(a) else None for a in arrays))
        i += 1
    return out


# ------------------------------------------------------------------ evaluation


def _datum_equal(vals) -> bool:
    """All values equal as datums: NULL equals NULL (a Join equivalence's meaning)."""
    first = vals[0]
    return all((v is None and first is None) or (v is not None and first is not None and v == first)
               for v in vals[1:])


class _Evaluator:
    def __init__(self, inputs, time, compile_scalar):
        self.inputs = inputs
        self.time = time
        self.compile = compile_scalar
        self.errs: dict = {}

    def err(self, e: EvalError, count: int) -> None:
        row = (e.sqlstate, e.message)
        self.errs[row] = self.errs.get(row, 0) + count

    def scalar(self, expr):
        f = self.compile(expr)
        t = self.time
        if t is None:
            return f
        return lambda row: f(row, time=t)

    def eval(self, expr, env) -> Collection:
        m = getattr(self, "_" + type(expr).__name__)
        return m(expr, env)

    def _Constant(self, e: Constant, env):
        if e.error is not None:
            self.err(EvalError(*e.error), 1)
            return {}
        return consolidate(e.rows)

    def _Get(self, e: Get, env):
        if e.id in env:
            oks, errs = env[e.id]
            for r, c in errs.items():
                self.errs[r] = self.errs.get(r, 0) + c
            return dict(oks)
        if e.id not in self.inputs:
            raise KeyError(f"reference.evaluate: no input given for {e.id}")
        return consolidate(self.inputs[e.id].items())

    def _Let(self, e: Let, env):
        saved = self.errs
        self.errs = {}
        value = self.eval(e.value, env)
        value_errs = self.errs
        self.errs = saved
        return self.eval(e.body, {**env, e.id: (value, value_errs)})

    def _Map(self, e: Map, env):
        fs = [self.scalar(s) for s in e.scalars]
        out = []
        for row, c in self.eval(e.input, env).items():
            try:
                for f in fs:
                    row = row + (f(row),)
            except EvalError as ex:
                self.err(ex, c)
                continue
            out.append((row, c))
        return consolidate(out)

    def _Filter(self, e: Filter, env):
        fs = [self.scalar(p) for p in e.predicates]
        out = {}
        for row, c in self.eval(e.input, env).items():
            try:
                if all(f(row) is True for f in fs):
                    out[row] = c
            except EvalError as ex:
                self.err(ex, c)
        return out

    def _Project(self, e: Project, env):
        return consolidate((tuple(row[i] for i in e.outputs), c)
                           for row, c in self.eval(e.input, env).items())

    def _FlatMap(self, e: FlatMap, env):
        func = e.func
        numbered = func.endswith(ORDINALITY)  # WITH ORDINALITY: a 1-based row number last
        if numbered:
            func = func[:-len(ORDINALITY)]
        tf = TABLE_FUNCTIONS.get(func)
        if tf is None:  # jsonb table functions
            from expr.functions import TABLE_FUNCTIONS as JSONB_TABLE_FUNCTIONS
            tf = JSONB_TABLE_FUNCTIONS.get(func, (None,))[0]
        fs = [self.scalar(x) for x in e.exprs]
        out = []
        for row, c in self.eval(e.input, env).items():
            try:
                if tf is None:
                    raise EvalError("XX000", f"reference: unknown table function {e.func}")
                n = 0
                for extra in tf(*[f(row) for f in fs]):
                    n += 1
                    out.append((row + tuple(extra) + ((n,) if numbered else ()), c))
            except EvalError as ex:
                self.err(ex, c)
        return consolidate(out)

    def _Join(self, e: Join, env):
        # Nested loops over the inputs in order; after each input, the members of each
        # equivalence class whose columns are all present must already agree (pruning
        # early is sound: the final rows need every member equal).
        classes = [[(max(columns_referenced(x), default=-1), self.scalar(x)) for x in cls]
                   for cls in e.equivalences]
        rows = [((), 1)]
        width = 0
        for inp in e.inputs:
            coll = self.eval(inp, env)
            lo, width = width, width + inp.arity()
            # a class is checked once one of its members becomes evaluable with this input
            # (and at least two are); errors count against the prefix row
            checks = []
            for cls in classes:
                ready = [f for (m, f) in cls if m < width]
                if len(ready) >= 2 and any(lo <= m < width or m < 0 and lo == 0 for (m, _) in cls):
                    checks.append(ready)
            nxt = []
            for r, c in rows:
                for r2, c2 in coll.items():
                    row = r + r2
                    try:
                        if all(_datum_equal([f(row) for f in fs]) for fs in checks):
                            nxt.append((row, c * c2))
                    except EvalError as ex:
                        self.err(ex, c * c2)
            rows = nxt
        if not e.inputs:
            # the empty join is the unit collection; constant classes still apply
            try:
                if not all(_datum_equal([f(()) for _, f in cls]) for cls in classes):
                    rows = []
            except EvalError as ex:
                self.err(ex, 1)
                rows = []
        return consolidate(rows)

    def _Reduce(self, e: Reduce, env):
        keyfs = [self.scalar(k) for k in e.group_key]
        aggfs = [self.scalar(a.expr) for a in e.aggregates]
        groups: dict = {}
        for row, c in self.eval(e.input, env).items():
            try:
                key = tuple(f(row) for f in keyfs)
                vals = tuple(f(row) for f in aggfs)
            except EvalError as ex:
                self.err(ex, c)
                continue
            groups.setdefault(key, []).append((vals, c))
        out = []
        for key, members in groups.items():
            total = sum(c for _, c in members)
            if any(c < 0 for _, c in members):
                self.err(EvalError("XX000", "Non-positive multiplicity in Reduce"), 1)
                continue
            if total == 0:
                continue
            aggs = []
            for i, a in enumerate(e.aggregates):
                values = [v[i] for v, c in members for _ in range(c)]
                try:
                    if a.func == "window":  # window functions: tests.support.window_reference
                        from tests.support.window_reference import reference_window
                        aggs.append(reference_window(a, values))
                    else:
                        aggs.append(apply_ordered_aggregate(a, values) if a.is_ordered_form()
                                    else apply_aggregate(a.func, values, a.distinct, a.output_type))
                except EvalError as ex:
                    self.err(ex, 1)
                    break
            else:
                out.append((key + tuple(aggs), 1))
        if not groups and e.global_default and not e.group_key:
            out.append((tuple(0 if a.func == "count" else None for a in e.aggregates), 1))
        return consolidate(out)

    def _TopK(self, e: TopK, env):
        groups: dict = {}
        for row, c in self.eval(e.input, env).items():
            if c < 0:
                self.err(EvalError("XX000", "Negative multiplicity in TopK"), 1)
                continue
            groups.setdefault(tuple(row[i] for i in e.group_key), []).extend([row] * c)
        out = []
        for rows in groups.values():
            ranked = sort_rows(rows, e.order_key)
            end = None if e.limit is None else e.offset + e.limit
            out.extend((r, 1) for r in ranked[e.offset:end])
        return consolidate(out)

    def _Negate(self, e: Negate, env):
        return {r: -c for r, c in self.eval(e.input, env).items()}

    def _Threshold(self, e: Threshold, env):
        return {r: c for r, c in self.eval(e.input, env).items() if c > 0}

    def _Union(self, e: Union, env):
        out = []
        for inp in e.inputs:
            out.extend(self.eval(inp, env).items())
        return consolidate(out)

    def _ArrangeBy(self, e: ArrangeBy, env):
        return self.eval(e.input, env)

    # ---- LetRec: iterated to a fixpoint by expr.iterate (the one definition)
    def _LetRec(self, e, env):
        from expr.iterate import letrec_value
        return letrec_value(self, e, env)


def evaluate_with_errors(expr, inputs: Mapping, time: Optional[int] = None, *,
                         compile_scalar: Optional[Callable] = None) -> tuple[Collection, Collection]:
    """Evaluate ``expr`` over ``inputs`` (``GlobalId``/``LocalId`` -> ``dict[row, count]``).

    Returns ``(oks, errs)``: both consolidated with zero counts removed; ``errs`` maps
    ``(sqlstate, message)`` to a count.  ``time`` is what ``mz_now()`` reads.
    ``compile_scalar`` overrides the scalar compiler (default: ``expr.compile``'s,
    else ``fallback_compile``)."""
    ev = _Evaluator(inputs, time, compile_scalar or default_compiler())
    oks = ev.eval(expr, {})
    return oks, {r: c for r, c in ev.errs.items() if c != 0}


def evaluate(expr, inputs: Mapping, time: Optional[int] = None, *,
             compile_scalar: Optional[Callable] = None) -> Collection:
    """Evaluate ``expr``; raise the least ``EvalError`` (by ``(sqlstate, message)``) if the
    evaluation produced any data error, else return the consolidated rows."""
    oks, errs = evaluate_with_errors(expr, inputs, time, compile_scalar=compile_scalar)
    if errs:
        raise EvalError(*min(errs))
    return oks


def apply_finishing(rows: Mapping, finishing) -> list[tuple]:
    """Apply a ``RowSetFinishing`` to a collection (positive counts): ORDER BY, OFFSET,
    LIMIT, then the projection; returns the rows as a list with repetitions."""
    expanded = [r for r, c in rows.items() for _ in range(c)]
    expanded = sort_rows(expanded, tuple(finishing.order_by))
    end = None if finishing.limit is None else finishing.offset + finishing.limit
    expanded = expanded[finishing.offset:end]
    if finishing.project is not None:
        expanded = [tuple(r[i] for i in finishing.project) for r in expanded]
    return expanded
