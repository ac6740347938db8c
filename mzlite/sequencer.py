"""The sequencer: applies plans, one handler per plan type, as Materialize's adapter
sequences them.

Owns ``HANDLERS``, the one table from each plan class of ``planner.plans`` to the function
that applies it, assembled here and nowhere else; ``sequence``, which applies one plan (what
is DDL is read off the plan's type: ``Plan.changes_catalog`` bumps the catalog version
around it and ends the subscriptions whose dependencies it dropped); ``sequence_many``,
``executemany``'s statement-level path; and the handlers of the session statements
(transactions, SET / RESET / SHOW).

A handler is ``handler(db, session, plan, stmt, params) -> Result``: ``stmt`` the statement
executed, ``params`` its parameter sets (``[()]`` without parameters).  Every plan is bound
to its parameter values except an ``InsertPlan`` of the ``rows`` form, which its handler
applies to ``params``.  Invariants: every concrete plan class has exactly one handler
(``tests/test_sequencer.py``); ``sequence`` runs under the statement lock, a failed handler
leaves the catalog version bumped (stale caches are only ever dropped, never kept).
Deliberately not here: parsing, planning and caching plans, the statement lock and error
conversion (``mzlite.coordinator``); what each handler does (``reads``, ``bulk``,
``writes``, ``ddl``, ``show``, ``subscribe``).
"""
from __future__ import annotations

from mzlite import bulk, catalog_store, connections, copy, ddl, namespaces, prepared, show, sources, subscribe, webhooks
from mzlite.bulk_modify import plan_bulk_modify
from mzlite.cursor import Result
from mzlite.reads import select
from mzlite.session import Transaction
from mzlite.writes import delete, update
from planner import plan_statement, plans as P
from sql import errors as E


def _transaction(db, session, plan, stmt, params) -> Result:
    action = plan.action
    if action == "begin":
        if not session.in_transaction():  # else PostgreSQL warns and carries on
            session.txn = Transaction(explicit=True, read_only=plan.read_only)
            if plan.isolation is not None:
                session.set_local_var("transaction_isolation", plan.isolation)
        return Result("BEGIN", None)
    subscribe.close_portals(session)  # COMMIT and ROLLBACK close the transaction's cursors
    txn = session.txn
    try:
        if action == "commit":
            failed = txn is not None and txn.failed
            db.writer.commit(session)
            return Result("ROLLBACK" if failed else "COMMIT", None)
        db.reader.end_transaction(session)
        return Result("ROLLBACK", None)
    finally:
        session.restore_local_vars(txn)


def _set_variable(db, session, plan, stmt, params) -> Result:
    if plan.local:
        session.set_local_var(plan.name, plan.value)
    else:
        session.set_var(plan.name, plan.value)
    return Result("SET", None)


def _reset_variable(db, session, plan, stmt, params) -> Result:
    if plan.name.lower() == "all":
        for n in list(session.vars):
            session.set_var(n, None)
    else:
        session.set_var(plan.name, None)
    return Result("RESET", None)


def _show_variable(db, session, plan, stmt, params) -> Result:
    if plan.name.lower() == "all":
        rows = session.all_vars()
        return Result(f"SELECT {len(rows)}", [("name", "text"), ("setting", "text"), ("description", "text")],
                      rows, len(rows))
    value = session.show_var(plan.name)
    return Result("SELECT 1", [(plan.name.lower(), "text")], [(value,)], 1)


#: plan class -> the handler that applies it
HANDLERS = {
    P.SelectPlan: select,
    P.InsertPlan: bulk.insert,
    P.UpdatePlan: update,
    P.DeletePlan: delete,
    P.CreateTablePlan: ddl.create_table,
    P.CreateViewPlan: ddl.create_view,
    P.CreateIndexPlan: ddl.create_index,
    P.DropPlan: ddl.drop,
    P.AlterSystemSetPlan: ddl.alter_system,
    P.TransactionPlan: _transaction,
    P.SetVariablePlan: _set_variable,
    P.ResetVariablePlan: _reset_variable,
    P.ShowVariablePlan: _show_variable,
    P.ShowObjectsPlan: show.show_objects,
    P.ShowCreatePlan: show.show_create,
    P.ExplainPlan: show.explain,
    P.SubscribePlan: subscribe.subscribe,
    P.DeclarePlan: subscribe.declare,
    P.FetchPlan: subscribe.fetch,
    P.ClosePlan: subscribe.close_cursor,
    P.CopyPlan: copy.copy,
    P.PreparePlan: prepared.prepare,
    P.ExecutePlan: prepared.execute,
    P.DeallocatePlan: prepared.deallocate,
    P.DiscardAllPlan: prepared.discard_all,
    P.DiscardPlan: prepared.discard,
    P.CreateTableAsPlan: ddl.create_table_as,
    P.CreateSchemaPlan: namespaces.create_schema,
    P.DropSchemaPlan: namespaces.drop_schema,
    P.CreateClusterPlan: namespaces.create_cluster,
    P.CreateNamedTypePlan: namespaces.create_named_type,
    P.DropNamedTypePlan: namespaces.drop_named_type,
    P.DropClusterPlan: namespaces.drop_cluster,
    P.ClusterReplicasPlan: namespaces.cluster_replicas,
    P.AlterClusterPlan: namespaces.alter_cluster,
    P.RenamePlan: namespaces.rename,
    P.AlterSetClusterPlan: namespaces.alter_set_cluster,
    P.AlterRetainHistoryPlan: namespaces.alter_retain_history,
    P.CommentPlan: namespaces.comment,
    P.CreateSourcePlan: sources.create_source,
    P.CreatePostgresSourcePlan: sources.create_postgres_source,
    P.CreateWebhookSourcePlan: webhooks.create_webhook_source,
    P.CreateSecretPlan: connections.create_secret,
    P.AlterSecretPlan: connections.alter_secret,
    P.CreateConnectionPlan: connections.create_connection,
    P.ValidateConnectionPlan: connections.validate_connection,
}


def sequence(db, session, plan, stmt, params) -> Result:
    """Apply ``plan`` (of ``stmt``, for the parameter sets ``params``) with its type's handler."""
    handler = HANDLERS.get(type(plan))
    if handler is None:
        raise E.NotSupportedError(f"{type(plan).__name__} is not supported yet")
    if not plan.changes_catalog:
        return handler(db, session, plan, stmt, params)
    db.catalog_version += 1  # plans cached against the old catalog (and their index choices) are stale
    try:
        result = handler(db, session, plan, stmt, params)
    finally:
        db.catalog_version += 1
        subscribe.end_for_dropped(db)
    catalog_store.persist_after(db)  # a data directory: the change is durable before it is acknowledged
    return result


def sequence_many(db, session, stmt, param_sets) -> Result:
    """``executemany``: ``stmt`` once per parameter set.  An INSERT's rows and an UPDATE's or
    DELETE's changes are one write; other statements run one plan per set, in order."""
    if stmt.kind == "insert":
        return bulk.insert_many(db, session, stmt, param_sets)
    if stmt.kind in ("update", "delete"):
        done = modify_fast(db, session, stmt, param_sets)
        if done is not None:
            return done
    plans = [plan_statement(stmt, db.catalog, p) for p in param_sets]  # every set bound first
    if plans and all(isinstance(p, (P.UpdatePlan, P.DeletePlan)) for p in plans):
        n = db.writer.modify_many(session, plans)
        if n is not None:
            return Result(f"{plans[0].tag} {n}", None, rowcount=n)
    total = 0
    result = Result("OK", None)
    for plan, ps in zip(plans, param_sets):
        db.check_canceled(session)
        result = sequence(db, session, plan, stmt, [ps])
        total += max(result.rowcount, 0)
    result.rowcount = total
    return result


def modify_fast(db, session, stmt, param_sets):
    """An UPDATE/DELETE keyed by an index, for ``param_sets``: one read, one write
    (``mzlite.bulk_modify``); None where the general path must run."""
    txn = session.txn
    if txn is not None and (txn.explicit or txn.failed):
        return None
    node = stmt.node
    if getattr(node, "returningList", None) or getattr(node, "returningClause", None):
        return None  # the general path returns RETURNING's rows
    out = plan_bulk_modify(db, stmt, param_sets)
    if out is None:
        return None
    plan, updates, matched = out
    if isinstance(plan, P.UpdatePlan):
        db.writer.check_not_null(plan, [r for r, d in updates if d > 0])
    db.writer.apply(session, {plan.table_id: updates}, consolidated=True)
    return Result(f"{plan.tag} {matched}", None, rowcount=matched)
