"""Secrets and connections in the adapter: CREATE/ALTER SECRET, CREATE/VALIDATE CONNECTION,
and what SHOW and ``mz_secrets``/``mz_connections`` say about them.

Owns where a secret's value lives -- ``Database.secrets`` (id -> bytes), beside the catalog
and never in it: a secret's catalog item carries its name only and its ``create_sql`` is
redacted (``CREATE SECRET s AS '********'``) -- and, in a data directory, the store's ``meta``
entry ``secret:<id>`` written with the catalog (``catalog_store.sync``) and read back when the
CREATE SECRET is replayed; validating a PostgreSQL connection by connecting to it with
psycopg (``SELECT 1``, the password read from its secret).  Invariants: no result, error,
introspection relation or SHOW output contains a secret's value; a connection depends on
the secrets it names (DROP SECRET needs CASCADE while one does).  Deliberately not here:
parsing and option checking (``sql.mzconnections``, ``planner.bind_connections``); sources
over a connection (``mzlite.sources``).
"""
from __future__ import annotations

from mzlite.cursor import Result
from planner.catalog import CatalogItem
from sql import errors as E

#: how long VALIDATE CONNECTION waits for PostgreSQL to answer (seconds)
CONNECT_TIMEOUT = 5


def secret_key(gid) -> str:
    """The store's meta key of a secret's value."""
    return f"secret:{gid}"


def create_secret(db, session, plan, stmt, params) -> Result:
    if db.catalog.try_resolve(plan.name) is not None:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_OBJECT, f"catalog item '{plan.name}' already exists")
    session.refuse_in_transaction(plan)
    gid = db.allocate_user()
    value = plan.value
    if db.replaying:  # the catalog's text is redacted: the value comes from the store
        value = db.storage.restored_meta.get(secret_key(gid))
        if not isinstance(value, bytes):
            raise E.error_for("XX001", f"the value of secret {plan.name!r} ({gid}) is missing from the data directory")
    db.catalog.add(CatalogItem(gid, plan.name, "secret", create_sql=plan.create_sql))
    db.secrets[gid] = value
    return Result(plan.tag, None)


def alter_secret(db, session, plan, stmt, params) -> Result:
    session.refuse_in_transaction(plan)
    if plan.id is not None:
        db.secrets[plan.id] = plan.value
    return Result(plan.tag, None)


def create_connection(db, session, plan, stmt, params) -> Result:
    if db.catalog.try_resolve(plan.name) is not None:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_OBJECT, f"catalog item '{plan.name}' already exists")
    session.refuse_in_transaction(plan)
    if plan.validate and not db.replaying:
        _validate(db, plan.name, plan.options)
    gid = db.allocate_user()
    db.catalog.add(CatalogItem(gid, plan.name, "connection", create_sql=plan.create_sql,
                               depends_on=frozenset(plan.depends_on), connection=(plan.type, tuple(plan.options))))
    return Result(plan.tag, None)


def validate_connection(db, session, plan, stmt, params) -> Result:
    item = db.catalog.get(plan.id)
    _validate(db, item.name, item.connection[1])
    return Result(plan.tag, None)


def conninfo(db, name: str, options) -> dict:
    """psycopg's connection parameters for the PostgreSQL connection ``name`` with ``options``
    (its secret's value read now: 42704 when the secret is gone)."""
    opts = dict(options)
    kw = {"host": opts["HOST"], "user": opts["USER"], "connect_timeout": CONNECT_TIMEOUT}
    if "PORT" in opts:
        kw["port"] = opts["PORT"]
    if "DATABASE" in opts:
        kw["dbname"] = opts["DATABASE"]
    if "SSL MODE" in opts:
        kw["sslmode"] = opts["SSL MODE"].lower()
    if "PASSWORD" in opts:
        secret = db.secrets.get(opts["PASSWORD"])
        if secret is None:
            raise E.error_for(E.UNDEFINED_OBJECT, f"the password secret of connection {name} no longer exists")
        kw["password"] = secret.decode("utf-8", "replace")
    return kw


def _validate(db, name: str, options) -> None:
    """Connect to the PostgreSQL server ``options`` describe and run ``SELECT 1``; 08001 when
    it cannot be reached or refuses us (the message never holds the password)."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency of the test extra only
        raise E.error_for(E.FEATURE_NOT_SUPPORTED, "validating a PostgreSQL connection needs psycopg "
                                                   "(pip install psycopg), or WITH (VALIDATE = false)") from None
    kw = conninfo(db, name, options)
    try:
        with db.unlocked():  # a network round trip: other sessions go on meanwhile
            with psycopg.connect(**kw) as pg:
                pg.execute("SELECT 1")
    except psycopg.Error as e:
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if "password" in kw:
            text = text.replace(kw["password"], "********")
        raise E.error_for("08001", f"cannot connect to PostgreSQL for connection {name}: {text}") from None


def secret_rows(db) -> list:
    """``(id, name)`` of every secret, in id order (never its value)."""
    return [(item.id, item.name) for item in db.catalog.items("secret")]


def connection_rows(db) -> list:
    """``(id, name, type)`` of every connection, in id order."""
    return [(item.id, item.name, item.connection[0] if item.connection else "") for item in
            db.catalog.items("connection")]
