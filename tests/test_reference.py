"""The reference evaluator (tests/support/reference.py): the oracle everyone tests against.

Each test pins one node's semantics with a hand-computed answer, so a sabotage of that
node's evaluation turns it red (sabotages tried: Threshold keeping negatives, TopK
ignoring nulls_last, Join treating NULL != NULL, Reduce dropping global_default,
Filter keeping NULL predicates)."""
from decimal import Decimal

import pytest

from expr.finishing import RowSetFinishing
from expr.relation import (AggregateExpr, ArrangeBy, ColumnOrder, Constant, Filter, FlatMap, Get, Join, Let,
                           LocalId, Map, Negate, Project, Reduce, Threshold, TopK, Union)
from expr.scalar import Call, CallMzNow, Column, If, Literal
from repr.errors import EvalError
from repr.ids import user
from tests.support import reference


@pytest.fixture(autouse=True)
def _fallback(monkeypatch):
    monkeypatch.setattr(reference, "default_compiler", lambda: reference.fallback_compile)


T = user(1)
DATA = {T: {(1, "a"): 1, (2, "b"): 2, (None, "c"): 1, (3, None): 1}}
t = Get(T, 2)


def c(i):
    return Column(i)


def lit(v, ty="int4"):
    return Literal(v, ty)


def call(f, *args, ty="bool"):
    return Call(f, tuple(args), ty)


def ev(e, data=DATA, **kw):
    return reference.evaluate(e, data, **kw)


def test_get_constant_and_consolidation():
    assert ev(t) == DATA[T]
    assert ev(Constant(((( 1,), 2), ((1,), -2), ((2,), 1)), 1)) == {(2,): 1}


def test_constant_error_is_collected():
    oks, errs = reference.evaluate_with_errors(Constant((), 1, ("22012", "division by zero")), {})
    assert oks == {} and errs == {("22012", "division by zero"): 1}
    with pytest.raises(EvalError):
        ev(Constant((), 1, ("22012", "division by zero")))


def test_map_filter_project_three_valued():
    # NULL predicate drops the row (sabotage: keep NULL -> red)
    e = Filter(t, (call("gt", c(0), lit(1)),))
    assert ev(e) == {(2, "b"): 2, (3, None): 1}
    e = Project(Map(t, (call("add", c(0), lit(10), ty="int4"), call("add", c(2), lit(1), ty="int4"))), (3, 1))
    assert ev(e) == {(12, "a"): 1, (13, "b"): 2, (None, "c"): 1, (14, None): 1}


def test_map_error_goes_to_errors_not_exception():
    e = Map(t, (call("div", lit(1), c(0), ty="int4"),))
    data = {T: {(0, "z"): 2, (1, "a"): 1}}
    oks, errs = reference.evaluate_with_errors(e, data)
    assert oks == {(1, "a", 1): 1}
    assert errs == {("22012", "division by zero"): 2}


def test_join_datum_equality_null_matches_null():
    u = Get(user(2), 1)
    data = {T: DATA[T], user(2): {(None,): 1, (2,): 3}}
    e = Join((t, u), ((c(0), c(2)),))
    assert ev(e, data) == {(None, "c", None): 1, (2, "b", 2): 6}


def test_cross_join_multiplies_counts():
    u = Constant((((7,), 2),), 1)
    assert ev(Join((Constant((((1,), 3),), 1), u), ())) == {(1, 7): 6}


def test_reduce_aggregates():
    aggs = (
        AggregateExpr("count", lit(True, "bool"), False, "bool", "int8"),
        AggregateExpr("count", c(0), False, "int4", "int8"),
        AggregateExpr("sum", c(0), False, "int4", "int8"),
        AggregateExpr("min", c(1), False, "text", "text"),
        AggregateExpr("max", c(0), False, "int4", "int4"),
        AggregateExpr("avg", c(0), False, "int4", "numeric"),
        AggregateExpr("count", c(0), True, "int4", "int8"),
        AggregateExpr("string_agg", call("record", c(1), lit(",", "text"), ty="record"), False, "text", "text"),
    )
    out = ev(Reduce(t, (), aggs))
    assert out == {(5, 4, 8, "a", 3, Decimal(2), 3, "a,b,b,c"): 1}


def test_reduce_group_by_and_global_default():
    e = Reduce(t, (c(1),), (AggregateExpr("sum", c(0), False, "int4", "int8"),))
    assert ev(e) == {("a", 1): 1, ("b", 4): 1, ("c", None): 1, (None, 3): 1}
    empty = {T: {}}
    g = Reduce(t, (), (AggregateExpr("count", lit(True, "bool"), False, "bool", "int8"),
                       AggregateExpr("sum", c(0), False, "int4", "int8")), global_default=True)
    assert ev(g, empty) == {(0, None): 1}
    assert ev(Reduce(t, (), g.aggregates, global_default=False), empty) == {}


def test_reduce_statistics_and_bool():
    data = {T: {(1, "x"): 1, (3, "y"): 1}}
    aggs = (AggregateExpr("var_samp", c(0), False, "float8", "float8"),
            AggregateExpr("stddev_pop", c(0), False, "float8", "float8"),
            AggregateExpr("bool_and", call("gt", c(0), lit(1)), False, "bool", "bool"),
            AggregateExpr("bool_or", call("gt", c(0), lit(1)), False, "bool", "bool"),
            AggregateExpr("array_agg", c(0), False, "int4", "int4[]"))
    from repr.arrays import Array  # array_agg's value is an Array, not a record
    assert ev(Reduce(t, (), aggs), data) == {(2.0, 1.0, False, True, Array((1, 3))): 1}


def test_distinct_is_reduce_without_aggregates():
    assert ev(Reduce(t, (call("is_null", c(1)),), ())) == {(False,): 1, (True,): 1}


def test_topk_order_nulls_and_offset():
    asc_nulls_first = TopK(t, (), (ColumnOrder(0, False, False),), 2)
    assert ev(asc_nulls_first) == {(None, "c"): 1, (1, "a"): 1}
    desc_nulls_last = TopK(t, (), (ColumnOrder(0, True, True),), 2, 1)
    assert ev(desc_nulls_last) == {(2, "b"): 2}
    per_group = TopK(Constant((((1, 5), 1), ((1, 6), 1), ((2, 7), 1)), 2), (0,), (ColumnOrder(1, True),), 1)
    assert ev(per_group) == {(1, 6): 1, (2, 7): 1}


def test_negate_threshold_union():
    e = Threshold(Union((t, Negate(Filter(t, (call("eq", c(0), lit(2)),))), Negate(t), t)))
    assert ev(Union((t, Negate(t)))) == {}
    assert ev(e) == {(1, "a"): 1, (None, "c"): 1, (3, None): 1}


def test_let_and_local_get():
    l = LocalId(1)
    e = Let(l, Filter(t, (call("lt", c(0), lit(3)),)), Union((Get(l, 2), Get(l, 2))))
    assert ev(e) == {(1, "a"): 2, (2, "b"): 4}


def test_flatmap_generate_series_and_step_error():
    e = FlatMap(Constant((((2,), 1), ((None,), 1)), 1), "generate_series", (lit(1), c(0)), 1)
    assert ev(e) == {(2, 1): 1, (2, 2): 1}
    bad = FlatMap(Constant((((2,), 1),), 1), "generate_series", (lit(1), c(0), lit(0)), 1)
    assert reference.evaluate_with_errors(bad, {})[1] == {("22023", "step size cannot equal zero"): 1}


def test_if_and_mz_now_and_arrangeby():
    e = Map(ArrangeBy(t, ((c(0),),)), (If(call("is_null", c(0)), lit(-1), c(0), "int4"), CallMzNow()))
    assert ev(e, time=42)[(None, "c", -1, 42)] == 1


def test_finishing():
    f = RowSetFinishing(order_by=(ColumnOrder(0, True, False),), limit=3, offset=1, project=(1,))
    # desc nulls first: (None,"c"), (3,None), (2,"b") x2, (1,"a"); skip 1, take 3
    assert reference.apply_finishing(DATA[T], f) == [(None,), ("b",), ("b",)]


def test_missing_input_is_a_clear_error():
    with pytest.raises(KeyError):
        ev(Get(user(99), 1))


def test_with_the_real_scalar_compiler():
    """The oracle runs the real compiled scalars when expr.compile exists."""
    compile_mod = pytest.importorskip("expr.compile")
    data = {T: {(0, "z"): 1, (4, "a"): 2}}
    e = Filter(Map(t, (Call("div_int4", (lit(8), c(0)), "int4"),)), (Call("gt", (c(2), lit(1)), "bool"),))
    oks, errs = reference.evaluate_with_errors(e, data, compile_scalar=compile_mod.compile_scalar)
    assert oks == {(4, "a", 2): 2}
    assert [k[0] for k in errs] == ["22012"]


def test_join_three_way_with_transitive_class_and_empty_join():
    """Sabotage: checking a class only when a member becomes evaluable at the first
    input (so classes spanning later inputs are never checked) -> red here."""
    a = Constant((((1,), 1), ((2,), 1)), 1)
    b = Constant((((1,), 2), ((3,), 1)), 1)
    k = Constant((((1,), 1), ((2,), 5)), 1)
    e = Join((a, b, k), ((c(0), c(1), c(2)),))
    assert ev(e) == {(1, 1, 1): 2}
    assert ev(Join((), ())) == {(): 1}
    assert ev(Join((a,), ((c(0), lit(2)),))) == {(2,): 1}
