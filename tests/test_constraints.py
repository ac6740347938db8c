"""PRIMARY KEY, UNIQUE and CHECK are enforced in the one table write path (``Writer.apply`` /
``Writer.commit``, ``mzlite.constraints``) by every statement shape that writes: single and
multi-row INSERT, executemany, UPDATE (general and keyed fast paths), transactions.  The
SQL-level cases, checked against PostgreSQL 15, are in ``slt/test/constraints.slt``."""
import pytest

import mzlite


def _setup(con):
    con.execute("CREATE TABLE t (id int PRIMARY KEY, email text UNIQUE, qty int CHECK (qty >= 0))")
    con.execute("INSERT INTO t VALUES (1, 'a@x', 1), (2, 'b@x', 2)")


def _rows(con):
    return sorted(con.execute("SELECT * FROM t").fetchall())


def test_primary_key_refused_with_postgres_message(con):
    """Sabotage seen red: ``TableConstraints.validate`` returning before the key loop (the
    duplicate was written)."""
    _setup(con)
    with pytest.raises(mzlite.IntegrityError) as ei:
        con.execute("INSERT INTO t VALUES (1, 'c@x', 3)")
    assert ei.value.sqlstate == "23505"
    assert str(ei.value) == 'duplicate key value violates unique constraint "t_pkey"'
    assert ei.value.detail == "Key (id)=(1) already exists."
    assert _rows(con) == [(1, "a@x", 1), (2, "b@x", 2)]


def test_check_refused_with_failing_row(con):
    """Sabotage seen red: skipping the CHECK loop in ``validate``."""
    _setup(con)
    with pytest.raises(mzlite.IntegrityError) as ei:
        con.execute("INSERT INTO t VALUES (3, NULL, -1)")
    assert ei.value.sqlstate == "23514"
    assert str(ei.value) == 'new row for relation "t" violates check constraint "t_qty_check"'
    assert ei.value.detail == "Failing row contains (3, null, -1)."


def test_executemany_insert_and_update(con):
    """executemany's one-write paths (``bulk.insert_many``, ``modify_fast``) reach the check:
    a duplicate among the parameter sets, or an update onto another row's key, writes nothing.
    Sabotage seen red: ``Writer._commit`` validating only outside ``consolidated`` writes."""
    _setup(con)
    cur = con.cursor()
    with pytest.raises(mzlite.IntegrityError):
        cur.executemany("INSERT INTO t VALUES (?, ?, ?)", [(3, "c@x", 0), (4, "c@x", 0)])
    con.execute("CREATE INDEX t_id ON t (id)")
    with pytest.raises(mzlite.IntegrityError):
        cur.executemany("UPDATE t SET email = ? WHERE id = ?", [("z@x", 1), ("z@x", 2)])
    with pytest.raises(mzlite.IntegrityError):
        con.execute("UPDATE t SET email = ? WHERE id = ?", ("b@x", 1))
    assert _rows(con) == [(1, "a@x", 1), (2, "b@x", 2)]
    cur.executemany("UPDATE t SET email = ? WHERE id = ?", [("y@x", 1), ("a@x", 2)])  # a swap is fine
    assert _rows(con) == [(1, "y@x", 1), (2, "a@x", 2)]


def test_key_counts_follow_deletes_and_updates(con):
    """The key index is maintained with the table: a deleted or updated-away key is free
    again.  Sabotage seen red: not calling ``applied`` after a commit (no committed key was
    counted, so the duplicate at the end was written)."""
    _setup(con)
    con.execute("DELETE FROM t WHERE id = 1")
    con.execute("INSERT INTO t VALUES (1, 'a@x', 5)")
    con.execute("UPDATE t SET id = 10 WHERE id = 2")
    con.execute("INSERT INTO t VALUES (2, 'q@x', 0)")
    assert _rows(con) == [(1, "a@x", 5), (2, "q@x", 0), (10, "b@x", 2)]
    with pytest.raises(mzlite.IntegrityError):
        con.execute("INSERT INTO t VALUES (10, 'r@x', 0)")


def test_transaction_statements_and_commit(connect):
    """Inside a transaction a statement is validated against the committed rows plus the
    transaction's earlier writes; COMMIT validates again against the state it commits onto
    (another connection may have committed the same key meanwhile).  Sabotage seen red:
    ``Writer.commit`` committing without ``validate`` (both rows with id 3 were kept)."""
    a = connect()
    _setup(a)
    b = a.database.connect()
    a.execute("BEGIN")
    a.execute("INSERT INTO t VALUES (3, 'c@x', 0)")
    with pytest.raises(mzlite.IntegrityError):
        a.execute("INSERT INTO t VALUES (3, 'd@x', 0)")
    a.execute("ROLLBACK")
    a.execute("BEGIN")
    a.execute("INSERT INTO t VALUES (3, 'c@x', 0)")
    b.execute("INSERT INTO t VALUES (3, 'other@x', 0)")
    with pytest.raises(mzlite.IntegrityError):
        a.execute("COMMIT")
    assert _rows(a) == [(1, "a@x", 1), (2, "b@x", 2), (3, "other@x", 0)]
    b.close()


def test_refused_definitions(con):
    """What mzlite cannot enforce is refused when the table is created, never accepted and
    ignored: REFERENCES, EXCLUDE, identity columns (SQLite's AUTOINCREMENT translates to
    one), deferrable keys."""
    for sql in ("CREATE TABLE c (a int REFERENCES t (id))",
                "CREATE TABLE c (a int, FOREIGN KEY (a) REFERENCES t (id))",
                "CREATE TABLE c (a int GENERATED ALWAYS AS IDENTITY)",
                "CREATE TABLE c (a int PRIMARY KEY DEFERRABLE)"):
        with pytest.raises(mzlite.NotSupportedError) as ei:
            con.execute(sql)
        assert ei.value.sqlstate == "0A000", sql
    con.execute("SET sql_dialect = sqlite")
    with pytest.raises(mzlite.NotSupportedError) as ei:
        con.execute("CREATE TABLE c (id INTEGER PRIMARY KEY AUTOINCREMENT, x TEXT)")
    assert "AUTOINCREMENT" in str(ei.value)


def test_failed_multi_statement_string_releases_its_keys(con):
    """The undo of a failed multi-statement string moves the key counts back, so its keys
    are free again.  Sabotage seen red: ``rollback_implicit`` not calling ``applied`` (the
    second insert of key 3 was refused)."""
    _setup(con)
    with pytest.raises(mzlite.DataError):
        con.execute("INSERT INTO t VALUES (3, 'c@x', 0); SELECT 1 / 0")
    con.execute("INSERT INTO t VALUES (3, 'c@x', 0)")
    assert _rows(con) == [(1, "a@x", 1), (2, "b@x", 2), (3, "c@x", 0)]


def test_copy_from_is_checked(con):
    """COPY FROM goes through the same write path: a key repeated inside the COPY or against
    a committed row, or a failing CHECK, refuses the whole COPY (nothing of it is written),
    outside and inside a transaction.  Sabotage seen red: ``Writer._commit`` committing
    without ``validate`` (the COPY's duplicate rows were written)."""
    _setup(con)
    cur = con.cursor()
    for data, sqlstate in ((b"3\tc@x\t0\n3\td@x\t0\n", "23505"), (b"4\td@x\t0\n1\te@x\t0\n", "23505"),
                           (b"5\tf@x\t-1\n", "23514")):
        with pytest.raises(mzlite.IntegrityError) as ei:
            with cur.copy("COPY t FROM STDIN") as copy:
                copy.write(data)
        assert ei.value.sqlstate == sqlstate
    assert _rows(con) == [(1, "a@x", 1), (2, "b@x", 2)]
    con.execute("BEGIN")
    with cur.copy("COPY t FROM STDIN") as copy:
        copy.write(b"3\tc@x\t0\n")
    with pytest.raises(mzlite.IntegrityError):
        with cur.copy("COPY t FROM STDIN") as copy:
            copy.write(b"3\tz@x\t0\n")
    con.execute("ROLLBACK")
    assert _rows(con) == [(1, "a@x", 1), (2, "b@x", 2)]
