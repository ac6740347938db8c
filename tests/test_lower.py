"""Lowering (planner/lower.py): DataflowDescriptions for peeks, MVs, indexes, subscribes.

is_single_time()/is_peek_dataflow() are asserted for each case exactly as DESIGN.md
defines them.  Sabotages tried (each turned a named test red, then was restored):
- peek dataflow with until=None at finite t -> test_peek_dataflow_at_finite_time
- until = step_forward(t) at MAX (OverflowError) -> test_peek_dataflow_at_max
- source import preferred over an existing index -> test_index_import_preferred_over_source
- first index instead of the join-key index -> test_join_prefers_index_on_join_key
- view not inlined -> test_plain_view_is_inlined_and_results_unchanged
"""
import pytest

from compute.dataflow import BuildDesc, IndexExport, IndexImport, SinkExport, SourceImport
from expr.relation import Filter, Get, Join, Project
from expr.scalar import Call, Column, Literal
from planner.lower import (SimpleCatalog, build_dataflow, build_index_dataflow,
                           build_materialized_view_dataflow, build_peek_dataflow, build_subscribe_dataflow)
from planner.peek import AvailableIndex
from repr.ids import transient, user
from repr.timestamp import MAX
from tests.support import reference


@pytest.fixture(autouse=True)
def _fallback(monkeypatch):
    monkeypatch.setattr(reference, "default_compiler", lambda: reference.fallback_compile)


T1, T2, VIEW, MV = user(1), user(2), user(3), user(4)
IX_T2_0, IX_T2_1 = user(10), user(11)
CAT = SimpleCatalog(
    storage={T1, T2, MV},
    indexes={T2: [AvailableIndex(IX_T2_0, (Column(0),), 2), AvailableIndex(IX_T2_1, (Column(1),), 2)]},
    views={VIEW: Filter(Get(T1, 2), (Call("eq", (Column(1), Literal(1, "int4")), "bool"),))},
)
t1, t2 = Get(T1, 2), Get(T2, 2)


def peek(expr, as_of):
    return build_peek_dataflow(expr, view_id=transient(1), index_id=transient(2), as_of=as_of, catalog=CAT)


def test_peek_dataflow_at_finite_time():
    d = peek(t1, 5)
    assert (d.as_of, d.until) == (5, 6)
    assert d.is_single_time() and d.is_peek_dataflow()
    assert d.source_imports == (SourceImport(T1, 2),)
    assert d.objects_to_build == (BuildDesc(transient(1), t1),)
    assert d.index_exports == (IndexExport(transient(2), transient(1), (Column(0), Column(1)), 2),)


def test_peek_dataflow_at_max():
    d = peek(t1, MAX)
    assert d.until is None
    assert d.is_single_time() and d.is_peek_dataflow()


def test_peek_dataflow_requires_transient_ids():
    with pytest.raises(ValueError):
        build_peek_dataflow(t1, view_id=user(50), index_id=transient(2), as_of=1, catalog=CAT)


def test_index_import_preferred_over_source():
    d = peek(t2, 3)
    assert d.source_imports == ()
    assert [i.id for i in d.index_imports] == [IX_T2_0]


def test_join_prefers_index_on_join_key():
    j = Join((t1, t2), ((Column(0), Column(3)),))
    d = peek(j, 3)
    assert [i.id for i in d.index_imports] == [IX_T2_1]
    assert [s.id for s in d.source_imports] == [T1]


def test_plain_view_is_inlined_and_results_unchanged():
    q = Project(Get(VIEW, 2), (0,))
    d = peek(q, 3)
    assert [s.id for s in d.source_imports] == [T1]
    data = {T1: {(1, 1): 1, (2, 0): 1}}
    assert reference.evaluate(d.objects_to_build[0].plan, data) == {(1,): 1}


def test_unknown_collection_is_a_lookup_error():
    with pytest.raises(LookupError):
        peek(Get(user(99), 1), 1)


def test_materialized_view_dataflow():
    d = build_materialized_view_dataflow(t1, id=MV, as_of=7, catalog=CAT)
    assert d.sink_exports == (SinkExport(MV, MV, "materialized_view", 2),)
    assert d.until is None and not d.is_single_time() and not d.is_peek_dataflow()
    assert d.objects_to_build[0].id == MV


def test_index_on_table_and_on_view():
    d = build_index_dataflow(T1, index_id=user(20), key=(Column(0),), arity=2, as_of=0, catalog=CAT)
    assert d.source_imports == (SourceImport(T1, 2),)
    assert d.objects_to_build == (BuildDesc(T1, t1),)
    assert d.index_exports == (IndexExport(user(20), T1, (Column(0),), 2),)
    assert not d.is_peek_dataflow()
    dv = build_index_dataflow(VIEW, index_id=user(21), key=(Column(1),), arity=2, as_of=0, catalog=CAT)
    assert dv.objects_to_build[0].id == VIEW and dv.source_imports == (SourceImport(T1, 2),)
    assert not dv.is_peek_dataflow()


def test_subscribe_is_never_a_peek_dataflow():
    d = build_subscribe_dataflow(t1, sink_id=transient(3), as_of=4, up_to=5, catalog=CAT)
    assert d.is_single_time() and not d.is_peek_dataflow()
    assert d.sink_exports[0].kind == "subscribe" and dict(d.sink_exports[0].options)["up_to"] == 5
    forever = build_subscribe_dataflow(t1, sink_id=transient(3), as_of=4, catalog=CAT)
    assert forever.until is None and not forever.is_single_time() and not forever.is_peek_dataflow()


def test_build_dataflow_dispatch():
    d = build_dataflow("peek", expr=t1, view_id=transient(1), index_id=transient(2), as_of=1, catalog=CAT)
    assert d.is_peek_dataflow()
    d = build_dataflow("index", on_id=T1, index_id=user(20), key=(Column(0),), arity=2, as_of=0, catalog=CAT)
    assert d.index_exports[0].id == user(20)
    with pytest.raises(ValueError):
        build_dataflow("nope")


def test_join_key_seen_through_projections():
    """After projection pushdown a join input is Project(Get): the key still maps to the Get.
    Sabotage: only bare Gets considered -> the first index (by id) is chosen -> red."""
    j = Join((t1, Project(t2, (1,))), ((Column(0), Column(2)),))
    d = build_peek_dataflow(j, view_id=transient(1), index_id=transient(2), as_of=3, catalog=CAT,
                            optimize_plan=False)
    assert [i.id for i in d.index_imports] == [IX_T2_1]


def test_indexed_join_input_is_lifted_to_a_bare_get():
    """The join operator reuses an imported arrangement only for a bare Get keyed by the
    join key.  Sabotage: lowering without lift_join_input_mfps leaves Project(Filter(Get))
    under the join -> red."""
    from expr.relation import Map
    from planner.lower import lift_join_input_mfps
    notnull = Call("is_not_null", (Column(1),), "bool")
    right = Project(Map(Filter(t2, (notnull,)), (Call("add", (Column(0), Column(1)), "int4"),)), (2, 1))
    j = Join((t1, right), ((Column(0), Column(3)),))
    d = build_peek_dataflow(j, view_id=transient(1), index_id=transient(2), as_of=3, catalog=CAT,
                            optimize_plan=False)
    plan = d.objects_to_build[0].plan
    joins = [n for n in _walk(plan) if isinstance(n, Join)]
    assert joins and t2 in joins[0].inputs
    data = {T1: {(1, 1): 1, (2, None): 1, (3, 3): 2}, T2: {(5, 1): 1, (6, 3): 1, (7, None): 1}}
    assert reference.evaluate(plan, data) == reference.evaluate(j, data) != {}


def test_join_input_not_lifted_when_keyed_on_a_computed_column():
    from expr.relation import Map
    from planner.lower import lift_join_input_mfps
    right = Map(t2, (Call("add", (Column(0), Column(1)), "int4"),))
    j = Join((t1, right), ((Column(0), Column(4)),))
    assert lift_join_input_mfps(j, (IndexImport(IX_T2_1, T2, (Column(1),), 2),)) == j


def test_lifting_leaves_results_unchanged_on_random_plans():
    import random

    from planner.lower import lift_join_input_mfps
    from planner.optimize import optimize
    from tests.support.random_plans import TABLES, random_data, random_plan
    imports = tuple(IndexImport(user(100 + g.n), g, (Column(c),), a)
                    for g, a in TABLES.items() for c in range(a))
    changed = 0
    for s in range(300):
        plan = optimize(random_plan(s, random.Random(s).randint(1, 4)))
        lifted = lift_join_input_mfps(plan, imports)
        changed += lifted != plan
        data = random_data(random.Random(s + 7))
        assert reference.evaluate_with_errors(lifted, data)[0] == reference.evaluate_with_errors(plan, data)[0], s
    assert changed > 10


def _walk(e):
    from expr.relation import children
    yield e
    for k in children(e):
        yield from _walk(k)
