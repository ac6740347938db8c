"""pg_catalog relations, embedded (the server's clients read the same relations).

Sabotage seen red: dropping the pg_catalog fallback in ``Catalog.try_resolve`` made
``pg_class`` and ``pg_catalog.pg_class`` 42P01.
"""
from __future__ import annotations

import mzlite


def test_pg_class_pg_attribute_and_pg_type_describe_user_objects():
    con = mzlite.connect()
    try:
        con.execute("CREATE TABLE pc (a int NOT NULL, b text)")
        con.execute("CREATE INDEX pc_a ON pc (a)")
        rows = con.execute("SELECT c.relname, c.relkind, n.nspname FROM pg_catalog.pg_class c JOIN pg_namespace n "
                           "ON n.oid = c.relnamespace WHERE c.relname LIKE 'pc%' ORDER BY 1").fetchall()
        assert rows == [("pc", "r", "public"), ("pc_a", "i", "public")]
        cols = con.execute("SELECT a.attname, t.typname, a.attnotnull FROM pg_attribute a JOIN pg_class c ON "
                           "c.oid = a.attrelid JOIN pg_type t ON t.oid = a.atttypid WHERE c.relname = 'pc' "
                           "ORDER BY a.attnum").fetchall()
        assert cols == [("a", "int4", True), ("b", "text", False)]
        assert con.execute("SELECT oid FROM pg_type WHERE typname IN ('int4', '_int4', 'jsonb') ORDER BY 1"
                           ).fetchall() == [(23,), (1007,), (3802,)]
        assert con.execute("SELECT current_database(), pg_get_userbyid(10)").fetchone() == ("materialize",
                                                                                            "materialize")
    finally:
        con.close()
