"""Peek planning (planner/peek.py): constant, fast path (full scan or key lookup), slow path.

Sabotages tried (each turned a named test red, then was restored):
- lookups accepting a partially pinned key -> test_partial_key_is_a_full_scan
- evaluating every MFP expression before the predicates (lazy_mfp made eager) -> test_map_above_filter_needs_no_guard
- ignoring OR-lists (IN) -> test_in_list_lookup
- fast path without checking for an index -> test_no_index_is_slow_path
- literal predicates kept out of the MFP without a lookup -> test_fast_path_matches_reference_on_random_chains
"""
import random

import pytest

from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from expr.relation import Constant, Filter, Get, Join, Map, Project
from expr.scalar import Call, Column, Literal, columns_referenced
from planner.peek import AvailableIndex, ConstantPeek, FastPathPeek, SlowPathPeek, mfp_over_get, plan_peek
from repr.errors import EvalError
from repr.ids import user
from tests.support import reference


@pytest.fixture(autouse=True)
def _fallback(monkeypatch):
    monkeypatch.setattr(reference, "default_compiler", lambda: reference.fallback_compile)


V = user(5)      # an indexed view
IX = user(6)     # index on V by #0
IX2 = user(7)    # index on V by (#0, #1)
T = user(9)      # unindexed table
v = Get(V, 3)
INDEXES = {V: [AvailableIndex(IX, (Column(0),), 3)]}
FIN = RowSetFinishing()


def c(i):
    return Column(i)


def lit(x, ty="int4"):
    return Literal(x, ty)


def eq(a, b):
    return Call("eq", (a, b), "bool")


def test_constant_is_answered_directly():
    p = plan_peek(Project(Constant((((1, 2), 1),), 2), (1,)), FIN, INDEXES)
    assert isinstance(p, ConstantPeek) and p.rows == (((2,), 1),)


def test_point_lookup_on_indexed_view():
    p = plan_peek(Project(Filter(v, (eq(c(0), lit(7)),)), (1,)), FIN, INDEXES)
    assert isinstance(p, FastPathPeek)
    assert (p.index_id, p.on_id, p.literal_constraints) == (IX, V, ((7,),))
    assert p.mfp == MapFilterProject(3, (), (), (1,))


def test_in_list_lookup():
    pred = Call("or", (eq(c(0), lit(1)), eq(lit(2), c(0))), "bool")
    p = plan_peek(Filter(v, (pred,)), FIN, INDEXES)
    assert p.literal_constraints == ((1,), (2,)) and p.mfp.predicates == ()


def test_multi_column_key_prefers_full_pin():
    idx = {V: [AvailableIndex(IX, (c(0),), 3), AvailableIndex(IX2, (c(0), c(1)), 3)]}
    p = plan_peek(Filter(v, (eq(c(1), lit("x", "text")), eq(c(0), lit(1)))), FIN, idx)
    assert p.index_id == IX2 and p.literal_constraints == ((1, "x"),)


def test_partial_key_is_a_full_scan():
    idx = {V: [AvailableIndex(IX2, (c(0), c(1)), 3)]}
    p = plan_peek(Filter(v, (eq(c(0), lit(1)),)), FIN, idx)
    assert isinstance(p, FastPathPeek) and p.literal_constraints is None
    assert p.mfp.predicates == (eq(c(0), lit(1)),)


def test_full_scan_of_index():
    p = plan_peek(v, FIN, INDEXES)
    assert isinstance(p, FastPathPeek) and p.literal_constraints is None and p.mfp.is_identity()


def test_null_literal_is_never_a_lookup():
    p = plan_peek(Filter(v, (eq(c(0), lit(None)),)), FIN, INDEXES, optimized=True)
    assert p.literal_constraints is None


def test_no_index_is_slow_path():
    p = plan_peek(Filter(Get(T, 2), (eq(c(0), lit(1)),)), FIN, INDEXES)
    assert isinstance(p, SlowPathPeek)


def test_join_is_slow_path_even_when_indexed():
    p = plan_peek(Join((v, v), ((c(0), c(3)),)), FIN, INDEXES)
    assert isinstance(p, SlowPathPeek)


def test_tuple_form_of_indexes_is_accepted():
    p = plan_peek(v, FIN, {V: [(IX, (c(0),), 3)]})
    assert p.index_id == IX


def lazy_mfp(mfp: MapFilterProject, rows: dict):
    """expr.mfp's documented evaluation order, written out plainly: before computing
    expression k, every predicate reading only columns < input_arity + k must hold."""
    n = mfp.input_arity
    out = {}

    def support(p):
        return max(columns_referenced(p), default=-1)

    for row, cnt in rows.items():
        r, ok = row, True
        for k in range(len(mfp.expressions) + 1):
            if not all(reference.fallback_compile(p)(r) is True
                       for p in mfp.predicates if n + k - 1 <= support(p) < n + k or
                       (k == 0 and support(p) < n)):
                ok = False
                break
            if k < len(mfp.expressions):
                r = r + (reference.fallback_compile(mfp.expressions[k])(r),)
        if ok:
            key = tuple(r[i] for i in mfp.output_projection())
            out[key] = out.get(key, 0) + cnt
    return {k: v for k, v in out.items() if v}


def run_fast_path(p: FastPathPeek, data):
    rows = data[p.on_id]
    if p.literal_constraints is not None:
        keyf = [reference.fallback_compile(k) for k in p.key]
        wanted = set(p.literal_constraints)
        rows = {r: n for r, n in rows.items() if tuple(f(r) for f in keyf) in wanted}
    return lazy_mfp(p.mfp, rows)


def test_map_above_filter_needs_no_guard():
    """A Filter below a Map stays a predicate that runs before the Map's expression (by
    expr.mfp's evaluation order), so the filtered-out row never divides by zero."""
    plan = Map(Filter(v, (Call("neq", (c(0), lit(0)), "bool"),)),
               (Call("div", (lit(10), c(0)), "int4"),))
    p = plan_peek(plan, FIN, INDEXES, optimized=True)
    assert p.mfp.expressions == (Call("div", (lit(10), c(0)), "int4"),)
    data = {V: {(0, 1, 1): 1, (5, 1, 1): 1}}
    assert run_fast_path(p, data) == reference.evaluate(plan, data) == {(5, 1, 1, 2): 1}


def test_real_compiled_mfp_honours_the_evaluation_order():
    """The contract the fast path relies on, checked against expr.compile itself."""
    compile_mod = pytest.importorskip("expr.compile")
    plan = Map(Filter(v, (Call("neq", (c(0), lit(0)), "bool"),)),
               (Call("div_int4", (lit(10), c(0)), "int4"),))
    p = plan_peek(plan, FIN, INDEXES, optimized=True)
    rows, errs = compile_mod.compile_mfp(p.mfp)([(0, 1, 1), (5, 1, 1)])
    assert rows == [(5, 1, 1, 2)] and errs == []


def test_fast_path_matches_reference_on_random_chains():
    rng = random.Random(7)
    vals = (None, 0, 1, 2)
    idx = {V: [AvailableIndex(IX, (c(0),), 3), AvailableIndex(IX2, (c(0), c(1)), 3)]}
    lookups = 0
    for _ in range(300):
        data = {V: {tuple(rng.choice(vals) for _ in range(3)): rng.randint(1, 2) for _ in range(6)}}
        e = v
        for _ in range(rng.randint(1, 4)):
            n = e.arity()
            k = rng.random()
            if k < 0.5:
                preds = [eq(c(rng.randrange(n)), lit(rng.choice(vals[1:])))]
                if rng.random() < 0.3:
                    preds.append(Call("or", (eq(c(0), lit(1)), eq(c(0), lit(2))), "bool"))
                e = Filter(e, tuple(preds))
            elif k < 0.75:
                e = Map(e, (Call("add", (c(rng.randrange(n)), lit(1)), "int4"),))
            else:
                e = Project(e, tuple(rng.randrange(n) for _ in range(rng.randint(1, 3))))
        p = plan_peek(e, FIN, idx, optimized=True)
        assert isinstance(p, FastPathPeek)
        lookups += p.literal_constraints is not None
        assert run_fast_path(p, data) == reference.evaluate(e, data), e
    assert lookups > 20
