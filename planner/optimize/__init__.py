"""The optimizer: a pipeline of small pure rules run to a bounded fixpoint.

Owns ``optimize(expr) -> expr`` and the order of ``RULES``.  Each rule lives in its own
module with its own tests and is a pure ``verb_object`` function; rules keep the very
same object when they change nothing, so the fixpoint test is usually an identity check.
``extract_common_subexpressions`` runs once after the fixpoint (the other rules would
otherwise fight over its Lets).  Invariant: every rule preserves the plan's rows (and
its data errors, up to errors that boolean short-circuiting or filtering first
legitimately avoids), and ``optimize`` terminates (at most ``MAX_ROUNDS`` rounds).  A
rule that hits Python's recursion limit on a very deep plan is skipped (skipping a rule
is always safe).  Deliberately not here: choosing arrangements or the fast path
(``planner.peek``, ``planner.lower``).
"""
from __future__ import annotations

from planner.optimize.boolean import simplify_boolean_logic
from planner.optimize.cse import extract_common_subexpressions
from planner.optimize.empty import propagate_empty_collections
from planner.optimize.fold import fold_constants
from planner.optimize.fusion import fuse_map_filter_project
from planner.optimize.joins import canonicalize_join_equivalences
from planner.optimize.lets import inline_lets
from planner.optimize.predicates import push_down_predicates
from planner.optimize.projections import push_down_projections
from planner.optimize.redundant import remove_redundant_distinct, remove_redundant_threshold

RULES = (
    inline_lets,
    fold_constants,
    simplify_boolean_logic,
    propagate_empty_collections,
    # flatten nested Joins first: a FROM list binds as a left-deep tree of binary Joins, and
    # sinking predicates through n nested levels costs O(n^2) (select5's 64-way joins)
    fuse_map_filter_project,
    push_down_predicates,
    fuse_map_filter_project,
    canonicalize_join_equivalences,
    push_down_projections,
    fuse_map_filter_project,
    propagate_empty_collections,
    remove_redundant_distinct,
    remove_redundant_threshold,
)

#: run once after the fixpoint: rules above may not undo it, and it must see the final plan
#: (inline_lets and fusion then tidy the Lets CSE left bound to a bare Get and the Unions
#: that inlining nests; neither can undo a Let used twice)
FINAL_RULES = (extract_common_subexpressions, inline_lets, fuse_map_filter_project)

MAX_ROUNDS = 8


def _run(rule, expr):
    try:
        return rule(expr)
    except RecursionError:
        return expr  # a plan too deep for this rule: skipping a rule is always safe


def optimize(expr, rules=RULES, final_rules=FINAL_RULES, check=None):
    """Run ``rules`` in order until nothing changes (at most ``MAX_ROUNDS`` rounds), then
    ``final_rules`` once.  ``check()``, when given, is called before each rule: the caller's
    way to stop a long optimization (it raises, e.g. on a cancelation)."""
    for _ in range(MAX_ROUNDS):
        before = expr
        for rule in rules:
            if check is not None:
                check()
            expr = _run(rule, expr)
        if expr is before or expr == before:
            break
    for rule in final_rules:
        if check is not None:
            check()
        expr = _run(rule, expr)
    return expr


__all__ = [
    "optimize", "RULES", "fold_constants", "simplify_boolean_logic",
    "propagate_empty_collections", "push_down_predicates", "fuse_map_filter_project",
    "canonicalize_join_equivalences", "inline_lets", "push_down_projections",
    "remove_redundant_distinct", "remove_redundant_threshold", "extract_common_subexpressions",
]
