"""Every statement does what it says or refuses clearly: multi-statement strings are one
implicit transaction, clauses mzlite cannot honour are refused, and shapes that used to
crash answer.  SQL-level cases checked against PostgreSQL 15 live in
``slt/test/statement_honesty.slt``."""
import pytest

import mzlite


def _table(con):
    con.execute("CREATE TABLE t (a int, b text)")
    con.execute("INSERT INTO t VALUES (1, 'one')")


def _rows(con):
    return sorted(con.execute("SELECT * FROM t").fetchall())


@pytest.mark.parametrize("sql", [
    "INSERT INTO t VALUES (10, 'x'); SELECT 1 / 0",
    "DELETE FROM t; SELECT 1 / 0",
    "UPDATE t SET a = a + 100; SELECT nope FROM t",
    "INSERT INTO t VALUES (2, 'two'); UPDATE t SET a = a * 10; SELECT * FROM t; SELECT 1 / 0",
])
def test_multi_statement_string_is_atomic(con, sql):
    """A failing statement undoes the writes of the string's earlier statements, as
    PostgreSQL's implicit transaction does.  Sabotage seen red: not calling
    ``Writer.rollback_implicit`` in ``Database._execute_sql`` (the insert was kept)."""
    _table(con)
    with pytest.raises(mzlite.Error):
        con.execute(sql)
    assert _rows(con) == [(1, "one")]


def test_multi_statement_reads_its_own_writes_and_commits(con):
    _table(con)
    cur = con.execute("INSERT INTO t VALUES (2, 'two'); INSERT INTO t VALUES (3, 'three'); SELECT count(*) FROM t")
    assert cur.fetchall() == [(3,)]
    assert len(_rows(con)) == 3


def test_transaction_statement_ends_the_implicit_transaction(con):
    """What a COMMIT inside the string committed stays, as in PostgreSQL."""
    _table(con)
    with pytest.raises(mzlite.DataError):
        con.execute("INSERT INTO t VALUES (2, 'two'); BEGIN; INSERT INTO t VALUES (3, 'x'); COMMIT; "
                    "INSERT INTO t VALUES (4, 'y'); SELECT 1 / 0")
    assert _rows(con) == [(1, "one"), (2, "two"), (3, "x")]


def test_executescript_keeps_sqlite3_semantics(con):
    """``executescript`` is sqlite3's: statements before a failing one stay applied."""
    _table(con)
    with pytest.raises(mzlite.DataError):
        con.executescript("INSERT INTO t VALUES (2, 'two'); SELECT 1 / 0")
    assert _rows(con) == [(1, "one"), (2, "two")]


def test_mz_now_over_an_indexed_table(con):
    """A fast-path peek whose map is ``mz_now()`` alone compiles (``expr.compile``'s
    temporary renaming read the last emitted line of an empty body).  Sabotage seen red:
    dropping the ``v != "time"`` and ``gen.lines`` guards (InternalError: IndexError)."""
    con.execute("CREATE TABLE n (a int); CREATE INDEX ni ON n (a); INSERT INTO n VALUES (1)")
    (now,), = con.execute("SELECT mz_now() FROM n").fetchall()
    assert int(now) > 0
    assert con.execute("SELECT mz_now() > 0, a FROM n").fetchall() == [(True, 1)]


def test_megabyte_numeric_literal_is_refused_not_computed(con):
    """A 1 MB numeric literal is checked against PostgreSQL's numeric range on its text (22003),
    never converted first (converting it through ``int`` was quadratic: no answer within a
    minute).  Sabotage seen red: removing the range check in ``ExprContext._numeric_literal``
    (the literal was accepted)."""
    with pytest.raises(mzlite.DataError) as ei:
        con.execute("SELECT " + "9" * 1_048_581)
    assert ei.value.sqlstate == "22003" and str(ei.value) == "value overflows numeric format"
    assert con.execute("SELECT " + "9" * 30).fetchall()[0][0] == int("9" * 30)


def test_update_delete_returning(con):
    """RETURNING on UPDATE and DELETE returns the rows (it returned nothing).  Sabotage seen
    red: ``writes._returning`` ignoring ``plan.returning``."""
    _table(con)
    cur = con.execute("UPDATE t SET a = a + 1 RETURNING a, b")
    assert cur.fetchall() == [(2, "one")] and cur.rowcount == 1
    assert [d[0] for d in cur.description] == ["a", "b"]
    con.execute("CREATE INDEX t_a ON t (a)")
    assert con.execute("DELETE FROM t WHERE a = ? RETURNING b", (2,)).fetchall() == [("one",)]
    assert _rows(con) == []


def test_version_and_paramstyle_hint(con):
    """``mzlite.__version__`` is the package's; psycopg's placeholders get a hint naming the
    paramstyle.  Sabotage seen red: ``_paramstyle_hint`` re-raising without the hint."""
    import tomllib
    import pathlib
    meta = tomllib.loads((pathlib.Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert mzlite.__version__ == meta["project"]["version"]
    assert mzlite.paramstyle == "qmark"
    for sql, params in (("SELECT %s", (1,)), ("SELECT %(x)s", None)):
        with pytest.raises(mzlite.ProgrammingError) as ei:
            con.execute(sql, params)
        assert ei.value.sqlstate == "42601" and "qmark" in ei.value.hint
    assert con.execute("SELECT 7 %s FROM (SELECT 4 AS s) q").fetchall() == [(3,)]  # modulo stays modulo


def test_messages_name_the_value_and_the_translation(con):
    """An out-of-range mz_timestamp names the value; a syntax error in a dialect's
    translation says it is in the translation and shows it (it pointed at text the user
    never wrote)."""
    for sql, value in (("SELECT '-1'::mz_timestamp", '"-1"'), ("SELECT (-5)::mz_timestamp", "-5")):
        with pytest.raises(mzlite.DataError) as ei:
            con.execute(sql)
        assert ei.value.sqlstate == "22003" and value in str(ei.value)
    con.execute("SET sql_dialect = duckdb")
    with pytest.raises(mzlite.ProgrammingError) as ei:
        con.execute("SELECT {'a': 1}")
    assert "translation" in str(ei.value) and "STRUCT" in ei.value.detail and ei.value.position is None


def test_multi_statement_string_drops_what_it_created(con):
    """A failing string leaves no object behind: the tables, views and indexes it created
    are dropped.  Sabotage seen red: not calling ``_drop_created`` (``x`` stayed)."""
    _table(con)
    with pytest.raises(mzlite.DataError):
        con.execute("CREATE TABLE x (a int); INSERT INTO x VALUES (1); CREATE VIEW xv AS SELECT * FROM x; "
                    "CREATE INDEX xi ON x (a); INSERT INTO t VALUES (5, 'five'); SELECT 1 / 0")
    with pytest.raises(mzlite.ProgrammingError):
        con.execute("SELECT * FROM x")
    assert _rows(con) == [(1, "one")]
    con.execute("CREATE TABLE x (a int); CREATE VIEW xv AS SELECT * FROM x")  # the names are free again


def test_bench_extra_is_declared_and_named():
    """The benchmarks' peers install with an extra the README names (DuckDB loads through numpy)."""
    import pathlib
    import tomllib
    root = pathlib.Path(__file__).parent.parent
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("numpy") for d in extras["bench"]) and any(d.startswith("duckdb") for d in extras["bench"])
    assert ".[bench]" in (root / "README.md").read_text()


def test_driver_settings_with_no_effect_are_refused(con):
    """Other drivers' connection settings mzlite does not have are refused, not set and
    ignored (``con.autocommit = False`` was accepted, and every statement still committed).
    Sabotage: drop ``Connection.text_factory`` (mzlite/connection.py) -> ``con.text_factory =
    bytes`` sets a plain attribute and raises nothing."""
    con.autocommit = True
    con.isolation_level = None
    con.text_factory = str
    assert con.autocommit is True and con.isolation_level is None and con.row_factory is None
    assert con.text_factory is str
    for attr, value in (("autocommit", False), ("isolation_level", "DEFERRED"), ("row_factory", dict),
                        ("read_only", True), ("text_factory", bytes)):
        with pytest.raises(mzlite.NotSupportedError):
            setattr(con, attr, value)


def test_an_invalid_parameter_value_names_its_parameter(con):
    """``invalid value for parameter "name": "value"`` names the parameter being set (an
    ALTER SYSTEM SET of compaction_window_ms was reported as statement_timeout's, and a bad
    boolean showed a Python repr with no name).  Sabotage seen red: ``_parsed`` naming a
    fixed parameter."""
    for sql, name, value in (("SET statement_timeout = 'abc'", "statement_timeout", "abc"),
                             ("ALTER SYSTEM SET compaction_window_ms = 'x'", "compaction_window_ms", "x"),
                             ("ALTER SYSTEM SET enable_compute_interactive_runtime = 'maybe'",
                              "enable_compute_interactive_runtime", "maybe"),
                             ("SET transaction_isolation = 'bogus'", "transaction_isolation", "bogus")):
        with pytest.raises(mzlite.DataError) as ei:
            con.execute(sql)
        assert ei.value.sqlstate == "22023" and str(ei.value) == f'invalid value for parameter "{name}": "{value}"'
    with pytest.raises(mzlite.DataError, match='parameter "enable_compute_interactive_runtime": "maybe"'):
        mzlite.connect(system_parameters={"enable_compute_interactive_runtime": "maybe"})


def test_alter_system_reset_all_returns_to_the_opening_values():
    """``ALTER SYSTEM RESET ALL`` (and ``RESET name``) returns every system parameter to the
    value the database was opened with (``connect(system_parameters=)``), as Materialize's
    RESET returns to its system parameter defaults; the slt runner's per-file reset relies on
    it.  Sabotage seen red: ``ddl.alter_system`` taking ``all`` as a parameter's name (42704
    unrecognized configuration parameter "all"), and ``SystemParameters.set(name, None)``
    going to the built-in default (2000 came back as 1000)."""
    con = mzlite.connect(system_parameters={"compaction_window_ms": 2000,
                                            "enable_compute_interactive_runtime": False})
    try:
        con.execute("ALTER SYSTEM SET compaction_window_ms = 5000")
        con.execute("ALTER SYSTEM SET enable_compute_interactive_runtime = true")
        con.execute("ALTER SYSTEM RESET ALL")
        assert con.execute("SHOW compaction_window_ms").fetchone()[0] == "2000"
        assert con.execute("SHOW enable_compute_interactive_runtime").fetchone()[0] == "off"
        con.execute("ALTER SYSTEM SET compaction_window_ms = 5000")
        con.execute("ALTER SYSTEM RESET compaction_window_ms")
        assert con.execute("SHOW compaction_window_ms").fetchone()[0] == "2000"
        con.execute("CREATE TABLE t (a int)")
        con.execute("INSERT INTO t VALUES (1)")
        assert con.execute("SELECT a FROM t").fetchall() == [(1,)]  # the replica restarted, serving
    finally:
        con.close()
