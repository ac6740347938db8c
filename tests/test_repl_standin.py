"""The repl tests' stand-in connection (``tests.support.repl_standin``) speaks the API."""
from __future__ import annotations

from tests.support.repl_standin import StandInConnection


def test_standin_speaks_the_api():
    conn = StandInConnection()
    assert conn.execute("create table t (a int)").statusmessage == "CREATE TABLE"
    assert conn.execute("insert into t values (1), (2)").statusmessage == "INSERT 0 2"
    cur = conn.execute("select a from t")
    assert cur.description[0][:2] == ("a", "integer")
    assert cur.fetchall() == [(1,), (2,)]
    assert conn.execute("show tables").fetchall() == [("t",)]
