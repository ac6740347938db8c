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
