"""ALTER SOURCE ... RENAME in a data directory: the source comes back under its new name and
its progress collection under the name it had (a rename renames the source only, as in
Materialize).  Sabotage: without the subsource rename in ``catalog_store.replay`` the
reopened progress collection was called ``renamed_progress``, a name it never had."""
import mzlite


def test_a_renamed_source_reopens_with_its_subsources_names(tmp_path):
    con = mzlite.connect(str(tmp_path))
    con.execute("CREATE SOURCE ticks FROM LOAD GENERATOR COUNTER (TICK INTERVAL '1h', UP TO 1)")
    con.execute("ALTER SOURCE ticks RENAME TO renamed")
    before = sorted(con.execute("SELECT name FROM (SHOW SOURCES)").fetchall())
    con.close()
    con = mzlite.connect(str(tmp_path))
    assert sorted(con.execute("SELECT name FROM (SHOW SOURCES)").fetchall()) == before == [("renamed",),
                                                                                           ("ticks_progress",)]
    assert con.execute("SELECT counter FROM renamed").fetchall() == [(1,)]
    con.execute("ALTER SOURCE renamed RENAME TO again")  # the replayed text names it anew
    con.close()
    con = mzlite.connect(str(tmp_path))
    assert sorted(con.execute("SELECT name FROM (SHOW SOURCES)").fetchall()) == [("again",), ("ticks_progress",)]
    con.close()


def test_a_data_directory_refuses_to_rename_what_a_definition_names(tmp_path):
    """A dependent's definition names the item by its old name and a data directory replays
    it as written, so there a rename with such dependents is refused (0A000), never left to
    break the next open; in memory it is accepted (dependents are bound by id).  Sabotage:
    without the check in ``namespaces.rename`` the rename was accepted (and, tried by hand,
    the next open failed: XX001, cannot restore view 'v': unknown catalog item 't')."""
    con = mzlite.connect(str(tmp_path))
    con.execute("CREATE TABLE t (a int)")
    con.execute("CREATE VIEW v AS SELECT a FROM t")
    con.execute("CREATE SECRET pw AS 'x'")
    con.execute("CREATE CONNECTION pg TO POSTGRES (HOST 'localhost', USER 'u', PASSWORD SECRET pw) "
                "WITH (VALIDATE = false)")
    for sql in ("ALTER TABLE t RENAME TO u", "ALTER SECRET pw RENAME TO pw2"):
        try:
            con.execute(sql)
        except mzlite.NotSupportedError as e:
            assert e.sqlstate == "0A000" and "depends on it" in str(e)
        else:
            raise AssertionError(f"{sql} was accepted")
    con.execute("ALTER CONNECTION pg RENAME TO upstream")  # nothing names it
    con.execute("ALTER VIEW v RENAME TO w")
    con.close()
    con = mzlite.connect(str(tmp_path))
    assert con.execute("SELECT name FROM (SHOW VIEWS)").fetchall() == [("w",)]
    assert con.execute("SELECT name FROM (SHOW CONNECTIONS)").fetchall() == [("upstream",)]
    con.close()
    mem = mzlite.connect()
    mem.execute("CREATE TABLE t (a int)")
    mem.execute("CREATE VIEW v AS SELECT a FROM t")
    mem.execute("ALTER TABLE t RENAME TO u")
    assert mem.execute("SELECT count(*) FROM v").fetchall() == [(0,)]
    mem.close()
