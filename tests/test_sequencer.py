"""The sequencer: one handler per plan type, and what is DDL read off the plan's type.

- every concrete plan class of ``planner.plans`` has exactly one handler in
  ``mzlite.sequencer.HANDLERS`` (sabotage: removing the ``ClosePlan`` entry failed
  ``test_every_plan_class_has_exactly_one_handler``);
- the catalog version moves around a plan because its type says it changes the catalog
  (``Plan.changes_catalog``), not because of its name (sabotage: the old name-prefix test,
  ``name.startswith(("Create", "Drop", "AlterSystem"))``, failed
  ``test_the_catalog_version_follows_the_plan_type``);
- a plan type's transaction rule (``Plan.transaction``) refuses it where it must be (sabotage:
  ``CreateIndexPlan.transaction = "any"`` failed ``test_transaction_rules_refuse_what_they_must``).
"""
from __future__ import annotations

import dataclasses
import inspect

import pytest

import mzlite
from mzlite import sequencer
from planner import plans as P


def _concrete_plan_classes() -> set:
    return {c for _n, c in inspect.getmembers(P, inspect.isclass)
            if issubclass(c, P.Plan) and c.__module__ == P.__name__ and dataclasses.is_dataclass(c)}


def test_every_plan_class_has_exactly_one_handler():
    classes = _concrete_plan_classes()
    assert len(classes) >= 20
    assert set(sequencer.HANDLERS) == classes  # a dict: one handler each, and none for a non-plan
    assert all(callable(h) for h in sequencer.HANDLERS.values())
    for c in (P.Plan, P.DdlPlan):
        assert c not in sequencer.HANDLERS and not dataclasses.is_dataclass(c)


def test_ddl_is_a_property_of_the_plan_type():
    ddl = {c for c in _concrete_plan_classes() if c.changes_catalog}
    namespaces = {P.CreateSchemaPlan, P.DropSchemaPlan, P.CreateClusterPlan, P.DropClusterPlan,
                  P.ClusterReplicasPlan, P.AlterClusterPlan, P.RenamePlan, P.CommentPlan,
                  P.AlterSetClusterPlan, P.AlterRetainHistoryPlan}
    created = {P.CreateTablePlan, P.CreateTableAsPlan, P.CreateViewPlan, P.CreateIndexPlan, P.CreateSourcePlan,
               P.CreatePostgresSourcePlan, P.CreateWebhookSourcePlan, P.CreateSecretPlan, P.AlterSecretPlan, P.CreateConnectionPlan,
               P.CreateNamedTypePlan, P.DropNamedTypePlan, P.DropPlan}
    assert ddl == created | {P.AlterSystemSetPlan} | namespaces
    assert {c for c in _concrete_plan_classes() if issubclass(c, P.DdlPlan)} == ddl - {P.AlterSystemSetPlan}
    rules = {c: c.transaction for c in _concrete_plan_classes() if c.transaction != "any"}
    assert rules == {**{c: "idle" for c in created | namespaces},
                     P.UpdatePlan: "never", P.DeletePlan: "never", P.DiscardAllPlan: "never"}


def test_the_catalog_version_follows_the_plan_type(monkeypatch):
    con = mzlite.connect()
    db = con.database
    v = db.catalog_version
    con.execute("CREATE TABLE t (a int)")
    assert db.catalog_version == v + 2
    con.execute("SET application_name = 'x'")
    con.execute("SELECT * FROM t").fetchall()
    assert db.catalog_version == v + 2
    # the attribute decides, whatever the class is called
    monkeypatch.setattr(P.SetVariablePlan, "changes_catalog", True)
    monkeypatch.setattr(P.CreateIndexPlan, "changes_catalog", False)
    con.execute("SET application_name = 'y'")
    assert db.catalog_version == v + 4
    con.execute("CREATE INDEX t_a ON t (a)")
    assert db.catalog_version == v + 4
    con.close()


def test_ddl_invalidates_cached_plans_and_ends_dropped_subscriptions():
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int)")
    con.execute("INSERT INTO t VALUES (1)")
    assert con.execute("SELECT * FROM t").fetchall() == [(1,)]
    sub = con.subscribe("t")
    con.execute("DROP TABLE t")
    with pytest.raises(mzlite.Error) as e:
        list(sub)
    assert e.value.sqlstate == "42P01"
    con.execute("CREATE TABLE t (a int, b int)")
    con.execute("INSERT INTO t VALUES (2, 3)")
    assert con.execute("SELECT * FROM t").fetchall() == [(2, 3)]
    con.close()


@pytest.mark.parametrize("sql", [
    "CREATE TABLE u (a int)", "CREATE VIEW v AS SELECT 1", "CREATE MATERIALIZED VIEW m AS SELECT a FROM t",
    "CREATE INDEX t_a ON t (a)", "CREATE DEFAULT INDEX ON t", "DROP TABLE t"])
def test_transaction_rules_refuse_what_they_must(sql):
    """DDL is allowed as a transaction's first statement and refused (25001) once it has read
    or written; an IF NOT EXISTS of an existing object is not refused (nothing to do)."""
    con = mzlite.connect()
    con.execute("CREATE TABLE t (a int)")
    con.execute("BEGIN")
    con.execute("SELECT * FROM t").fetchall()
    with pytest.raises(mzlite.OperationalError) as e:
        con.execute(sql)
    assert e.value.sqlstate == "25001" and "cannot be run inside a transaction block" in str(e.value)
    con.execute("ROLLBACK")
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (1)")
    con.execute("CREATE TABLE IF NOT EXISTS t (a int)")
    con.execute("COMMIT")
    con.execute("BEGIN")
    con.execute(sql)  # the first statement of a transaction
    con.execute("COMMIT")
    con.close()
