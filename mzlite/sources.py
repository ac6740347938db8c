"""Sources in the adapter: CREATE SOURCE's effects, dropping a source, and what SHOW and
``mz_sources`` say about them.

Owns the sequencer's handlers of ``CreateSourcePlan`` and ``CreatePostgresSourcePlan`` (a
PostgreSQL source: its publication's tables described, a subsource per table, the slot and
the snapshot of ``storage.sources.postgres``; a data directory replays it from the persisted
description and position without contacting PostgreSQL).  For a load generator: the generator
(``storage.sources``), one catalog item of kind ``source`` per collection -- the source
itself, its progress collection and, for a multi-output generator, one subsource per output
in the source's schema -- each a storage collection written by the source's ingestion through
table group commit, and the ``Ingestion`` that writes them, registered with storage and run
once so the source's first tick is visible when CREATE SOURCE returns.  Invariants: a
source's items get consecutive ids (the source, then its progress collection, then its
subsources in the generator's output order), so a data directory replays the one CREATE
SOURCE statement and every item comes back with its persisted id; a source's collections
are written only by its ingestion (the planner refuses INSERT, UPDATE, DELETE and COPY
into them); in a data directory the subsources keep their data and the ingestion resumes at
its persisted offset and generator state.  Deliberately not here: parsing and option
checking (``sql.mzsources``, ``planner.bind_sources``), the generators and the tick
schedule (``storage.sources``), when ticks are ingested (the coordinator's tick and
``Reader``).
"""
from __future__ import annotations

from mzlite.connections import conninfo
from mzlite.cursor import Result
from planner.catalog import CatalogItem, ColumnDef, SourceInfo
from repr.ids import GlobalId
from sql import errors as E
from storage.sources.generators import Auction, Counter, Marketing
from storage.sources.ingest import Ingestion, state_key

PROGRESS_COLUMNS = (ColumnDef("offset", "int8", True),)


def make_generator(plan):
    if plan.generator == "counter":
        return Counter(plan.max_cardinality)
    if plan.generator == "auction":
        return Auction()
    if plan.generator == "marketing":
        return Marketing()
    if plan.generator == "tpch":
        from storage.sources.tpch import Tpch
        return Tpch(plan.scale_factor)
    raise E.NotSupportedError(f"LOAD GENERATOR {plan.generator.upper()} is not supported")


def _columns(spec) -> tuple:
    return tuple(ColumnDef(n, t, nullable) for n, t, nullable in spec)


def create_source(db, session, plan, stmt, params) -> Result:
    from mzlite.ddl import require_cluster
    cat = db.catalog
    if cat.try_resolve(plan.name) is not None:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_OBJECT, f"catalog item '{plan.name}' already exists")
    session.refuse_in_transaction(plan)
    cluster = require_cluster(db, session, plan.in_cluster)
    gen = make_generator(plan)
    specs = dict(gen.outputs)
    if gen.multi_output:
        wanted = plan.tables if plan.tables is not None else tuple((o, o) for o, _ in gen.outputs if o)
        for output, _ in wanted:
            if output not in specs or not output:
                raise E.error_for(E.UNDEFINED_OBJECT, f'reference to {output} not found in source (LOAD GENERATOR '
                                  f'{plan.generator.upper()} has {", ".join(o for o, _ in gen.outputs if o)})')
        prefix = "" if plan.schema == "public" else plan.schema + "."
        subs = [(output, prefix + name) for output, name in wanted]
    else:
        subs = []
    names = [plan.name, plan.progress_name] + [n for _, n in subs]
    for n in names[1:]:
        if cat.try_resolve(n) is not None or names.count(n) > 1:
            raise E.error_for(E.DUPLICATE_OBJECT, f"catalog item '{n}' already exists")
    src = db.allocate_user()
    ids = [src] + [GlobalId("u", src.n + k) if db.replaying else db.allocate_user() for k in range(1, len(names))]
    progress_id = ids[1]
    items = [CatalogItem(src, plan.name, "source", _columns(specs[""]), create_sql=plan.create_sql, cluster=cluster,
                         source=SourceInfo("load-generator", plan.generator)),
             CatalogItem(progress_id, plan.progress_name, "source", PROGRESS_COLUMNS, depends_on=frozenset({src}),
                         source=SourceInfo("progress", plan.generator, parent=src))]
    outputs = {} if gen.multi_output else {"": src}
    for gid, (output, name) in zip(ids[2:], subs):
        items.append(CatalogItem(gid, name, "source", _columns(specs[output]), depends_on=frozenset({src}),
                                 cluster=cluster,
                                 source=SourceInfo("subsource", plan.generator, parent=src, output=output)))
        outputs[output] = gid
    created = []
    try:
        for item in items:
            db.storage.create_table(item.id, item.arity())
            created.append(item.id)
        for item in items:
            cat.add(item)
    except Exception:
        for gid in created:
            db.storage.drop(gid)
            if gid in cat:
                cat.remove(gid)
        raise
    state = db.storage.restored_meta.pop(state_key(src), None)
    ingestion = Ingestion(src, gen, outputs, progress_id, tick_ms=plan.tick_ms, as_of=plan.as_of, up_to=plan.up_to,
                          now_ms=db.oracle.clock(), state=state)
    db.storage.sources.add(ingestion)
    db.storage.sources.run(db.oracle.clock())  # the first tick is due now
    return Result(plan.tag, None)


def drop_source_item(db, item) -> None:
    """Stop ingesting into ``item`` (a source, subsource or progress collection) before it is
    dropped: a source's ingestion ends (a PostgreSQL source's replication slot is dropped); a
    subsource or progress collection is no longer written."""
    info = item.source
    if info is None:
        return
    if info.parent is None:
        ing = db.storage.sources.remove(item.id)
        if ing is not None and hasattr(ing, "drop_slot"):
            ing.drop_slot()
    else:
        db.storage.sources.forget_collection(info.parent, item.id)


def source_rows(db) -> list:
    """``(id, name, type, cluster)`` of every source item, in id order (``id`` a ``GlobalId``);
    a subsource shows its source's cluster, a progress collection none (as Materialize shows them)."""
    out = []
    for item in db.catalog.items("source"):
        info = item.source
        out.append((item.id, item.name, info.type if info is not None else "source",
                    item.cluster if info is None or info.type != "progress" else None))
    return out


# ------------------------------------------------------------------ PostgreSQL sources


def conninfo_of(db, conn) -> dict:
    """psycopg's connection parameters for the PostgreSQL connection item ``conn``."""
    return conninfo(db, conn.name, conn.connection[1])


def create_postgres_source(db, session, plan, stmt, params) -> Result:
    """CREATE SOURCE ... FROM POSTGRES: the publication's tables described (or, replaying a data
    directory, the persisted description), a subsource per table, the slot and the snapshot
    (``storage.sources.postgres``)."""
    from mzlite.ddl import require_cluster
    from storage.sources.postgres import PostgresIngestion, SourceError, describe
    cat = db.catalog
    if cat.try_resolve(plan.name) is not None:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_OBJECT, f"catalog item '{plan.name}' already exists")
    session.refuse_in_transaction(plan)
    cluster = require_cluster(db, session, plan.in_cluster)
    conninfo = conninfo_of(db, cat.get(plan.connection_id))
    # replaying: the persisted description (keyed by the id the item is replayed with); else
    # PostgreSQL is asked before any id is allocated, so the source's ids stay consecutive
    state = db.storage.restored_meta.pop(state_key(db.forced_user_id), None) if db.replaying else None
    try:
        if state is not None:
            described = [(s, n, oid, [tuple(c) for c in cols]) for s, n, oid, cols in state["tables"]]
        else:
            with db.unlocked():  # a network round trip
                described = describe(conninfo, plan.publication, None if plan.tables is None
                                     else [t for t, _alias in plan.tables], schemas=plan.schemas)
    except SourceError as e:
        raise E.error_for(e.sqlstate, e.message) from None
    aliases = {t[1]: alias for t, alias in plan.tables} if plan.tables is not None else {}
    prefix = "" if plan.schema == "public" else plan.schema + "."
    subs = [(s, n, oid, cols, prefix + aliases.get(n, n)) for s, n, oid, cols in described]
    names = [plan.name, plan.progress_name] + [sub[4] for sub in subs]
    for n in names:
        if cat.try_resolve(n) is not None or names.count(n) > 1:
            raise E.error_for(E.DUPLICATE_OBJECT, f"catalog item '{n}' already exists")
    src = db.allocate_user()
    ids = [src] + [GlobalId("u", src.n + k) if db.replaying else db.allocate_user() for k in range(1, len(names))]
    items = [CatalogItem(src, plan.name, "source", (), create_sql=plan.create_sql, cluster=cluster,
                         depends_on=frozenset({plan.connection_id}), source=SourceInfo("postgres", "postgres")),
             CatalogItem(ids[1], plan.progress_name, "source", (ColumnDef("lsn", "int8", True),),
                         depends_on=frozenset({src}), source=SourceInfo("progress", "postgres", parent=src))]
    tables = []
    for gid, (s, n, oid, cols, name) in zip(ids[2:], subs):
        items.append(CatalogItem(gid, name, "source", tuple(ColumnDef(c[0], c[2], c[3]) for c in cols),
                                 depends_on=frozenset({src}), cluster=cluster,
                                 source=SourceInfo("subsource", "postgres", parent=src, output=f"{s}.{n}")))
        tables.append((s, n, oid, cols, gid))
    ing = PostgresIngestion(src, conninfo, plan.publication, tables, ids[1], state)
    created = []
    try:
        for item in items:
            db.storage.create_table(item.id, item.arity())
            created.append(item.id)
        if state is None:
            with db.unlocked():
                ing.snapshot(db.storage)
        for item in items:
            cat.add(item)
    except BaseException as e:
        for gid in created:
            db.storage.drop(gid)
            if gid in cat:
                cat.remove(gid)
        if state is None:
            ing.drop_slot()
        if isinstance(e, SourceError):
            raise E.error_for(e.sqlstate, e.message) from None
        raise
    if ing.failed:  # restored: subsources that had failed stay failed
        for gid, message in ing.failed.items():
            db.storage.fail_collections([gid], message)
    db.storage.sources.add(ing)
    return Result(plan.tag, None)
