"""Results-unchanged checks: every optimizer rule (and the whole pipeline) evaluated
before/after with the reference evaluator on random plans over random small tables.

A rule passes when, for every seed, the rewritten plan has the same arity, the same
rows (with counts) and the same set of data errors.  ``test_harness_catches_a_wrong_rule``
proves the harness has teeth: a deliberately wrong rule (dropping every Threshold) is
caught.  Sabotage tried on a real rule: push_down_predicates moving non-group-key predicates
below a TopK -> red here; restored.
"""
import dataclasses
import random

import pytest

from expr.relation import Threshold
from planner import optimize as opt
from planner.optimize.util import transform_up
from tests.support import reference
from tests.support.random_plans import random_data, random_plan

SEEDS = range(300)


@pytest.fixture(autouse=True)
def _fallback(monkeypatch):
    monkeypatch.setattr(reference, "default_compiler", lambda: reference.fallback_compile)


def _cases():
    for s in SEEDS:
        depth = random.Random(s).randint(1, 4)
        yield s, random_plan(s, depth), random_data(random.Random(s + 10_000))


def _mismatches(rule, limit=3):
    bad = []
    for s, plan, data in _cases():
        after = rule(plan)
        before_res = reference.evaluate_with_errors(plan, data)
        after_res = reference.evaluate_with_errors(after, data)
        if (after.arity() != plan.arity() or before_res[0] != after_res[0]
                or set(before_res[1]) != set(after_res[1])):
            bad.append((s, plan, after))
            if len(bad) >= limit:
                break
    return bad


RULES = [opt.inline_lets, opt.fold_constants, opt.simplify_boolean_logic,
         opt.propagate_empty_collections, opt.push_down_predicates,
         opt.fuse_map_filter_project, opt.canonicalize_join_equivalences,
         opt.push_down_projections, opt.remove_redundant_distinct,
         opt.remove_redundant_threshold, opt.extract_common_subexpressions, opt.optimize]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
def test_rule_leaves_results_unchanged(rule):
    assert _mismatches(rule) == []


def test_rules_do_something_on_random_plans():
    """Guard against a vacuous property: most rules rewrite some of the random plans."""
    changed = {r.__name__: 0 for r in RULES}
    for s, plan, _ in _cases():
        for r in RULES:
            changed[r.__name__] += r(plan) != plan
    for name, n in changed.items():
        if name != "canonicalize_join_equivalences":  # random classes are already canonical
            assert n > 0, name


def test_harness_catches_a_wrong_rule():
    def drop_threshold(expr):
        return transform_up(expr, lambda e: e.input if isinstance(e, Threshold) else e)
    assert _mismatches(drop_threshold, limit=1)


def test_optimize_terminates_and_is_stable():
    for s, plan, _ in _cases():
        once = opt.optimize(plan)
        assert opt.optimize(once).arity() == plan.arity()


def test_pipeline_unchanged_with_the_real_compiler(monkeypatch):
    """The same property with expr.compile's scalars (and its constant folding)."""
    compile_mod = pytest.importorskip("expr.compile")
    monkeypatch.setattr(reference, "default_compiler", lambda: compile_mod.compile_scalar)
    for s in range(200):
        plan = random_plan(s, random.Random(s).randint(1, 4), add_func="add_int4")
        data = random_data(random.Random(s + 10_000))
        after = opt.optimize(plan)
        a = reference.evaluate_with_errors(plan, data)
        b = reference.evaluate_with_errors(after, data)
        assert after.arity() == plan.arity()
        assert a[0] == b[0] and set(a[1]) == set(b[1]), s
