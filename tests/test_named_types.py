"""Named list and map types (CREATE TYPE ... AS LIST|MAP) beyond SQL text: a durable database
refuses them (they are not persisted, and a stored CREATE TABLE naming one could not be
replayed), and a refused CREATE TYPE changes nothing."""
from __future__ import annotations

import pytest

import mzlite


def test_durable_database_refuses_create_type(tmp_path):
    """Sabotage: drop the ``db.path`` check in ``mzlite.namespaces.create_named_type`` and
    the statement succeeds here, then a reopened database cannot replay the table."""
    con = mzlite.connect(str(tmp_path / "db"))
    with pytest.raises(mzlite.NotSupportedError) as ei:
        con.execute("CREATE TYPE m AS MAP (KEY TYPE = text, VALUE TYPE = int4)")
    assert ei.value.sqlstate == "0A000"
    with pytest.raises(mzlite.ProgrammingError) as ei:
        con.execute("CREATE TABLE t (x m)")
    assert ei.value.sqlstate == "42704"
    con.close()


def test_in_memory_named_types_and_other_create_type_forms():
    con = mzlite.connect()
    con.execute("CREATE TYPE m AS MAP (KEY TYPE = text, VALUE TYPE = int4)")
    assert con.execute("SELECT '{a=>1}'::m -> 'a'").fetchall() == [(1,)]
    with pytest.raises(mzlite.Error) as ei:  # a composite type is not a named list or map
        con.execute("CREATE TYPE c AS (a int)")
    assert ei.value.sqlstate == "0A000"


def test_drop_type_cascade_drops_the_items_naming_it_in_dependency_order():
    """DROP TYPE ... CASCADE drops the tables and materialized views whose definition names
    the type, their views and indexes with them; an item that only has a column *named*
    like the type stays.  Sabotage: drop the ``check_drop`` loop in
    ``planner.bind_types.drop_named_type`` and ``t``, ``v`` and ``m`` outlive their type;
    match the type as a bare word in the text instead of parsing (``_names_type``) and
    ``u`` (a column called ``l``) is dropped too; match a source's definition as text and
    ``DROP TYPE counter`` is refused for ``LOAD GENERATOR COUNTER``."""
    con = mzlite.connect()
    con.execute("CREATE TYPE counter AS LIST (ELEMENT TYPE = int4)")
    con.execute("CREATE SOURCE ctr FROM LOAD GENERATOR COUNTER")
    con.execute("DROP TYPE counter")  # a source's definition names no type
    con.execute("DROP SOURCE ctr")
    for q in ("CREATE TYPE l AS LIST (ELEMENT TYPE = int4)", "CREATE TABLE t (a l, b int)",
              "CREATE TABLE u (l int)", "CREATE VIEW v AS SELECT b FROM t", "CREATE DEFAULT INDEX ON v",
              "CREATE MATERIALIZED VIEW m AS SELECT NULL::l AS x FROM u", "CREATE INDEX ui ON u (l)",
              "INSERT INTO t VALUES ('{1}', 1)"):
        con.execute(q)
    with pytest.raises(mzlite.Error) as ei:
        con.execute("DROP TYPE l")
    assert ei.value.sqlstate == "2BP01"
    assert con.execute("SELECT b FROM v").fetchall() == [(1,)]
    con.execute("DROP TYPE l CASCADE")
    assert sorted(con.execute("SHOW OBJECTS").fetchall()) == [("u", "table", ""), ("ui", "index", "")]
    with pytest.raises(mzlite.Error) as ei:
        con.execute("SELECT '{1}'::l")
    assert ei.value.sqlstate == "42704"
    con.execute("CREATE TYPE l AS LIST (ELEMENT TYPE = text)")  # the name is free again
    con.execute("CREATE TABLE t (a l)")
    con.close()
