"""information_schema relations (``mzlite.introspection``) and the SHOW statements (``mzlite.show``).

Expected answers for tables and columns were taken from PostgreSQL 15 for the same DDL;
``slt/test/information_schema.slt`` checks them against the oracle as well.
"""
from __future__ import annotations

import pytest

import mzlite


def rows(con, sql):
    return con.execute(sql).fetchall()


def test_tables_follow_the_catalog(con):
    """Sabotage: with ``Introspection.refresh`` skipping the information_schema relations,
    the second and third reads still show the first state."""
    con.execute("CREATE TABLE t (a int)")
    q = "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
    assert rows(con, q) == [("t", "BASE TABLE")]
    con.execute("CREATE VIEW v AS SELECT a FROM t")
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT a FROM t")
    con.execute("CREATE INDEX i ON t (a)")  # indexes are not relations
    assert rows(con, q) == [("m", "MATERIALIZED VIEW"), ("t", "BASE TABLE"), ("v", "VIEW")]
    con.execute("DROP VIEW v")
    assert rows(con, q) == [("m", "MATERIALIZED VIEW"), ("t", "BASE TABLE")]


def test_column_list_and_types_match_postgres(con):
    cur = con.execute("SELECT * FROM information_schema.tables")
    assert [d[0] for d in cur.description] == [
        "table_catalog", "table_schema", "table_name", "table_type", "self_referencing_column_name",
        "reference_generation", "user_defined_type_catalog", "user_defined_type_schema", "user_defined_type_name",
        "is_insertable_into", "is_typed", "commit_action"]
    cur = con.execute("SELECT * FROM information_schema.columns")
    names = [d[0] for d in cur.description]
    assert names[:13] == ["table_catalog", "table_schema", "table_name", "column_name", "ordinal_position",
                          "column_default", "is_nullable", "data_type", "character_maximum_length",
                          "character_octet_length", "numeric_precision", "numeric_precision_radix", "numeric_scale"]
    assert names[-3:] == ["udt_catalog", "udt_schema", "udt_name"]
    con.execute("CREATE TABLE t (a int NOT NULL DEFAULT 5, b varchar(10) DEFAULT 'x', c char(3), d numeric(5,2), "
                "e numeric, f float8, g text)")
    got = rows(con, "SELECT column_name, ordinal_position, column_default, is_nullable, data_type, "
                    "character_maximum_length, character_octet_length, numeric_precision, numeric_precision_radix, "
                    "numeric_scale, udt_name FROM information_schema.columns WHERE table_name = 't' "
                    "ORDER BY ordinal_position")
    assert got == [
        ("a", 1, "5", "NO", "integer", None, None, 32, 2, 0, "int4"),
        ("b", 2, "'x'::character varying", "YES", "character varying", 10, 40, None, None, None, "varchar"),
        ("c", 3, None, "YES", "character", 3, 12, None, None, None, "bpchar"),
        ("d", 4, None, "YES", "numeric", None, None, 5, 10, 2, "numeric"),
        ("e", 5, None, "YES", "numeric", None, None, None, 10, None, "numeric"),
        ("f", 6, None, "YES", "double precision", None, None, 53, 2, None, "float8"),
        ("g", 7, None, "YES", "text", None, 1073741824, None, None, None, "text"),
    ]


def test_qualified_names_do_not_collide_with_user_relations(con):
    """Sabotage: catalogued under their bare names, information_schema's ``tables`` and
    ``columns`` make ``CREATE TABLE tables`` fail with 42P07."""
    con.execute("CREATE TABLE tables (x int)")
    con.execute("CREATE TABLE columns (y int)")
    assert rows(con, "SELECT count(*) FROM tables") == [(0,)]
    assert rows(con, "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('tables', 'columns') "
                     "AND table_schema = 'public'") == [(2,)]
    assert rows(con, "SELECT count(*) FROM materialize.information_schema.columns WHERE table_name = 'tables' "
                     "AND table_schema = 'public'") \
        == [(1,)]
    with pytest.raises(mzlite.ProgrammingError) as ei:
        con.execute("SELECT * FROM information_schema.nosuch")
    assert ei.value.sqlstate == "42P01"


def test_joins_and_where(con):
    con.execute("CREATE TABLE t (a int, b text)")
    con.execute("CREATE TABLE wanted (n text)")
    con.execute("INSERT INTO wanted VALUES ('a'), ('zz')")
    assert sorted(rows(con, "SELECT w.n, c.data_type FROM wanted w LEFT JOIN information_schema.columns c "
                            "ON c.column_name = w.n AND c.table_name = 't'")) == [("a", "integer"), ("zz", None)]
    assert rows(con, "SELECT t.table_type, count(*) FROM information_schema.tables t JOIN "
                     "information_schema.columns c USING (table_schema, table_name) WHERE t.table_schema = 'public' "
                     "GROUP BY t.table_type") == [("BASE TABLE", 3)]
    assert ("public",) in rows(con, "SELECT schema_name FROM information_schema.schemata")
    con.execute("CREATE VIEW v AS SELECT a FROM t WHERE a > 1")
    assert rows(con, "SELECT table_name, view_definition, check_option FROM information_schema.views") == \
        [("v", "SELECT a FROM t WHERE a > 1", "NONE")]


def test_show_statements(con):
    con.execute("CREATE TABLE t (a int NOT NULL, v varchar(3), n numeric(4,1))")
    con.execute("CREATE INDEX t_a ON t (a)")
    con.execute("CREATE MATERIALIZED VIEW m AS SELECT a FROM t")
    assert rows(con, "SHOW COLUMNS FROM t") == [
        ("a", "false", "integer", ""), ("v", "true", "character varying(3)", ""), ("n", "true", "numeric(4,1)", "")]
    assert rows(con, "SHOW INDEXES FROM t") == [("t_a", "t", "quickstart", "{a}", "")]
    assert rows(con, "SHOW OBJECTS") == [("t", "table", ""), ("t_a", "index", ""), ("m", "materialized-view", "")]
    assert ("public", "") in rows(con, "SHOW SCHEMAS")
    assert rows(con, "SHOW DATABASES") == [("materialize", "")]
    assert rows(con, "SHOW CREATE MATERIALIZED VIEW m") == [  # Materialize's format (mzlite.show_create)
        ("materialize.public.m", 'CREATE MATERIALIZED VIEW "materialize"."public"."m" IN CLUSTER "quickstart" '
         'WITH (REFRESH = ON COMMIT) AS SELECT a FROM t')]
    con.execute("SET application_name = 'x'")
    assert rows(con, "SHOW application_name") == [("x",)]
    assert ("application_name", "x") in [r[:2] for r in rows(con, "SHOW ALL")]
    con.execute("RESET application_name")
    assert rows(con, "SHOW application_name") == [("",)]
