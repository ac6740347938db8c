"""A dataflow that fails with an internal error (a bug: a Python exception escaping an
operator) must not leave its readers waiting for ever.  Its materialized view's storage and
its exports are marked failed; every dataflow reading them fails too and answers its peeks
with the message, with the interactive runtime on and off.  ``statement_timeout`` bounds each
read so a regression shows up as 57014, not as a hung test.
"""
from __future__ import annotations

import pytest

import compute.render.reduce as reduce_op
import mzlite

FLAGS = ("true", "false")


@pytest.fixture
def broken_reduce(monkeypatch):
    def push(self, *args, **kwargs):
        raise ValueError("boom")
    return lambda: monkeypatch.setattr(reduce_op.ReduceOp, "push", push)


@pytest.mark.parametrize("flag", FLAGS)
def test_reading_a_failed_materialized_view_raises_instead_of_waiting(flag, broken_reduce):
    """Sabotage: ``Runtime._failed_input`` always None -> the read waits until the
    statement timeout (57014) instead of failing with the dataflow's message."""
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    con.execute("SET statement_timeout = '10s'")
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("INSERT INTO t VALUES (1, 2), (1, 3)")
    broken_reduce()
    con.execute("CREATE MATERIALIZED VIEW v AS SELECT a, sum(b) AS s FROM t GROUP BY a")
    con.execute("CREATE MATERIALIZED VIEW w AS SELECT a FROM v")  # reads the failed one
    for q in ("SELECT * FROM v", "SELECT * FROM w"):
        with pytest.raises(mzlite.InternalError, match="boom"):
            con.execute(q).fetchall()
    # the database goes on: other objects still answer
    assert sorted(con.execute("SELECT b FROM t").fetchall()) == [(2,), (3,)]
    con.close()
