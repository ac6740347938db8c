"""expr.interpret, the production evaluator of whole plans, against the test oracle
(``tests.support.reference``) and against the maintained operators whose semantics it shares;
and its two users, constant folding and the LetRec operator.

Sabotages seen red (each restored):
- ``_top_k`` ignoring the offset (``- rank`` for ``- max(rank, start)``) -> the random-plan
  agreement, both kinds;
- ``_join`` dropping its joined-row checks -> ``test_data_errors_agree_with_the_oracle``
  (the three-way class);
- ``Interpreter.eval`` not keeping what it prepared -> ``test_nodes_are_prepared_once``;
- ``expr.iterate.letrec_steps`` recording the bindings before evaluating the body ->
  ``test_letrec_op_continues_past_a_letrec_in_its_body`` (KeyError);
- ``_fold_relation`` ignoring the interpreter's errors -> ``test_fold_keeps_a_relation_that_errors``.
"""
from __future__ import annotations

import random

import pytest

from compute.render.letrec import LetRecOp, free_ids
from compute.render.reduce import ReduceOp
from expr import interpret
from expr.interpret import Interpreter, evaluate
from expr.relation import (AggregateExpr, ColumnOrder, Constant, FlatMap, Get, Join, Let, LetRec, LocalId,
                           Map, RecursionLimit, Reduce, TopK, Union)
from expr.scalar import Call, Column, Literal
from planner.optimize import fold_constants
from repr.ids import user
from tests.support import reference
from tests.support.random_plans import random_data, random_plan

T = user(1)


def c(i):
    return Column(i)


def lit(v, ty="int4"):
    return Literal(v, ty)


def div(a, b):
    return Call("div_int4", (a, b), "int4")


@pytest.mark.parametrize("windows", [False, True], ids=["plain", "windows"])
def test_agrees_with_the_oracle_on_random_plans(windows):
    """Rows and error rows, counts included, for random plans over random data (joins,
    reduces with DISTINCT aggregates, top-k, negation, lets, flat-maps, window stages)."""
    for s in range(250):
        plan = random_plan(s, random.Random(s).randint(1, 4), add_func="add_int4", windows=windows)
        data = random_data(random.Random(s + 10_000))
        assert evaluate(plan, data) == reference.evaluate_with_errors(plan, data), s


K = Constant((((0, 1), 1), ((2, 0), 2), ((None, 3), 1), ((4, 2), 1)), 2)

ERRING = {
    "map": Map(K, (div(lit(10), c(1)),)),
    "constant": Union((K, Constant((), 2, ("22012", "division by zero")))),
    "flat_map_step": FlatMap(K, "generate_series", (lit(1), lit(3), c(1)), 1),
    "let_read_twice": Let(LocalId(1), Map(K, (div(lit(1), c(1)),)),
                          Union((Get(LocalId(1), 3), Get(LocalId(1), 3)))),
    "sum_overflow": Reduce(Constant((((1, 2**62), 1), ((1, 2**62), 2), ((2, 1), 1)), 2), (c(0),),
                           (AggregateExpr("sum", c(1), False, "int8", "int8"),)),
    "top_k_negative": TopK(Union((K, Map(Constant((((9,), -1),), 1), (lit(9),)))), (), (ColumnOrder(0),), 2),
    "three_way_class": Join((K, K), ((c(0), c(2), div(lit(8), c(3))),)),
    "recursion_limit": LetRec((LocalId(2),), (Union((K, Get(LocalId(2), 2))),),
                              (RecursionLimit(3, return_at=False),), Get(LocalId(2), 2)),
}


@pytest.mark.parametrize("name", sorted(ERRING))
def test_data_errors_agree_with_the_oracle(name):
    """A data error is an error row with the failing row's multiplicity, never an exception.
    A join tests a class only on the pairs its hash key matched, where the oracle tests
    every pair of the cross product: the same error rows, fewer times."""
    oks, errs = evaluate(ERRING[name])
    assert errs, "each plan has a data error"
    want_oks, want_errs = reference.evaluate_with_errors(ERRING[name], {})
    assert oks == want_oks
    if isinstance(ERRING[name], Join):
        assert set(errs) == set(want_errs)
    else:
        assert errs == want_errs


def test_reduce_has_the_maintained_operators_semantics():
    """Where the oracle's Reduce is stricter (it refuses any negative member), the interpreter
    gives what ``ReduceOp`` maintains: retractions count, a negative total is the error."""
    rows = [((1, 5), 2), ((1, 7), -1), ((2, 3), -1)]
    aggs = (AggregateExpr("sum", c(1), False, "int4", "int8"), AggregateExpr("count", c(1), False, "int4", "int8"))
    op = ReduceOp((c(0),), aggs)
    op.push(0, rows, 0)
    want_oks, want_errs = op.flush(0)
    oks, errs = evaluate(Reduce(Get(T, 2), (c(0),), aggs), {T: dict(rows)})
    assert oks == dict(want_oks) == {(1, 3, 1): 1}
    assert errs == dict(want_errs) == {("XX000", "Non-positive multiplicity in Reduce"): 1}


def test_nodes_are_prepared_once(monkeypatch):
    """Interpreters sharing ``prepared`` compile each node once (the LetRec operator's
    re-derivations compile nothing)."""
    compiled = []
    real = interpret.compile_mfp_pairs
    monkeypatch.setattr(interpret, "compile_mfp_pairs", lambda mfp: compiled.append(mfp) or real(mfp))
    plan = Map(Get(T, 1), (Call("add_int4", (c(0), lit(1)), "int4"),))
    prepared: dict = {}
    for n in range(3):
        ev = Interpreter({T: {(n,): 1}}, prepared=prepared)
        assert ev.eval(plan, {}) == {(n, n + 1): 1}
    assert len(compiled) == 1


def _distinct(x):
    return Reduce(x, (c(0),), ())


def test_letrec_op_continues_past_a_letrec_in_its_body():
    """A monotone LetRec continues from its own bindings' fixpoint, even when its body holds
    another LetRec (whose bindings used to overwrite the outer ones)."""
    a, b = LocalId(1), LocalId(2)
    inner = LetRec((b,), (_distinct(Union((Get(a, 1), Get(b, 1)))),), (None,), Get(b, 1))
    outer = LetRec((a,), (_distinct(Union((Get(T, 1), Get(a, 1)))),), (None,), inner)
    op = LetRecOp(outer, free_ids(outer))
    assert op.monotone
    op.push(0, [((1,), 1)], 0)
    assert op.flush(0) == ([((1,), 1)], [])
    op.push(0, [((2,), 1)], 1)
    assert op.flush(1) == ([((2,), 1)], [])
    assert op.continued


def test_fold_uses_the_production_functions_and_windows():
    """Folding evaluates what the oracle's scalar fallback does not know (``upper``) and window
    functions, with the production code."""
    k = Constant(((("b",), 1), (("a",), 1)), 1)
    assert fold_constants(Map(k, (Call("upper", (c(0),), "text"),))) == \
        Constant(((("a", "A"), 1), (("b", "B"), 1)), 2)
    from expr.window import WindowFrame, WindowFunc
    from planner.windows import window_stage
    plan = window_stage(k, 1, (), [WindowFunc("row_number", (), (ColumnOrder(0),), WindowFrame(), "int8")])
    folded = fold_constants(plan)  # the window Reduce becomes its partition's list (a FlatMap is kept)
    partition = (("a", 1), ("b", 2))
    assert folded.input.input == Constant((((partition,), 1),), 1)


def test_fold_keeps_a_relation_that_errors():
    """A constant relation whose evaluation has a data error keeps its plan, so the error
    surfaces when it runs."""
    e = Map(Constant((((0,), 1), ((1,), 1)), 1), (div(lit(1), c(0)),))
    assert fold_constants(e) == e
