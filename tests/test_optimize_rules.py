"""Per-rule tests of planner/optimize: each pins what one rule must do to a small plan.

Sabotages tried (each turned a test here red, then was restored):
- fold_constants folding an erroring constant to a plan-time error -> test_fold_keeps_erroring_constant
- simplify_boolean_logic dropping NULL from AND -> test_simplify_keeps_null_in_and
- push_down_predicates pushing a constant predicate below a global Reduce -> test_push_keeps_constant_predicate_above_global_reduce
- push_down_predicates converting `=` to an equivalence without IS NOT NULL -> test_push_equality_becomes_equivalence_with_not_null
- push_down_projections pruning under TopK -> test_projections_keep_topk_input_whole
- inline_lets inlining a binding used twice -> test_inline_lets_keeps_shared_binding
- canonicalize_join_equivalences not merging overlapping classes -> test_canonicalize_merges_overlapping_classes
"""
import pytest

from expr.relation import (AggregateExpr, ColumnOrder, Constant, Filter, FlatMap, Get, Join, Let, LocalId,
                           Map, Negate, Project, Reduce, Threshold, TopK, Union)
from expr.scalar import Call, CallMzNow, Column, If, Literal
from planner.optimize import (canonicalize_join_equivalences, fold_constants, fuse_map_filter_project,
                              inline_lets, optimize, propagate_empty_collections, push_down_predicates,
                              push_down_projections, simplify_boolean_logic)
from planner.optimize.names import make_is_not_null
from repr.ids import user
from tests.support import reference


@pytest.fixture(autouse=True)
def _fallback(monkeypatch):
    monkeypatch.setattr(reference, "default_compiler", lambda: reference.fallback_compile)


A = Get(user(1), 2)
B = Get(user(2), 3)


def c(i):
    return Column(i)


def lit(v, ty="int4"):
    return Literal(v, ty)


def call(f, *args, ty="bool"):
    return Call(f, tuple(args), ty)


def add(a, b):  # expr.functions' id: fold_constants evaluates with the production functions
    return call("add_int4", a, b, ty="int4")


def eq(a, b):
    return call("eq", a, b)


# ---------------------------------------------------------------- fold_constants

def test_fold_constant_scalar_subtree():
    e = Map(A, (add(c(0), add(lit(1), lit(2))),))
    assert fold_constants(e) == Map(A, (add(c(0), lit(3)),))


def test_fold_keeps_erroring_constant():
    div = call("div_int4", lit(1), lit(0), ty="int4")
    e = Map(A, (div,))
    assert fold_constants(e) == e


def test_fold_never_folds_mz_now():
    e = Filter(A, (call("lt", CallMzNow(), add(lit(1), lit(1))),))
    assert fold_constants(e) == Filter(A, (call("lt", CallMzNow(), lit(2)),))


def test_fold_relation_over_constants():
    k = Constant((((1,), 1), ((2,), 1)), 1)
    e = Filter(Map(k, (add(c(0), lit(10)),)), (eq(c(0), lit(2)),))
    assert fold_constants(e) == Constant((((2, 12), 1),), 2)


def test_fold_if_with_literal_condition():
    e = Map(A, (If(lit(True, "bool"), c(0), c(1), "int4"),))
    assert fold_constants(e) == Map(A, (c(0),))


# ---------------------------------------------------------------- simplify_boolean_logic

def test_simplify_identities_and_absorption():
    x, y = eq(c(0), lit(1)), eq(c(1), lit(2))
    T, F = lit(True, "bool"), lit(False, "bool")
    assert simplify_boolean_logic(Map(A, (call("and", x, T),))) == Map(A, (x,))
    assert simplify_boolean_logic(Map(A, (call("and", x, F),))) == Map(A, (F,))
    assert simplify_boolean_logic(Map(A, (call("or", x, T),))) == Map(A, (T,))
    assert simplify_boolean_logic(Map(A, (call("or", call("or", x, y), F),))) == Map(A, (call("or", x, y),))
    assert simplify_boolean_logic(Map(A, (call("not", call("not", x)),))) == Map(A, (x,))


def test_simplify_splits_filter_conjunctions():
    x, y = eq(c(0), lit(1)), eq(c(1), lit(2))
    e = Filter(A, (call("and", x, call("and", y, x)), lit(True, "bool")))
    assert simplify_boolean_logic(e) == Filter(A, (x, y))
    assert simplify_boolean_logic(Filter(A, (lit(True, "bool"),))) == A


def test_simplify_keeps_null_in_and():
    x = eq(c(0), lit(1))
    e = Map(A, (call("and", x, lit(None, "bool")),))
    assert simplify_boolean_logic(e) == e


# ---------------------------------------------------------------- propagate_empty_collections

def test_empty_filter_false_and_null():
    assert propagate_empty_collections(Filter(A, (lit(False, "bool"),))) == Constant((), 2)
    assert propagate_empty_collections(Filter(A, (lit(None, "bool"),))) == Constant((), 2)


def test_empty_propagates_through_join_and_union():
    empty = Filter(B, (lit(False, "bool"),))
    assert propagate_empty_collections(Join((A, empty), ())) == Constant((), 5)
    assert propagate_empty_collections(Union((A, Project(empty, (0, 1))))) == A


def test_empty_keeps_global_reduce_default():
    agg = (AggregateExpr("count", lit(True, "bool"), False, "bool", "int8"),)
    g = Reduce(Constant((), 2), (), agg, global_default=True)
    assert propagate_empty_collections(g) == g
    assert propagate_empty_collections(Reduce(Constant((), 2), (c(0),), agg)) == Constant((), 2)


# ---------------------------------------------------------------- push_down_predicates

def test_push_through_project_and_map():
    p = eq(c(1), lit(5))
    e = Filter(Project(A, (1, 0)), (eq(c(0), lit(5)),))
    assert push_down_predicates(e) == Project(Filter(A, (p,)), (1, 0))
    m = Filter(Map(A, (add(c(0), lit(1)),)), (eq(c(1), lit(5)), eq(c(2), lit(3))))
    assert push_down_predicates(m) == Filter(Map(Filter(A, (p,)), (add(c(0), lit(1)),)), (eq(c(2), lit(3)),))


def test_push_into_union_branches():
    p = eq(c(0), lit(1))
    assert push_down_predicates(Filter(Union((A, Negate(A))), (p,))) == Union(
        (Filter(A, (p,)), Negate(Filter(A, (p,)))))


def test_push_into_the_right_join_input():
    e = Filter(Join((A, B), ()), (eq(c(3), lit(7)), eq(c(0), lit(1))))
    assert push_down_predicates(e) == Join((Filter(A, (eq(c(0), lit(1)),)), Filter(B, (eq(c(1), lit(7)),))), ())


def test_push_equality_becomes_equivalence_with_not_null():
    e = Filter(Join((A, B), ()), (eq(c(1), c(4)),))
    out = push_down_predicates(e)
    assert out == Join((Filter(A, (make_is_not_null(c(1)),)), Filter(B, (make_is_not_null(c(2)),))),
                       ((c(1), c(4)),))


def test_push_below_reduce_only_group_key_predicates():
    agg = (AggregateExpr("sum", c(1), False, "int4", "int8"),)
    r = Reduce(A, (add(c(0), lit(1)),), agg)
    e = Filter(r, (eq(c(0), lit(3)), eq(c(1), lit(9))))
    assert push_down_predicates(e) == Filter(
        Reduce(Filter(A, (eq(add(c(0), lit(1)), lit(3)),)), r.group_key, agg), (eq(c(1), lit(9)),))


def test_push_keeps_constant_predicate_above_global_reduce():
    agg = (AggregateExpr("count", lit(True, "bool"), False, "bool", "int8"),)
    e = Filter(Reduce(A, (), agg, True), (lit(False, "bool"),))
    assert push_down_predicates(e) == e


def test_push_below_topk_only_group_key_predicates():
    k = TopK(A, (0,), (ColumnOrder(1),), 1)
    e = Filter(k, (eq(c(0), lit(1)), eq(c(1), lit(2))))
    assert push_down_predicates(e) == Filter(TopK(Filter(A, (eq(c(0), lit(1)),)), (0,), (ColumnOrder(1),), 1),
                                             (eq(c(1), lit(2)),))


# ---------------------------------------------------------------- push_down_projections

def test_projections_drop_unused_map_and_aggregates():
    e = Project(Map(A, (add(c(0), lit(1)), add(c(1), lit(2)))), (3,))
    assert push_down_projections(e) == Project(Map(A, (add(c(1), lit(2)),)), (2,))
    aggs = (AggregateExpr("sum", c(1), False, "int4", "int8"), AggregateExpr("count", c(0), False, "int4", "int8"))
    r = Project(Reduce(B, (c(0),), aggs), (0, 2))
    out = push_down_projections(r)
    assert out == Reduce(Project(B, (0,)), (c(0),), (AggregateExpr("count", c(0), False, "int4", "int8"),))


def test_projections_prune_join_inputs():
    """A multiway join narrows every input to the columns read (its intermediate rows
    would carry the rest)."""
    e = Project(Join((A, B, A), ((c(0), c(2), c(5)),)), (4,))
    assert push_down_projections(e) == Project(
        Join((Project(A, (0,)), Project(B, (0, 2)), Project(A, (0,))), ((c(0), c(1), c(3)),)), (2,))


def test_projections_keep_stored_rows_whole_in_binary_join():
    """A binary join's input that is a Get (under Filters) and keeps a non-key column is
    not narrowed: the join arranges the stored row tuples themselves, and the Project
    above the join narrows the output.  Sabotage: ``_carries_stored_rows_whole`` always
    False -- B (and the Filter over it) came back narrowed to ``(0, 2)``."""
    e = Project(Join((A, B), ((c(0), c(2)),)), (4,))
    assert push_down_projections(e) == Project(Join((Project(A, (0,)), B), ((c(0), c(1)),)), (3,))
    fb = Filter(B, (call("is_not_null", c(1)),))
    e = Project(Join((A, fb), ((c(0), c(3)),)), (1, 4))
    assert push_down_projections(e) == Project(Join((A, fb), ((c(0), c(3)),)), (1, 4))


def test_projections_narrow_binary_join_input_read_only_by_key():
    """An input read only through its join key is narrowed (its rows collapse to one
    counted row per key), and so are a wide input read for less than half of its columns
    and a computed input (a Map builds new rows anyway)."""
    e = Project(Join((A, B), ((c(0), c(3)),)), (1,))
    assert push_down_projections(e) == Project(Join((A, Project(B, (1,))), ((c(0), c(2)),)), (1,))
    wide = Get(user(3), 6)
    e = Project(Join((A, wide), ((c(0), c(2)),)), (1, 3))
    assert push_down_projections(e) == Project(Join((A, Project(wide, (0, 1))), ((c(0), c(2)),)), (1, 3))
    mb = Map(B, (add(c(0), lit(1)),))
    e = Project(Join((A, mb), ((c(0), c(2)),)), (1, 5))
    out = push_down_projections(e)
    assert isinstance(out.input.inputs[1], Project)


def test_projections_keep_topk_input_whole():
    k = Project(TopK(B, (), (ColumnOrder(0),), 1), (0,))
    assert push_down_projections(k) == k


# ---------------------------------------------------------------- fuse_map_filter_project

def test_fuse_adjacent_operators():
    p, q = eq(c(0), lit(1)), eq(c(1), lit(2))
    assert fuse_map_filter_project(Filter(Filter(A, (p,)), (q,))) == Filter(A, (p, q))
    assert fuse_map_filter_project(Project(Project(B, (2, 0)), (1,))) == Project(B, (0,))
    assert fuse_map_filter_project(Project(A, (0, 1))) == A
    assert fuse_map_filter_project(Map(Map(A, (c(0),)), (c(2),))) == Map(A, (c(0), c(2)))


def test_fuse_flattens_nested_joins():
    inner = Join((A, B), ((c(1), c(2)),))
    e = Join((Get(user(3), 1), inner), ((c(0), c(1)),))
    assert fuse_map_filter_project(e) == Join((Get(user(3), 1), A, B), ((c(2), c(3)), (c(0), c(1))))


# ---------------------------------------------------------------- inline_lets

def test_inline_lets_single_use_and_unused():
    l = LocalId(1)
    v = Filter(A, (eq(c(0), lit(1)),))
    assert inline_lets(Let(l, v, Negate(Get(l, 2)))) == Negate(v)
    assert inline_lets(Let(l, v, B)) == B


def test_inline_lets_keeps_shared_binding():
    l = LocalId(1)
    v = Filter(A, (eq(c(0), lit(1)),))
    e = Let(l, v, Union((Get(l, 2), Get(l, 2))))
    assert inline_lets(e) == e


# ---------------------------------------------------------------- canonicalize_join_equivalences

def test_canonicalize_merges_overlapping_classes():
    e = Join((A, B), ((c(4), c(1)), (c(1), c(2)), (c(3), c(3))))
    assert canonicalize_join_equivalences(e) == Join((A, B), ((c(1), c(2), c(4)),))


def test_canonicalize_unwraps_trivial_join():
    assert canonicalize_join_equivalences(Join((A,), ())) == A


# ---------------------------------------------------------------- the pipeline

def test_optimize_pipeline_end_to_end():
    # SELECT a.0 FROM a, b WHERE a.1 = b.0 AND b.2 = 5 AND 1 = 1
    e = Project(Filter(Join((A, B), ()), (eq(c(1), c(2)), eq(c(4), lit(5)), eq(lit(1), lit(1)))), (0,))
    out = optimize(e)
    joins = []

    def walk(x):
        if isinstance(x, Join):
            joins.append(x)
        for k in getattr(x, "inputs", ()) or ((x.input,) if hasattr(x, "input") else ()):
            walk(k)
    walk(out)
    assert len(joins) == 1 and joins[0].equivalences  # the equality became a join key
    assert not isinstance(out, Filter)  # nothing left above the join


# ---------------------------------------------------------------- additions

def test_simplify_unwraps_is_true_and_negated_null_tests():
    x = eq(c(0), lit(1))
    assert simplify_boolean_logic(Filter(A, (call("is_true", x),))) == Filter(A, (x,))
    assert simplify_boolean_logic(Map(A, (call("not", call("is_null", c(0))),))) == Map(A, (call("is_not_null", c(0)),))
    # is_true inside a Map is a value (NULL -> false), not a filter: kept
    assert simplify_boolean_logic(Map(A, (call("is_true", x),))) == Map(A, (call("is_true", x),))


def test_fuse_drops_unit_join_inputs():
    unit = Constant((((), 1),), 0)
    assert fuse_map_filter_project(Join((unit, A, unit), ())) == A
    assert fuse_map_filter_project(Join((unit,), ())) == unit


def test_fuse_single_input_join_becomes_datum_equality_filter():
    e = Join((A,), ((c(0), c(1)),))
    out = fuse_map_filter_project(e)
    assert out == Filter(A, (call("is_not_distinct_from", c(0), c(1)),))
    data = {user(1): {(None, None): 1, (1, 1): 1, (1, None): 1}}
    assert reference.evaluate(out, data) == reference.evaluate(e, data) == {(None, None): 1, (1, 1): 1}


def test_push_propagates_literals_across_equivalences():
    """Sabotage: skipping _propagate_literals leaves B unfiltered -> red."""
    e = Filter(Join((A, B), ((c(0), c(2)),)), (eq(c(0), lit(5)),))
    out = push_down_predicates(e)
    assert out == Join((Filter(A, (eq(c(0), lit(5)),)), Filter(B, (eq(c(0), lit(5)),))), ((c(0), c(2)),))


def test_push_through_map_of_bare_column_or_literal():
    """Sabotage: not inlining trivial Map columns keeps the Filter above the Map -> red."""
    m = Map(A, (c(1), lit(3)))
    e = Filter(m, (eq(c(2), lit(5)), eq(c(3), c(0))))
    assert push_down_predicates(e) == Map(Filter(A, (eq(c(1), lit(5)), eq(lit(3), c(0)))), (c(1), lit(3)))


def test_simplify_drops_not_null_implied_by_comparison():
    """Sabotage: removing the implication step keeps the redundant test -> red."""
    e = Filter(A, (call("is_not_null", c(1)), eq(c(1), lit(10)), call("is_not_null", c(0))))
    assert simplify_boolean_logic(e) == Filter(A, (eq(c(1), lit(10)), call("is_not_null", c(0))))


def test_remove_redundant_distinct_over_reduce():
    """Sabotage: removing a DISTINCT over any input (not only a Reduce) -> red."""
    from planner.optimize import remove_redundant_distinct
    inner = Reduce(B, (c(0),), (AggregateExpr("count", lit(True, "bool"), False, "bool", "int8"),))
    assert remove_redundant_distinct(Reduce(inner, (c(0), c(1)), ())) == inner
    partial = Reduce(inner, (c(0),), ())
    assert remove_redundant_distinct(partial) == partial
    over_get = Reduce(A, (c(0), c(1)), ())
    assert remove_redundant_distinct(over_get) == over_get


def test_remove_redundant_threshold_only_over_non_negative():
    """Sabotage: treating Negate/Union-with-Negate as non-negative -> red."""
    from planner.optimize import remove_redundant_threshold
    assert remove_redundant_threshold(Threshold(Filter(A, (eq(c(0), lit(1)),)))) == Filter(A, (eq(c(0), lit(1)),))
    keep = Threshold(Union((A, Negate(A))))
    assert remove_redundant_threshold(keep) == keep


def test_extract_common_subexpressions_shares_repeats():
    from planner.optimize import extract_common_subexpressions
    d = Reduce(Project(Filter(B, (call("is_not_null", c(0)),)), (0,)), (c(0),), ())
    e = Union((d, Negate(Project(Join((d, d), ((c(0), c(1)),)), (0,)))))
    out = extract_common_subexpressions(e)
    assert isinstance(out, Let) and out.value == d
    g = Get(out.id, 1)
    assert out.body == Union((g, Negate(Project(Join((g, g), ((c(0), c(1)),)), (0,)))))
    data = {user(2): {(1, 2, 3): 1, (None, 1, 1): 2, (2, 2, 2): 1}}
    assert reference.evaluate(out, data) == reference.evaluate(e, data)


def test_extract_common_subexpressions_never_hoists_local_reads():
    """Sabotage: dropping the _reads_local check -> red (and the plan would be ill-scoped)."""
    from planner.optimize import extract_common_subexpressions
    l = LocalId(1)
    x = Filter(Get(l, 2), (eq(c(0), lit(1)),))
    e = Let(l, A, Union((Project(x, (0, 1)), Project(x, (0, 1)))))
    assert extract_common_subexpressions(e) == e


def test_fuse_flattens_nested_unions():
    assert fuse_map_filter_project(Union((A, Union((A, Negate(A))), A))) == Union((A, A, Negate(A), A))


def test_optimize_is_idempotent_on_random_plans():
    """Sabotage: dropping the tidy-up after CSE (FINAL_RULES = CSE only) -> red."""
    import random

    from tests.support.random_plans import random_plan
    for s in range(300):
        once = optimize(random_plan(s, random.Random(s).randint(1, 5)))
        assert optimize(once) == once, s
