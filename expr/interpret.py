"""The interpreter: a relation expression evaluated whole, over constant collections.

Owns ``Interpreter`` and ``evaluate``: a ``RelationExpr`` evaluated from its inputs (id ->
consolidated ``dict[row, count]``) to a consolidated collection plus its data errors, with
the semantics of the maintained operators: Map, Filter and Project run as compiled
MapFilterProjects (``expr.compile``), Reduce keys and aggregate inputs too; joins hash on
their equivalences; aggregates and window functions are ``expr.aggregate``'s kinds (the
ones ``compute.render.reduce`` maintains), TopK ranks in ``expr.order``'s order, FlatMap
applies ``expr.table_functions`` and LetRec iterates by ``expr.iterate``.  Used where a
plan is evaluated at once instead of maintained: constant folding
(``planner.optimize.fold``) and the LetRec operator's re-derivations
(``compute.render.letrec``).

Invariants: a node's result is consolidated (no zero counts) and is never mutated once
returned (a ``Get`` hands out its input as it is, so every caller only reads); a data error
(``EvalError``) never escapes ``eval``: it is counted in ``errs`` as the error row
``(sqlstate, message)`` with the multiplicity the maintained operator would give it (the
failing row's count; one per group for an aggregate's error; the Reduce and TopK
negative-multiplicity errors).  Each node is prepared once (scalars compiled, aggregates
and table function resolved) the first time it is evaluated, in ``prepared``, which
interpreters over the same plan may share, so a re-derivation compiles nothing.
Deliberately not here: incrementality (``compute.render``), and the oracle tests compare
this against (``tests.support.reference``: independent, nested loops, obviously correct).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Callable, Mapping, Optional

from expr.aggregate import default_row, group_output, make_aggregates, new_state
from expr.compile import compile_mfp_pairs, compile_scalar
from expr.iterate import letrec_value
from expr.mfp import MapFilterProject
from expr.order import TOPK_NEG_MULT, sort_key_function
from expr.relation import (ArrangeBy, Constant, Filter, FlatMap, Get, Join, Let, LetRec, Map, Negate, Project,
                           Reduce, Threshold, TopK, Union)
from expr.scalar import Call, columns_referenced, permute
from expr.table_functions import resolve_table_function
from repr.errors import EvalError

__all__ = ["Interpreter", "evaluate", "consolidate"]

#: what a prepared node runs: ``run(interpreter, env) -> collection``
Run = Callable[["Interpreter", dict], dict]


def consolidate(pairs) -> dict:
    """``(row, count)`` pairs summed per row, zero counts dropped."""
    acc: dict = {}
    get = acc.get
    for row, c in pairs:
        acc[row] = get(row, 0) + c
    return {r: c for r, c in acc.items() if c}


class Interpreter:
    """Evaluates nodes over ``inputs`` (``GlobalId``/outer ``LocalId`` -> rows) at ``time``
    (what ``mz_now()`` reads); data errors accumulate in ``errs``.  Also the evaluator
    ``expr.iterate.letrec_steps`` drives (``eval``, ``errs``, ``err``)."""

    def __init__(self, inputs: Mapping, time=None, prepared: Optional[dict] = None):
        self.inputs = inputs
        self.time = time
        #: ``(sqlstate, message) -> count``
        self.errs: dict = {}
        #: ``id(node) -> (node, run)``; the node is kept so that its id stays its own
        self.prepared: dict = {} if prepared is None else prepared
        #: the last LetRec's bindings at its fixpoint, ``id -> (rows, errs)`` (set by
        #: ``expr.iterate.letrec_steps``; ``compute.render.letrec`` continues from them)
        self.letrec_values: Optional[dict] = None

    def eval(self, expr, env: dict) -> dict:
        """``expr``'s rows; ``env`` maps a bound ``LocalId`` to ``(rows, errs)``."""
        hit = self.prepared.get(id(expr))
        if hit is None or hit[0] is not expr:
            hit = self.prepared[id(expr)] = (expr, _PREPARE[type(expr)](expr))
        return hit[1](self, env)

    def add_error(self, row: tuple, count: int) -> None:
        errs = self.errs
        errs[row] = errs.get(row, 0) + count

    def err(self, e: EvalError, count: int) -> None:
        self.add_error((e.sqlstate, e.message), count)

    def add_failed(self, failed) -> None:
        """Count ``(EvalError, count)`` pairs (a compiled MFP's failures)."""
        for e, c in failed:
            self.add_error((e.sqlstate, e.message), c)


def evaluate(expr, inputs: Optional[Mapping] = None, time=None) -> tuple[dict, dict]:
    """``(rows, errors)`` of ``expr`` over ``inputs``: both consolidated, errors as
    ``(sqlstate, message) -> count``; ``rows`` is read-only (it may be an input)."""
    ev = Interpreter({} if inputs is None else inputs, time)
    oks = ev.eval(expr, {})
    return oks, {r: c for r, c in ev.errs.items() if c}


# ------------------------------------------------------------------ leaves and bindings


def _constant(e: Constant) -> Run:
    if e.error is not None:
        error = tuple(e.error)

        def fail(ev, env):
            ev.add_error(error, 1)
            return {}
        return fail
    rows = consolidate(e.rows)
    return lambda ev, env: rows


def _get(e: Get) -> Run:
    gid = e.id

    def run(ev, env):
        bound = env.get(gid)
        if bound is None:
            return ev.inputs[gid]
        oks, errs = bound
        for row, c in errs.items():  # a binding's errors reach every reader
            ev.add_error(row, c)
        return oks
    return run


def _let(e: Let) -> Run:
    lid, value, body = e.id, e.value, e.body

    def run(ev, env):
        outer, ev.errs = ev.errs, {}
        bound = (ev.eval(value, env), ev.errs)
        ev.errs = outer
        return ev.eval(body, {**env, lid: bound})
    return run


def _let_rec(e: LetRec) -> Run:
    return lambda ev, env: letrec_value(ev, e, env)


# ------------------------------------------------------------------ per-row nodes


def _through_mfp(inp, mfp: MapFilterProject, merge: Callable[[list], dict]) -> Run:
    """A node that is one compiled MFP over ``inp``; ``merge`` turns its output pairs
    into a collection (``dict`` when rows stay distinct, ``consolidate`` otherwise)."""
    f = compile_mfp_pairs(mfp)

    def run(ev, env):
        out, failed = f(ev.eval(inp, env).items(), ev.time)
        if failed:
            ev.add_failed(failed)
        return merge(out)
    return run


def _map(e: Map) -> Run:  # appending columns keeps rows distinct
    return _through_mfp(e.input, MapFilterProject(e.input.arity(), tuple(e.scalars)), dict)


def _filter(e: Filter) -> Run:
    return _through_mfp(e.input, MapFilterProject(e.input.arity(), (), tuple(e.predicates)), dict)


def _project(e: Project) -> Run:
    return _through_mfp(e.input, MapFilterProject(e.input.arity(), (), (), tuple(e.outputs)), consolidate)


def _values(exprs) -> Optional[Callable]:
    """``f(row, time) -> tuple`` of the expressions' values, compiled once (None: none)."""
    return compile_scalar(Call("record", tuple(exprs), "record")) if exprs else None


def _flat_map(e: FlatMap) -> Run:
    func = resolve_table_function(e.func)
    if func is None:
        raise AssertionError(f"interpret: unknown table function {e.func!r}")
    args = _values(e.exprs)
    inp = e.input

    def run(ev, env):
        t = ev.time
        out: dict = {}
        get = out.get
        for row, c in ev.eval(inp, env).items():
            try:
                extra = func(*args(row, t)) if args is not None else func()
            except EvalError as x:
                ev.err(x, c)
                continue
            for tail in extra:
                r = row + tuple(tail)
                out[r] = get(r, 0) + c  # rows of one input row: never cancel
        return out
    return run


# ------------------------------------------------------------------ joins


def _join(e: Join) -> Run:
    """Left to right: each input is hashed on the members of the equivalence classes that
    pair it with the inputs before it; classes that become checkable with an input and are
    not implied by that key are tested on the input's own rows (when they read only it) or
    on the joined rows."""
    classes = [[(columns_referenced(x), x) for x in cls] for cls in e.equivalences]
    stages = []
    lo = 0
    for inp in e.inputs:
        hi = lo + inp.arity()
        local = {c: c - lo for c in range(lo, hi)}
        prefix_key, own_key, own_checks, joined_checks = [], [], [], []
        for cls in classes:
            before = [x for cols, x in cls if cols and max(cols) < lo]
            own = [x for cols, x in cls if cols and min(cols) >= lo and max(cols) < hi]
            if before and own:
                prefix_key.append(before[0])
                own_key.append(permute(own[0], local))
            ready = [(cols, x) for cols, x in cls if max(cols, default=-1) < hi]
            arrives = any(lo <= max(cols, default=-1) < hi or (not cols and lo == 0) for cols, _ in cls)
            if len(ready) < 2 or not arrives or (before and own and len(ready) == 2):
                continue
            if all(not cols or min(cols) >= lo for cols, _ in ready):
                own_checks.append(tuple(permute(x, local) for _, x in ready))
            else:
                joined_checks.append(tuple(x for _, x in ready))
        stages.append((inp, _values(prefix_key), _values(own_key), _equal_classes(own_checks),
                       _equal_classes(joined_checks)))
        lo = hi
    if not e.inputs:
        unit = _equal_classes([tuple(cls) for cls in e.equivalences])

    def run(ev, env):
        t = ev.time
        if not stages:  # the empty join: the unit collection, if its constant classes hold
            try:
                return {(): 1} if unit is None or unit((), t) else {}
            except EvalError as x:
                ev.err(x, 1)
                return {}
        rows = {(): 1}
        for inp, pkey, okey, own_check, check in stages:
            index: dict = {}
            for r2, c2 in ev.eval(inp, env).items():
                try:
                    if own_check is not None and not own_check(r2, t):
                        continue
                    k = okey(r2, t) if okey is not None else ()
                except EvalError as x:
                    ev.err(x, c2)
                    continue
                bucket = index.get(k)
                if bucket is None:
                    index[k] = [(r2, c2)]
                else:
                    bucket.append((r2, c2))
            joined = {}
            for r, c in rows.items():
                try:
                    k = pkey(r, t) if pkey is not None else ()
                except EvalError as x:
                    ev.err(x, c)
                    continue
                for r2, c2 in index.get(k, ()):
                    row = r + r2
                    if check is not None:
                        try:
                            if not check(row, t):
                                continue
                        except EvalError as x:
                            ev.err(x, c * c2)
                            continue
                    joined[row] = c * c2  # (r, r2) pairs are distinct, so are their rows
            rows = joined
        return rows
    return run


def _equal_classes(classes) -> Optional[Callable]:
    """``f(row, time) -> bool``: every class's members are equal as datums (NULL equals
    NULL), or None when there is no class to test."""
    if not classes:
        return None
    sizes = [len(cls) for cls in classes]
    values = _values([x for cls in classes for x in cls])

    def check(row, t):
        vals = values(row, t)
        i = 0
        for n in sizes:
            first = vals[i]
            for v in vals[i + 1:i + n]:
                if v is None or first is None:
                    if v is not first:
                        return False
                elif v != first:
                    return False
            i += n
        return True
    return check


# ------------------------------------------------------------------ grouping and ranking


def _reduce(e: Reduce) -> Run:
    """The maintained Reduce's semantics, for a whole collection at once: group states of
    ``expr.aggregate``, each updated in one batch per aggregate, then finished."""
    n = e.input.arity()
    nk = len(e.group_key)
    exprs = tuple(e.group_key) + tuple(a.expr for a in e.aggregates)
    f = compile_mfp_pairs(MapFilterProject(n, exprs, (), tuple(range(n, n + len(exprs)))))
    kinds, _width = make_aggregates(e.aggregates)
    global_default = e.global_default and not e.group_key
    inp = e.input

    def run(ev, env):
        pairs, failed = f(ev.eval(inp, env).items(), ev.time)
        if failed:
            ev.add_failed(failed)
        groups: dict = {}
        states = []
        for kv, d in pairs:
            key = kv[:nk]
            G = groups.get(key)
            if G is None:
                G = groups[key] = new_state(kinds)
            G[0] += d
            states.append(G)
        diffs = [d for _, d in pairs]
        for j, kind in enumerate(kinds, nk):
            kind.update(states, [kv[j] for kv, _ in pairs], diffs)
        out = {}
        for key, G in groups.items():
            res = group_output(kinds, key, G)
            if res is None:
                continue
            if res[0]:
                ev.add_error(res[1], 1)
            else:
                out[res[1]] = 1
        if global_default and (() not in groups or groups[()][0] == 0):
            out[default_row(kinds)] = 1
        return out
    return run


def _top_k(e: TopK) -> Run:
    """Per group, the rows ranked ``offset <= rank < offset + limit`` counting
    multiplicities; a row of negative multiplicity is left out and counted as the TopK
    operator's error."""
    group_of = itemgetter(*e.group_key) if e.group_key else (lambda row: ())
    key = sort_key_function(e.order_key)
    start = e.offset
    end = None if e.limit is None else e.offset + e.limit
    inp = e.input

    def run(ev, env):
        coll = ev.eval(inp, env)
        groups: dict = {}
        negative = 0
        for row, c in coll.items():
            if c < 0:
                negative += 1
                continue
            groups.setdefault(group_of(row), []).append(row)
        if negative:
            ev.add_error(TOPK_NEG_MULT, negative)
        out = {}
        for rows in groups.values():
            rows.sort(key=key)
            rank = 0  # rows ranked before this one
            for row in rows:
                if end is not None and rank >= end:
                    break
                c = coll[row]
                kept = (rank + c if end is None else min(rank + c, end)) - max(rank, start)
                if kept > 0:
                    out[row] = kept
                rank += c
        return out
    return run


# ------------------------------------------------------------------ multiplicities


def _negate(e: Negate) -> Run:
    inp = e.input
    return lambda ev, env: {r: -c for r, c in ev.eval(inp, env).items()}


def _threshold(e: Threshold) -> Run:
    inp = e.input
    return lambda ev, env: {r: c for r, c in ev.eval(inp, env).items() if c > 0}


def _union(e: Union) -> Run:
    inputs = e.inputs

    def run(ev, env):
        out: dict = {}
        get = out.get
        for inp in inputs:
            for r, c in ev.eval(inp, env).items():
                out[r] = get(r, 0) + c
        return {r: c for r, c in out.items() if c}
    return run


def _arrange_by(e: ArrangeBy) -> Run:  # a rendering hint: the identity here
    inp = e.input
    return lambda ev, env: ev.eval(inp, env)


#: node type -> its preparation (one table, assembled here)
_PREPARE: dict[type, Callable] = {
    Constant: _constant, Get: _get, Let: _let, LetRec: _let_rec, Map: _map, Filter: _filter,
    Project: _project, FlatMap: _flat_map, Join: _join, Reduce: _reduce, TopK: _top_k,
    Negate: _negate, Threshold: _threshold, Union: _union, ArrangeBy: _arrange_by,
}
