"""The operator harness (``tests.support.operator_harness``) tested itself."""
from __future__ import annotations

from expr.relation import Get
from repr.ids import user
from tests.support.operator_harness import INDEX, approx_equal, make_dataflow, run_reference_check
from tests.support.reference import evaluate_with_errors


def test_harness_detects_a_wrong_answer():
    """The harness itself: a plan whose export is compared against a *different* plan's
    reference must fail (guards against a harness that compares nothing)."""
    from expr.relation import Negate
    g = user(1)
    plan = Get(g, 1)
    rng_gen = (1, lambda rng: (rng.randint(0, 3),))
    run_reference_check(plan, {g: rng_gen}, times=3)
    colls, df = make_dataflow(Negate(plan), {g: 1}, initial={g: [((1,), 1)]})
    df.run_to_completion()
    got = df.exports[INDEX].oks.snapshot(0)
    assert got == {(1,): -1}
    want = evaluate_with_errors(plan, {g: colls[g].snapshot(0)})[0]
    assert not approx_equal(got, want)
