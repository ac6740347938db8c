"""FlatMap (generate_series, unnest) and Constant inputs."""
from __future__ import annotations

import pytest

from compute.dataflow import BuildDesc, DataflowDescription, IndexExport
from compute.render.dataflow import Dataflow
from expr.relation import AggregateExpr, Constant, FlatMap, Get, Join, Reduce
from expr.scalar import Column, Literal
from repr.ids import user
from repr.timestamp import MAX
from tests.support.operator_harness import INDEX, make_dataflow, run_reference_check, small_int

A = user(1)


def gen(rng):
    return (small_int(rng, 0, 3), small_int(rng, 0, 5), rng.choice([1, 2, -1]))


@pytest.mark.parametrize("seed", range(3))
def test_generate_series_matches_reference(seed):
    plan = FlatMap(Get(A, 3), "generate_series", (Column(0), Column(1)), 1)
    run_reference_check(plan, {A: (3, gen)}, seed=seed)
    plan = FlatMap(Get(A, 3), "generate_series", (Column(0), Column(1), Column(2)), 1)
    run_reference_check(plan, {A: (3, gen)}, seed=seed)


@pytest.mark.parametrize("seed", range(3))
def test_with_ordinality_matches_reference(seed):
    """Each call's rows numbered from 1 (WITH ORDINALITY).  Sabotage: numbering from 0 in
    ``resolve_table_function`` -> the operator disagrees with the reference."""
    plan = FlatMap(Get(A, 3), "generate_series+ordinality", (Column(0), Column(1)), 2)
    run_reference_check(plan, {A: (3, gen)}, seed=seed)


def test_zero_step_is_an_error_row():
    plan = FlatMap(Get(A, 3), "generate_series", (Column(0), Column(1), Literal(0, "int4")), 1)
    colls, df = make_dataflow(plan, {A: 3}, initial={A: [((1, 2, 0), 1)]})
    df.run_to_completion()
    assert df.exports[INDEX].errs.snapshot(0) == {("22023", "step size cannot equal zero"): 1}


def test_unnest():
    plan = FlatMap(Get(A, 1), "unnest", (Column(0),), 1)
    colls, df = make_dataflow(plan, {A: 1}, initial={A: [(((1, 2, 2),), 1), ((None,), 1)]})
    df.run_to_completion()
    assert df.exports[INDEX].oks.snapshot(0) == {((1, 2, 2), 1): 1, ((1, 2, 2), 2): 2}


def _const_desc(plan, as_of, until):
    return DataflowDescription((), (), (BuildDesc(user(5), plan),),
                               (IndexExport(user(6), user(5), (), plan.arity()),), (),
                               as_of=as_of, until=until)


def test_constant_is_sealed_and_readable_at_max():
    """A dataflow over constants reads at MAX: its frontier becomes the empty frontier.
    Sabotage: giving ConstantInput a finite upper kept the frontier at MAX (unreadable)."""
    plan = Reduce(FlatMap(Constant((((1, 4), 1), ((10, 11), 1)), 2), "generate_series",
                          (Column(0), Column(1)), 1),
                  (), (AggregateExpr("sum", Column(2), False, "int4", "int8"),), True)
    df = Dataflow(_const_desc(plan, MAX, None))
    df.run_to_completion()
    assert df.frontier() is None
    exp = df.exports[user(6)]
    assert exp.oks.upper is None
    assert exp.oks.snapshot(MAX) == {(31,): 1}
    assert df.is_done()


def test_constant_error_and_single_time_peek_dataflow():
    plan = Constant((), 1, error=("22012", "division by zero"))
    df = Dataflow(_const_desc(plan, 5, 6))
    df.run_to_completion()
    assert df.frontier() == 6
    assert df.exports[user(6)].errs.snapshot(5) == {("22012", "division by zero"): 1}
    assert df.is_done()
