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
    statement timeout (57014) instead of failing with the dataflow's message.  The message
    names the dataflow the failure started in, also for ``w`` (it was "dataflow 'peek-t4'
    failed: its input u2 failed: ...": a transient dataflow and ids the user never saw).
    Sabotage seen red: ``_failed_input`` wrapping the input's message again."""
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    con.execute("SET statement_timeout = '10s'")
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("INSERT INTO t VALUES (1, 2), (1, 3)")
    broken_reduce()
    con.execute("CREATE MATERIALIZED VIEW v AS SELECT a, sum(b) AS s FROM t GROUP BY a")
    con.execute("CREATE MATERIALIZED VIEW w AS SELECT a FROM v")  # reads the failed one
    for q in ("SELECT * FROM v", "SELECT * FROM w"):
        with pytest.raises(mzlite.InternalError) as ei:
            con.execute(q).fetchall()
        assert str(ei.value) == "dataflow 'materialized view v' failed: ValueError('boom')", q
    # the database goes on: other objects still answer
    assert sorted(con.execute("SELECT b FROM t").fetchall()) == [(2,), (3,)]
    con.close()


@pytest.fixture
def refused_victims(monkeypatch):
    """The maintenance runtime refuses (``ComputeProtocolError`` from ``_admit``) every
    dataflow whose name contains ``victim``, as it refuses one whose inputs it cannot read."""
    from compute.errors import ComputeProtocolError
    from compute.replica.maintenance import MaintenanceRuntime
    real = MaintenanceRuntime._admit

    def admit(self, desc):
        if "victim" in (desc.debug_name or ""):
            raise ComputeProtocolError("maintenance runtime: refused for the test")
        return real(self, desc)
    monkeypatch.setattr(MaintenanceRuntime, "_admit", admit)


@pytest.mark.parametrize("flag", FLAGS)
def test_a_refused_dataflow_fails_its_readers_with_the_cause(flag, refused_victims):
    """An index or materialized view whose dataflow the runtime refused: every read that
    needs it (a peek on the index, through either runtime; a read of the view; a view over
    it) fails with the refusal, not a hang (57014) nor "peek targets unknown index".
    Sabotage seen red: ``RuntimeCore._create`` re-raising without ``_refuse`` (every read
    waited for the statement timeout, interactive runtime on; off, "targets unknown index")."""
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    try:
        con.execute("SET statement_timeout = '10s'")
        con.execute("CREATE TABLE t (a int)")
        con.execute("INSERT INTO t VALUES (1)")
        con.execute("CREATE VIEW v AS SELECT a + 1 AS b FROM t")
        con.execute("CREATE INDEX victim_vi ON v (b)")
        con.execute("CREATE MATERIALIZED VIEW victim_mv AS SELECT a FROM t")
        con.execute("CREATE MATERIALIZED VIEW w AS SELECT a FROM victim_mv")
        for q, name in (("SELECT * FROM v", "index victim_vi"), ("SELECT b FROM v WHERE b = 2", "index victim_vi"),
                        ("SELECT * FROM victim_mv", "materialized view victim_mv"),
                        ("SELECT * FROM w", "materialized view victim_mv")):
            with pytest.raises(mzlite.InternalError) as ei:
                con.execute(q).fetchall()
            # the cause, named by the object the user created: no transient dataflow, no ids
            assert str(ei.value) == f"dataflow '{name}' was refused: maintenance runtime: refused for the test", q
        # dropping the refused index frees the view's reads; the name can be used again
        con.execute("DROP INDEX victim_vi")
        assert con.execute("SELECT * FROM v").fetchall() == [(2,)]
        con.execute("CREATE INDEX vi ON v (b)")
        con.execute("INSERT INTO t VALUES (2)")
        assert sorted(con.execute("SELECT * FROM v").fetchall()) == [(2,), (3,)]
    finally:
        con.close()


@pytest.mark.parametrize("flag", FLAGS)
def test_reading_through_a_failed_index_raises_instead_of_waiting(flag, broken_reduce):
    """An index whose dataflow failed while running answers its peeks (both runtimes) with
    the failure.  Sabotage seen red: ``MaintenanceRuntime._on_failed`` not failing the registry slot
    -> the interactive runtime's fast-path peek waits for the statement timeout."""
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    try:
        con.execute("SET statement_timeout = '10s'")
        con.execute("CREATE TABLE t (a int, b int)")
        con.execute("INSERT INTO t VALUES (1, 2), (1, 3)")
        con.execute("CREATE VIEW v AS SELECT a, sum(b) AS s FROM t GROUP BY a")
        broken_reduce()
        con.execute("CREATE DEFAULT INDEX ON v")
        for q in ("SELECT * FROM v", "SELECT s FROM v WHERE a = 1"):
            with pytest.raises(mzlite.InternalError, match="boom"):
                con.execute(q).fetchall()
    finally:
        con.close()


@pytest.fixture
def render_raises(monkeypatch):
    """Rendering (``Dataflow._render``) raises ``ValueError('render boom')`` for every
    dataflow whose name contains ``victim``, or for every dataflow once ``all`` is set."""
    import compute.render.dataflow as render_df
    real = render_df.Dataflow._render
    state = {"all": False}

    def render(self, expr, env):
        if state["all"] or "victim" in (self.desc.debug_name or ""):
            raise ValueError("render boom")
        return real(self, expr, env)
    monkeypatch.setattr(render_df.Dataflow, "_render", render)
    return state


@pytest.mark.parametrize("flag", FLAGS)
def test_a_dataflow_whose_rendering_raised_fails_its_readers(flag, render_raises):
    """An internal exception while the runtime renders a dataflow (a bug) fails that
    dataflow: the SELECT that needed it (a peek dataflow), reads of an index or materialized
    view it would have maintained (fast path through either runtime, a view over it) fail with
    an ``InternalError`` naming the exception, and the runtime goes on hosting the others.
    Sabotage seen red: the ``except Exception`` in ``RuntimeCore._build`` removed (every read
    waited for the statement timeout, 57014, both runtimes); ``MaintenanceRuntime._on_failed``
    without ``create`` (the interactive fast path on the unbuilt index waited, 57014)."""
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    try:
        con.execute("SET statement_timeout = '10s'")
        con.execute("CREATE TABLE t (a int)")
        con.execute("INSERT INTO t VALUES (1)")
        con.execute("CREATE VIEW v AS SELECT a + 1 AS b FROM t")
        con.execute("CREATE INDEX victim_vi ON v (b)")
        con.execute("CREATE MATERIALIZED VIEW victim_mv AS SELECT a FROM t")
        con.execute("CREATE MATERIALIZED VIEW w AS SELECT a FROM victim_mv")
        for q, name in (("SELECT * FROM v", "index victim_vi"), ("SELECT b FROM v WHERE b = 2", "index victim_vi"),
                        ("SELECT * FROM victim_mv", "materialized view victim_mv"),
                        ("SELECT * FROM w", "materialized view victim_mv")):
            with pytest.raises(mzlite.InternalError) as ei:
                con.execute(q).fetchall()
            assert str(ei.value) == f"dataflow '{name}' failed: rendering raised ValueError('render boom')", q
        # the runtimes go on: other dataflows render and answer, the new ones too
        con.execute("CREATE MATERIALIZED VIEW ok AS SELECT a * 10 AS c FROM t")
        con.execute("INSERT INTO t VALUES (2)")
        assert sorted(con.execute("SELECT * FROM ok").fetchall()) == [(10,), (20,)]
        assert sorted(con.execute("SELECT a + 5 FROM t").fetchall()) == [(6,), (7,)]
        # a SELECT whose own (transient) peek dataflow fails to render
        render_raises["all"] = True
        with pytest.raises(mzlite.InternalError, match=r"failed: rendering raised ValueError\('render boom'\)"):
            con.execute("SELECT a + 1 FROM t").fetchall()
        render_raises["all"] = False
        assert sorted(con.execute("SELECT a + 1 FROM t").fetchall()) == [(2,), (3,)]
        # dropping the failed index frees the view's reads
        con.execute("DROP INDEX victim_vi")
        assert sorted(con.execute("SELECT * FROM v").fetchall()) == [(2,), (3,)]
    finally:
        con.close()


@pytest.mark.parametrize("flag", FLAGS)
def test_an_exception_answering_a_peek_fails_that_peek(flag, monkeypatch):
    """An internal exception while a runtime reads a peek's answer (``compute.peek.answer``)
    answers that peek with an ``InternalError`` naming the exception (fast path and peek
    dataflow, both runtimes); the runtime goes on answering.  Sabotage seen red: the
    ``except Exception`` in ``RuntimeCore._try_answer`` removed (the exception escaped to
    the driver, whose last resort answered every pending peek with "internal error in step")."""
    import compute.peek as peek_mod
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    try:
        con.execute("SET statement_timeout = '10s'")
        con.execute("CREATE TABLE t (a int)")
        con.execute("INSERT INTO t VALUES (1)")
        con.execute("CREATE DEFAULT INDEX ON t")
        real = peek_mod.answer

        def answer(*args, **kwargs):
            raise ValueError("peek boom")
        monkeypatch.setattr(peek_mod, "answer", answer)
        for q in ("SELECT * FROM t", "SELECT a + 1 FROM t"):
            with pytest.raises(mzlite.InternalError) as ei:
                con.execute(q).fetchall()
            assert str(ei.value) == "internal error answering peek: ValueError('peek boom')", q
        monkeypatch.setattr(peek_mod, "answer", real)
        assert con.execute("SELECT * FROM t").fetchall() == [(1,)]
        assert con.execute("SELECT a + 1 FROM t").fetchall() == [(2,)]
    finally:
        con.close()


@pytest.mark.parametrize("flag", FLAGS)
def test_a_failed_subscribe_dataflow_ends_its_subscriber_with_the_error(flag, broken_reduce, render_raises):
    """A SUBSCRIBE whose dataflow fails (a step raised, or rendering raised) ends with an
    ``InternalError`` naming the exception; the FETCH does not wait for its timeout with
    nothing.  Sabotage seen red: ``RuntimeCore._fail`` not sending the subscribe an error
    batch (FETCH returned [] at its 10 s timeout, both runtimes)."""
    con = mzlite.connect(system_parameters={"enable_compute_interactive_runtime": flag})
    try:
        con.execute("SET statement_timeout = '10s'")
        con.execute("CREATE TABLE t (a int, b int)")
        con.execute("INSERT INTO t VALUES (1, 2)")
        broken_reduce()
        for q, cause in (("SELECT a, sum(b) FROM t GROUP BY a", "ValueError('boom')"),
                         ("SELECT a FROM t", "rendering raised ValueError('render boom')")):
            render_raises["all"] = "rendering" in cause
            con.execute("BEGIN")
            con.execute(f"DECLARE c CURSOR FOR SUBSCRIBE ({q})")
            with pytest.raises(mzlite.InternalError) as ei:
                con.execute("FETCH ALL c WITH (timeout = '10s')").fetchall()
            assert str(ei.value).startswith("dataflow 'subscribe-"), str(ei.value)
            assert str(ei.value).endswith(f" failed: {cause}"), str(ei.value)
            con.execute("ROLLBACK")
        render_raises["all"] = False
        assert con.execute("SELECT a FROM t").fetchall() == [(1,)]  # the runtimes go on
    finally:
        con.close()
