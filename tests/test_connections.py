"""Secrets and connections: CREATE/ALTER/DROP SECRET, CREATE/VALIDATE/DROP CONNECTION TO
POSTGRES, what SHOW and the catalog relations show (never a secret's value), durability, and
the refusals (other connection types and options); sources over a connection are
``tests/test_source_postgres.py``.

Validation connects to a real PostgreSQL 15: ``MZLITE_SLT_PG=host:port`` (CI), else one
started as .ci/start-postgres does; those tests are skipped when PostgreSQL is not installed.
Sabotages seen red: the secret's value written into its ``create_sql`` (the redaction test);
``owned_prefix`` not passed to ``sync_catalog`` (a dropped secret's value stayed in the data
directory); ``_validate`` ignoring the ``PORT`` option (the validation of a reachable server
failed).  The throwaway server trusts every local user, so a wrong password is not caught there.
"""
from __future__ import annotations

import sqlite3

import pytest

import mzlite
from tests.support.postgres import postgres_server

VALUE = "hunter2-Zq9"


def test_secrets_are_named_never_shown(con):
    con.execute(f"CREATE SECRET pgpass AS '{VALUE}'")
    con.execute("CREATE SECRET b64 AS decode('c2VjcmV0Cg==', 'base64')")
    assert con.database.secrets[con.database.catalog.resolve("b64").id] == b"secret\n"
    outputs = [con.execute(q).fetchall() for q in (
        "SHOW SECRETS", "SELECT * FROM mz_secrets", "SHOW OBJECTS", "SELECT * FROM mz_columns",
        "SELECT * FROM information_schema.tables", "SELECT relname FROM pg_catalog.pg_class")]
    assert sorted(outputs[0]) == [("b64", ""), ("pgpass", "")]
    assert [r[1] for r in outputs[1]] == ["pgpass", "b64"]
    assert VALUE not in repr(outputs)
    assert all(item.create_sql == f"CREATE SECRET {item.name} AS '********'"
               for item in con.database.catalog.items("secret"))
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("SELECT * FROM pgpass")
    assert e.value.sqlstate == "42809" and VALUE not in str(e.value)
    con.execute("ALTER SECRET pgpass AS 'other'")
    assert con.database.secrets[con.database.catalog.resolve("pgpass").id] == b"other"
    con.execute("ALTER SECRET IF EXISTS nope AS 'x'")
    for sql, state in [("CREATE SECRET pgpass AS 'x'", "42710"), ("CREATE SECRET n AS 1", "42804"),
                       ("CREATE SECRET n AS NULL::text", "22023"), ("ALTER SECRET nope AS 'x'", "42704"),
                       ("DROP SECRET nope", "42704"), ("SHOW CREATE SECRET pgpass", "0A000")]:
        with pytest.raises(mzlite.Error) as e:
            con.execute(sql)
        assert e.value.sqlstate == state, sql
    con.execute("CREATE SECRET IF NOT EXISTS pgpass AS 'ignored'")
    con.execute("DROP SECRET pgpass, b64")
    assert con.execute("SHOW SECRETS").fetchall() == [] and con.database.secrets == {}


def test_a_connection_depends_on_its_secret(con):
    con.execute(f"CREATE SECRET pgpass AS '{VALUE}'")
    con.execute("CREATE CONNECTION pg TO POSTGRES (HOST 'localhost', PORT 1, USER 'postgres', "
                "PASSWORD SECRET pgpass, DATABASE 'postgres', SSL MODE 'disable') WITH (VALIDATE = false)")
    assert con.execute("SHOW CONNECTIONS").fetchall() == [("pg", "postgres", "")]
    assert [r[1:] for r in con.execute("SELECT * FROM mz_connections").fetchall()] == [("pg", "postgres")]
    [(name, sql)] = con.execute("SHOW CREATE CONNECTION pg").fetchall()
    assert "PASSWORD SECRET pgpass" in sql and VALUE not in sql
    with pytest.raises(mzlite.ProgrammingError) as e:
        con.execute("DROP SECRET pgpass")
    assert e.value.sqlstate == "2BP01" and "connection pg" in str(e.value)
    con.execute("DROP SECRET pgpass CASCADE")
    assert con.execute("SHOW CONNECTIONS").fetchall() == []


@pytest.mark.parametrize("sql, sqlstate, words", [
    ("CREATE CONNECTION k TO KAFKA (BROKER 'localhost:9092')", "0A000", "KAFKA"),
    ("CREATE CONNECTION k TO CONFLUENT SCHEMA REGISTRY (URL 'http://x')", "0A000", "CONFLUENT SCHEMA REGISTRY"),
    ("CREATE CONNECTION k TO MYSQL (HOST 'x')", "0A000", "MYSQL"),
    ("CREATE CONNECTION k TO SSH TUNNEL (HOST 'x', USER 'y', PORT 22)", "0A000", "SSH TUNNEL"),
    ("CREATE CONNECTION k TO POSTGRES (HOST 'x', USER 'y', SSL KEY SECRET s)", "0A000", "SSL KEY"),
    ("CREATE CONNECTION k TO POSTGRES (HOST 'x', USER 'y') WITH (RETRIES = 3)", "0A000", "RETRIES"),
    ("CREATE CONNECTION k TO POSTGRES (HOST 'x') WITH (VALIDATE = false)", "22023", "USER"),
    ("CREATE CONNECTION k TO POSTGRES (HOST 'x', USER 'y', PASSWORD 'plain')", "22023", "SECRET"),
    ("CREATE CONNECTION k TO POSTGRES (HOST 'x', USER 'y', PASSWORD SECRET nope)", "42P01", "nope"),
    ("CREATE CONNECTION k TO POSTGRES (HOST 'x', USER 'y', SSL MODE 'sometimes')", "22023", "SSL MODE"),
    ("CREATE CONNECTION k TO POSTGRES (HOST 'x', USER 'y', PORT 70000)", "22023", "PORT"),
    ("CREATE SOURCE s FROM POSTGRES CONNECTION nope (PUBLICATION 'p') FOR ALL TABLES", "42P01", "nope"),
])
def test_what_cannot_be_honoured_is_refused_by_name(con, sql, sqlstate, words):
    with pytest.raises(mzlite.Error) as e:
        con.execute(sql)
    assert e.value.sqlstate == sqlstate and words in str(e.value), str(e.value)
    assert con.execute("SHOW CONNECTIONS").fetchall() == []


def test_secrets_and_connections_survive_a_reopen_and_a_drop_leaves_no_value(tmp_path):
    con = mzlite.connect(str(tmp_path))
    con.execute(f"CREATE SECRET pgpass AS '{VALUE}'")
    con.execute("CREATE SECRET gone AS 'dropped-value-X1'")
    con.execute("CREATE CONNECTION pg TO POSTGRES (HOST 'localhost', USER 'postgres', PASSWORD SECRET pgpass) "
                "WITH (VALIDATE = false)")
    con.execute("DROP SECRET gone")
    con.close()
    store = sqlite3.connect(tmp_path / "mzlite.sqlite")
    texts = [r[0] for r in store.execute("SELECT create_sql FROM items")]
    keys = [r[0] for r in store.execute("SELECT key FROM meta")]
    store.close()
    assert not any(VALUE in t for t in texts)
    assert [k for k in keys if k.startswith("secret:")] == ["secret:u1"]
    con = mzlite.connect(str(tmp_path))
    assert con.execute("SHOW SECRETS").fetchall() == [("pgpass", "")]
    assert con.execute("SHOW CONNECTIONS").fetchall() == [("pg", "postgres", "")]
    assert con.database.secrets == {con.database.catalog.resolve("pgpass").id: VALUE.encode()}
    con.close()


# ------------------------------------------------------------------ against PostgreSQL


@pytest.fixture(scope="module")
def pg_address():
    """``(host, port)`` of a PostgreSQL 15 with a role ``mz_check`` that has a password."""
    psycopg = pytest.importorskip("psycopg")
    with postgres_server("nothing to validate a connection against") as (host, port):
        with psycopg.connect(host=host, port=port, user="postgres", dbname="postgres", autocommit=True) as pg:
            pg.execute("DROP ROLE IF EXISTS mz_check")
            pg.execute(f"CREATE ROLE mz_check LOGIN PASSWORD '{VALUE}'")
        yield host, port


def test_validate_connection_connects_to_postgres(con, pg_address):
    host, port = pg_address
    con.execute(f"CREATE SECRET pw AS '{VALUE}'")
    con.execute(f"CREATE CONNECTION pg TO POSTGRES (HOST '{host}', PORT {port}, USER 'mz_check', "
                f"PASSWORD SECRET pw, DATABASE 'postgres')")
    con.execute("VALIDATE CONNECTION pg")  # connects and runs SELECT 1
    with pytest.raises(mzlite.OperationalError) as e:
        con.execute(f"CREATE CONNECTION nowhere TO POSTGRES (HOST '{host}', PORT 1, USER 'mz_check', "
                    f"PASSWORD SECRET pw)")
    assert e.value.sqlstate == "08001" and "nowhere" in str(e.value) and VALUE not in str(e.value)
    con.execute(f"CREATE CONNECTION later TO POSTGRES (HOST '{host}', PORT 1, USER 'mz_check', "
                f"PASSWORD SECRET pw) WITH (VALIDATE = false)")
    with pytest.raises(mzlite.OperationalError) as e:
        con.execute("VALIDATE CONNECTION later")
    assert e.value.sqlstate == "08001"
    assert con.execute("SHOW CONNECTIONS").fetchall() == [("pg", "postgres", ""), ("later", "postgres", "")]
