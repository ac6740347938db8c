"""Map/Filter/Project (fused), errors with diffs, and temporal filters (mz_now)."""
from __future__ import annotations

import pytest

from compute.render.dataflow import Dataflow
from compute.render.mfp import MfpOp, split_temporal
from expr.mfp import MapFilterProject
from expr.relation import Filter, Get, Map, Project
from expr.scalar import Call, CallMzNow, Column, Literal
from repr.ids import user
from tests.support.operator_harness import INDEX, make_dataflow, run_reference_check, small_int

A = user(1)


def gen(rng):
    return (small_int(rng, 0, 4), small_int(rng, -2, 3))


def c(i):
    return Column(i)


def lit(v):
    return Literal(v, "int4")


@pytest.mark.parametrize("seed", range(4))
def test_map_filter_project_chain_matches_reference(seed):
    div = Call("div_int4", (lit(12), c(1)), "int4")
    plan = Project(Filter(Map(Filter(Get(A, 2), (Call("is_not_null", (c(0),), "bool"),)),
                              (Call("add_int4", (c(0), c(1)), "int4"), div)),
                          (Call("and", (Call("gt", (c(3), lit(0)), "bool"),
                                         Call("gt", (c(2), lit(1)), "bool")), "bool"),)),
                   (3, 2, 0))
    run_reference_check(plan, {A: (2, gen)}, seed=seed, times=6)


def test_division_by_zero_error_retracts_with_its_row():
    """An error row carries the diff of the row that raised it.  Sabotage: emitting errors
    with diff +1 regardless of the row's diff left the error after the delete."""
    div = Call("div_int4", (lit(12), c(1)), "int4")
    plan = Map(Get(A, 2), (div,))
    colls, df = make_dataflow(plan, {A: 2}, initial={A: [((1, 0), 1), ((2, 3), 1)]})
    df.run_to_completion()
    exp = df.exports[INDEX]
    assert exp.oks.snapshot(0) == {(2, 3, 4): 1}
    assert exp.errs.snapshot(0) == {("22012", "division by zero"): 1}
    colls[A].append([((1, 0), -1)], 1, 2)
    df.run_to_completion()
    assert exp.errs.snapshot(1) == {}


def test_filter_before_map_never_evaluates_the_map_for_dropped_rows():
    div = Call("div_int4", (lit(12), c(1)), "int4")
    plan = Map(Filter(Get(A, 2), (Call("neq", (c(1), lit(0)), "bool"),)), (div,))
    colls, df = make_dataflow(plan, {A: 2}, initial={A: [((1, 0), 1), ((2, 3), 1)]})
    df.run_to_completion()
    assert df.exports[INDEX].errs.snapshot(0) == {}
    assert df.exports[INDEX].oks.snapshot(0) == {(2, 3, 4): 1}


def test_identity_mfp_is_not_rendered():
    plan = Project(Get(A, 2), (0, 1))
    colls, df = make_dataflow(plan, {A: 2})
    assert not any(isinstance(n.op, MfpOp) for n in df._nodes)


def now_cmp(op, e):
    return Call(op, (CallMzNow(), Call("cast_int4_to_mz_timestamp", (e,), "mz_timestamp")), "bool")


def gen_interval(rng):
    s = rng.randint(0, 12)
    return (rng.randint(0, 3), s, s + rng.randint(0, 5))


@pytest.mark.parametrize("seed", range(4))
def test_temporal_filter_matches_reference_at_every_time(seed):
    """Rows valid for ``start <= mz_now() < end``: inserted when their time comes and
    retracted when it passes, with no input update at those times.  Sabotage: treating
    the temporal predicates as ordinary ones (evaluated once at the update's time) left
    expired rows in the index and failed."""
    plan = Filter(Get(A, 3), (now_cmp("gte", c(1)), now_cmp("lt", c(2))))
    run_reference_check(plan, {A: (3, gen_interval)}, seed=seed, times=16, per_time=3, temporal=True)
    plan = Filter(Get(A, 3), (now_cmp("lte", c(2)), Call("gt", (c(0), lit(0)), "bool")))
    run_reference_check(plan, {A: (3, gen_interval)}, seed=seed, times=16, per_time=3, temporal=True)


def test_split_temporal_shapes():
    mfp = MapFilterProject(2, (), (now_cmp("lte", c(1)), Call("gt", (c(0), lit(0)), "bool")), (0,))
    new, bounds, out_arity = split_temporal(mfp)
    assert out_arity == 1 and bounds == [("lte", 1)]
    assert new.predicates == (Call("gt", (c(0), lit(0)), "bool"),)
    assert split_temporal(MapFilterProject.identity(2)) is None
    # mirrored: expr >= mz_now()  is  mz_now() <= expr
    mirrored = Call("gte", (c(1), CallMzNow()), "bool")
    _, bounds, _ = split_temporal(MapFilterProject(2, (), (mirrored,), None))
    assert bounds == [("lte", 2)]
