"""Threshold, Distinct, Negate and Union against the reference."""
from __future__ import annotations

import pytest

from compute.render.threshold import ThresholdOp
from expr.relation import Get, Negate, Reduce, Threshold, Union
from expr.scalar import Column
from repr.ids import user
from tests.support.operator_harness import run_reference_check, small_int

A, B = user(1), user(2)


def gen(rng):
    return (small_int(rng, 0, 3), small_int(rng, 0, 1, 0.0))


@pytest.mark.parametrize("seed", range(5))
def test_except_all_threshold_matches_reference(seed):
    plan = Threshold(Union((Get(A, 2), Negate(Get(B, 2)))))
    run_reference_check(plan, {A: (2, gen), B: (2, gen)}, seed=seed, times=8)


@pytest.mark.parametrize("seed", range(3))
def test_except_distinct_and_intersect(seed):
    # EXCEPT: Threshold(Distinct(A) - Distinct(B)); INTERSECT ALL-ish via negations
    da = Reduce(Get(A, 2), (Column(0), Column(1)), ())
    db = Reduce(Get(B, 2), (Column(0), Column(1)), ())
    run_reference_check(Threshold(Union((da, Negate(db)))), {A: (2, gen), B: (2, gen)}, seed=seed)
    inter = Threshold(Union((Get(A, 2), Negate(Threshold(Union((Get(A, 2), Negate(Get(B, 2)))))))))
    run_reference_check(inter, {A: (2, gen), B: (2, gen)}, seed=seed + 5)


@pytest.mark.parametrize("seed", range(3))
def test_union_and_negate_are_linear(seed):
    plan = Union((Get(A, 2), Get(B, 2), Negate(Get(A, 2)), Get(A, 2)))
    run_reference_check(plan, {A: (2, gen), B: (2, gen)}, seed=seed)


def test_threshold_emits_only_clipped_changes():
    """Sabotage: emitting raw diffs (no clipping at zero) failed this."""
    op = ThresholdOp()
    op.push(0, [(("x",), -2), (("y",), 1)], 0)
    assert op.flush(0) == ([(("y",), 1)], ())
    op.push(0, [(("x",), 3)], 1)
    assert op.flush(1) == ([(("x",), 1)], ())
    op.push(0, [(("x",), -1), (("x",), 1)], 2)
    assert op.flush(2) == ([], ())
