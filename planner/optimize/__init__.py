"""The optimizer: a pipeline of small pure rules run to a bounded fixpoint.

Owns ``optimize(expr) -> expr`` and the order of ``RULES``.  Invariant: every rule
preserves the plan's result (rows and data errors, up to errors that boolean
short-circuiting legitimately avoids), and ``optimize`` terminates (at most
``MAX_ROUNDS`` passes).  Each rule lives in its own module with its own tests.
Deliberately not here: choosing arrangements or the fast path (``planner.peek``,
``planner.lower``).
"""
from __future__ import annotations

from planner.optimize.boolean import simplify_boolean_logic
from planner.optimize.empty import propagate_empty_collections
from planner.optimize.fold import fold_constants
from planner.optimize.fusion import fuse_map_filter_project
from planner.optimize.joins import canonicalize_join_equivalences
from planner.optimize.lets import inline_lets
from planner.optimize.predicates import push_down_predicates
from planner.optimize.projections import push_down_projections

RULES = (
    inline_lets,
    fold_constants,
    simplify_boolean_logic,
    propagate_empty_collections,
    push_down_predicates,
    fuse_map_filter_project,
    canonicalize_join_equivalences,
    push_down_projections,
    fuse_map_filter_project,
    propagate_empty_collections,
)

MAX_ROUNDS = 8


def optimize(expr, rules=RULES):
    """Run ``rules`` in order until nothing changes (at most ``MAX_ROUNDS`` rounds)."""
    for _ in range(MAX_ROUNDS):
        before = expr
        for rule in rules:
            try:
                expr = rule(expr)
            except RecursionError:
                continue  # a plan too deep for this rule: skipping a rule is always safe
        if expr == before:
            break
    return expr


__all__ = [
    "optimize", "RULES", "fold_constants", "simplify_boolean_logic",
    "propagate_empty_collections", "push_down_predicates", "fuse_map_filter_project",
    "canonicalize_join_equivalences", "inline_lets", "push_down_projections",
]
