"""The server's per-query path does each piece of work once: a simple query is parsed once
(the server splits it through the engine's parse cache, which the statement then reads).

Sabotage seen red: ``WireSession._split`` calling ``sql.parse.parse_statements`` itself (two
parses per simple query).
"""
from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg")

import mzlite.coordinator as coordinator  # noqa: E402
import sql.parse  # noqa: E402
from tests.support.wire import dsn, running_server  # noqa: E402


def test_a_simple_query_is_parsed_once(monkeypatch):
    texts = []
    real = sql.parse.parse_statements

    def counting(text):
        texts.append(text)
        return real(text)
    monkeypatch.setattr(sql.parse, "parse_statements", counting)
    monkeypatch.setattr(coordinator, "parse_statements", counting)
    with running_server() as srv, psycopg.connect(dsn(srv), autocommit=True) as c:
        c.execute("CREATE TABLE pq (a int)")
        texts.clear()
        for k in range(5):
            assert c.execute(f"SELECT a + {k} FROM pq").fetchall() == []
        assert sorted(texts) == sorted(f"SELECT a + {k} FROM pq" for k in range(5))
