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
