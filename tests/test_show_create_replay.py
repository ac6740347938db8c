"""SHOW CREATE text replays: executed into a fresh database, it makes an object whose SHOW
CREATE text is the same, for every kind of object SHOW CREATE prints (table, view,
materialized view, index, source; a source's subsources come back with it), and the
replayed object answers queries as the original does.  Also the options of CREATE
MATERIALIZED VIEW that text carries (``WITH (REFRESH = ON COMMIT)``) and the ones mzlite
refuses."""
from __future__ import annotations

import pytest

import mzlite

SETUP = (
    "CREATE CLUSTER c2 (SIZE = '1', REPLICATION FACTOR = 1)",
    "CREATE SCHEMA s",
    "CREATE TABLE t (a int NOT NULL, b text DEFAULT 'x', c varchar(5), d numeric(10, 2), e int[], "
    "PRIMARY KEY (a), CHECK (a > 0))",
    "CREATE TABLE s.u (k int, v text)",
    "CREATE VIEW v (x, y) AS SELECT a, b FROM t",
    "CREATE VIEW s.w AS SELECT k FROM s.u WHERE v IS NOT NULL",
    "CREATE MATERIALIZED VIEW m IN CLUSTER c2 AS SELECT a, count(*) AS n FROM t GROUP BY a",
    "CREATE MATERIALIZED VIEW s.mc (total) WITH (REFRESH ON COMMIT) AS SELECT sum(k) FROM s.u",
    "CREATE INDEX ti ON t (b)",
    "CREATE INDEX ui IN CLUSTER c2 ON s.u (k + 1)",
    "CREATE DEFAULT INDEX ON v",
    "CREATE SOURCE ctr FROM LOAD GENERATOR COUNTER",
)

#: (SHOW CREATE kind, name) of every object SETUP makes; a source's subsources are made by
#: replaying the source (CREATE SUBSOURCE is not a user's statement)
OBJECTS = (("TABLE", "t"), ("TABLE", "s.u"), ("VIEW", "v"), ("VIEW", "s.w"), ("MATERIALIZED VIEW", "m"),
           ("MATERIALIZED VIEW", "s.mc"), ("INDEX", "ti"), ("INDEX", "s.ui"), ("INDEX", "v_primary_idx"),
           ("SOURCE", "ctr"))


def _show(con, kind, name):
    return con.execute(f"SHOW CREATE {kind} {name}").fetchall()[0][1]


def test_show_create_text_replays_into_a_fresh_database_as_the_same_object():
    """Sabotage: take ``sql.mzviews.blank_materialized_view_options`` out of ``sql.parse``
    and replaying the materialized views fails (42601 at ``COMMIT``); drop ``_columns`` from
    ``mzlite.show_create`` and ``v`` comes back with columns ``a, b``; drop the TypeCast branch
    of ``mzlite.introspection.column_defaults`` and ``t``'s default comes back as
    ``CAST('x' AS text)``."""
    src, dst = mzlite.connect(), mzlite.connect()
    for q in SETUP:
        src.execute(q)
    src.execute("INSERT INTO t VALUES (1, 'p', 'q', 1.5, ARRAY[1])")
    src.execute("INSERT INTO s.u VALUES (1, 'a'), (2, NULL)")
    texts = {(kind, name): _show(src, kind, name) for kind, name in OBJECTS}
    for q in SETUP[:2]:  # the cluster and schema the objects live in (not SHOW CREATE's)
        dst.execute(q)
    for key in OBJECTS:
        dst.execute(texts[key])
    for key in OBJECTS:
        assert _show(dst, *key) == texts[key], key
    subsources = [r[0] for r in src.execute("SHOW SUBSOURCES ON ctr").fetchall()]
    assert subsources and [r[0] for r in dst.execute("SHOW SUBSOURCES ON ctr").fetchall()] == subsources
    for name in subsources:
        assert _show(dst, "SOURCE", name) == _show(src, "SOURCE", name)
    dst.execute("INSERT INTO t VALUES (1, 'p', 'q', 1.5, ARRAY[1])")
    dst.execute("INSERT INTO s.u VALUES (1, 'a'), (2, NULL)")
    for q in ("SELECT x, y FROM v", "SELECT * FROM m", "SELECT total FROM s.mc", "SELECT * FROM s.w",
              "SELECT b, c, d, e FROM t"):
        assert dst.execute(q).fetchall() == src.execute(q).fetchall(), q
    with pytest.raises(mzlite.Error) as ei:  # the CHECK came back with the table
        dst.execute("INSERT INTO t VALUES (-1, 'p', 'q', 1.5, NULL)")
    assert ei.value.sqlstate == "23514"
    src.close()
    dst.close()


@pytest.mark.parametrize("option", ["REFRESH = ON COMMIT", "REFRESH ON COMMIT", "refresh=on commit"])
def test_refresh_on_commit_is_accepted(option):
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int)")
    con.execute(f"CREATE MATERIALIZED VIEW m WITH ({option}) AS SELECT count(*) AS n FROM t")
    con.execute("INSERT INTO t VALUES (1)")
    assert con.execute("SELECT n FROM m").fetchall() == [(1,)]
    con.close()


@pytest.mark.parametrize("option, sqlstate, words", [
    ("REFRESH EVERY '1 day'", "0A000", "REFRESH EVERY"), ("refresh = at creation", "0A000", "refresh at"),
    ("ASSERT NOT NULL n", "0A000", "ASSERT NOT NULL"),
    ("COLOR = red", "42601", "COLOR"), ("", "42601", ")")])
def test_other_materialized_view_options_are_refused_in_the_users_words(option, sqlstate, words):
    """Sabotage: let ``blank_materialized_view_options`` blank every option and these
    views are created with a refresh they do not have."""
    con = mzlite.connect()
    sql = f"CREATE MATERIALIZED VIEW m WITH ({option}) AS SELECT 1 AS n"
    with pytest.raises(mzlite.Error) as ei:
        con.execute(sql)
    assert ei.value.sqlstate == sqlstate
    assert str(ei.value).startswith(f"CREATE MATERIALIZED VIEW ... {words} is not supported" if sqlstate == "0A000"
                                    else f'syntax error at or near "{words}"')
    assert ei.value.position == sql.index("WITH (") + 7
    with pytest.raises(mzlite.Error):
        con.execute("SELECT * FROM m")
    con.close()
