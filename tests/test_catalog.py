"""The catalog: name resolution, dependents in drop order, the DROP dependency check.

Sabotage runs (each made once, saw red, restored):
- ``check_drop`` without the dependents check lets ``DROP TABLE t`` through with a view on
  it (``test_drop_blocked_by_dependent_view`` red);
- ``dependents`` returning pre-order (without its reordering pass) fails ``test_dependents_in_drop_order``.
"""
from __future__ import annotations

import pytest

from planner.catalog import Catalog, CatalogItem, ColumnDef
from repr.ids import user
from sql import errors


def make():
    c = Catalog()
    c.add(CatalogItem(user(1), "t", "table", (ColumnDef("a", "int4"),)))
    c.add(CatalogItem(user(2), "v", "view", (ColumnDef("a", "int4"),), depends_on=frozenset({user(1)})))
    c.add(CatalogItem(user(3), "m", "materialized_view", (ColumnDef("a", "int4"),),
                      depends_on=frozenset({user(2), user(1)})))
    c.add(CatalogItem(user(4), "m_idx", "index", on_id=user(3), depends_on=frozenset({user(3)})))
    c.add(CatalogItem(user(5), "t_idx", "index", on_id=user(1), depends_on=frozenset({user(1)})))
    return c


def test_resolve_and_qualification():
    c = make()
    assert c.resolve("t").id == user(1)
    assert c.resolve(("public", "t")).id == user(1)
    assert c.resolve(("materialize", "public", "t")).id == user(1)
    assert c.try_resolve(("other", "t")) is None
    with pytest.raises(errors.Error) as e:
        c.resolve("nope", position=7)
    assert e.value.sqlstate == "42P01"
    assert e.value.message == "unknown catalog item 'nope'"  # Materialize's text
    assert e.value.position == 7


def test_names_are_unique():
    c = make()
    with pytest.raises(errors.Error) as e:
        c.add(CatalogItem(user(9), "v", "table"))
    assert e.value.sqlstate == "42P07"


def test_items_and_indexes():
    c = make()
    assert [i.name for i in c.items("index")] == ["m_idx", "t_idx"]
    assert [i.name for i in c.indexes_on(user(3))] == ["m_idx"]
    assert c.get(user(2)).name == "v"


def test_dependents_in_drop_order():
    c = make()
    deps = c.dependents(user(1))
    assert set(deps) == {user(2), user(3), user(4), user(5)}
    # everything comes before what it depends on
    for later, item in enumerate(deps):
        for dep in c.get(item).depends_on:
            if dep in deps:
                assert deps.index(dep) > later


def test_drop_blocked_by_dependent_view():
    c = make()
    with pytest.raises(errors.Error) as e:
        c.check_drop(user(1), cascade=False)
    assert e.value.sqlstate == "2BP01"
    assert e.value.message == "cannot drop table t: still depended upon by view v"


def test_drop_cascade_and_indexes_go_along():
    c = make()
    ids = c.check_drop(user(1), cascade=True)
    assert ids[-1] == user(1) and set(ids) == {user(1), user(2), user(3), user(4), user(5)}
    # an index does not block dropping its object
    assert c.check_drop(user(3), cascade=False) == [user(4), user(3)]


def test_remove():
    c = make()
    c.remove(user(4))
    assert c.try_resolve("m_idx") is None
    assert c.indexes_on(user(3)) == []
