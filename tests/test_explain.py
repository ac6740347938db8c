"""EXPLAIN renderings (planner/explain.py) and the runtime each read is attributed to.

Sabotages tried (each turned a named test red, then was restored):
- runtime chosen without asking desc.is_peek_dataflow() -> test_runtime_follows_is_peek_dataflow
- fast path named interactive with the flag off -> test_explain_fast_path_with_lookup
"""
import pytest

from expr.finishing import RowSetFinishing
from expr.relation import (AggregateExpr, ColumnOrder, Constant, Filter, Get, Join, Let, LocalId, Map,
                           Project, Reduce, TopK, Union)
from expr.scalar import Call, Column, Literal
from planner.explain import dataflow_runtime, explain_dataflow, explain_expr, explain_peek, explain_scalar
from planner.lower import SimpleCatalog, build_materialized_view_dataflow, build_peek_dataflow
from planner.peek import AvailableIndex, plan_peek
from repr.ids import transient, user
from repr.timestamp import MAX
from tests.support import reference


@pytest.fixture(autouse=True)
def _fallback(monkeypatch):
    monkeypatch.setattr(reference, "default_compiler", lambda: reference.fallback_compile)


T = user(1)
t = Get(T, 2)
CAT = SimpleCatalog(storage={T})


def test_scalar_rendering():
    e = Call("and", (Call("eq", (Column(0), Literal(5, "int4")), "bool"),
                     Call("is_not_null", (Column(1),), "bool")), "bool")
    assert explain_scalar(e) == "((#0 = 5) AND is_not_null(#1))"
    assert explain_scalar(Literal("a", "text")) == '"a"'
    assert explain_scalar(Literal(None, "int4")) == "null"


def test_tree_rendering_is_indented():
    l = LocalId(1)
    e = Project(Filter(Join((t, Reduce(t, (Column(0),), (AggregateExpr("count", Literal(True, "bool"), False, "bool", "int8"),))),
                            ((Column(0), Column(2)),)),
                       (Call("gt", (Column(3), Literal(1, "int4")), "bool"),)), (0, 3))
    assert explain_expr(e) == (
        "Project (#0, #3)\n"
        "  Filter (#3 > 1)\n"
        "    Join on=(#0 = #2)\n"
        "      Get u1\n"
        "      Reduce group_by=[#0] aggregates=[count(*)]\n"
        "        Get u1\n")
    w = explain_expr(Let(l, t, Union((Get(l, 2), TopK(Get(l, 2), (), (ColumnOrder(1, True),), 3)))))
    assert "With\n  cte l1 =\n    Get u1\nReturn\n  Union\n" in w and "TopK order_by=[#1 desc nulls_last] limit=3" in w
    assert explain_expr(Constant((), 1)) == "Constant <empty>\n"


def test_explain_fast_path_with_lookup():
    ix = user(2)
    p = plan_peek(Filter(t, (Call("eq", (Column(0), Literal(3, "int4")), "bool"),)), RowSetFinishing(),
                  {T: [AvailableIndex(ix, (Column(0),), 2)]})
    on = explain_peek(p, interactive_enabled=True)
    assert on.path == "fast path" and on.runtime == "interactive"
    assert "read index u2 on u1" in on.text and "lookup values=[(3)]" in on.text
    off = explain_peek(p, interactive_enabled=False)
    assert off.runtime == "maintenance"
    unpublished = explain_peek(p, interactive_enabled=True, index_published=False)
    assert unpublished.runtime == "maintenance"


def test_explain_peek_dataflow_and_constant():
    p = plan_peek(Reduce(t, (Column(0),), ()), RowSetFinishing(), {})
    d = build_peek_dataflow(p.expr, view_id=transient(1), index_id=transient(2), as_of=MAX, catalog=CAT)
    x = explain_peek(p, interactive_enabled=True, desc=d)
    assert x.path == "peek dataflow" and x.runtime == "interactive"
    assert "single_time=yes peek_dataflow=yes" in x.text and "until=[]" in x.text
    assert explain_peek(p, interactive_enabled=False, desc=d).runtime == "maintenance"
    c = explain_peek(plan_peek(Constant((((1,), 1),), 1), RowSetFinishing(), {}), interactive_enabled=True)
    assert c.path == "constant"


def test_runtime_follows_is_peek_dataflow():
    mv = build_materialized_view_dataflow(t, id=user(9), as_of=1, catalog=CAT)
    assert dataflow_runtime(mv, True) == "maintenance"
    assert "sink export u9 from u9 kind=materialized_view" in explain_dataflow(mv)
    pk = build_peek_dataflow(t, view_id=transient(1), index_id=transient(2), as_of=4, catalog=CAT)
    assert dataflow_runtime(pk, True) == "interactive" and dataflow_runtime(pk, False) == "maintenance"
