"""Webhook sources in the adapter: CREATE SOURCE ... FROM WEBHOOK and receiving a request.

Owns the sequencer's handler of ``CreateWebhookSourcePlan`` (the source's one catalog item
of kind ``source`` -- columns ``body`` (jsonb, text or bytea), ``headers`` (``map[text=>text]``,
with INCLUDE HEADERS) and one column per INCLUDE HEADER -- its storage collection and its
``storage.sources.webhook.WebhookIngestion``; the CHECK expression is planned once here, so
one that does not plan or is not boolean is refused at CREATE), and ``receive``: one HTTP
request (its lower-cased headers and raw body) checked and appended as one row.  Invariants:
a request whose CHECK is false, NULL or fails, whose JSON body does not parse or whose TEXT
body is not UTF-8 adds nothing (``Rejected``, 400 over HTTP); a request for a relation that
is not a webhook source is ``NotFound`` (404); the CHECK runs as an ordinary SELECT of the
caller's session over one row of its inputs, the secrets' values passed as parameters
(never in SQL text).  Embedded (without ``mzlite serve --http-port``) a webhook source is
created and readable but nothing calls ``receive``.  Deliberately not here: HTTP
(``server.webhook``), the commit (``storage.sources.webhook``).
"""
from __future__ import annotations

from dataclasses import dataclass

from mzlite.cursor import Result
from planner.catalog import CatalogItem, ColumnDef, SourceInfo
from repr.errors import EvalError
from repr.jsonb import parse_jsonb
from repr.maps import make_map
from sql import errors as E
from storage.sources.webhook import WebhookIngestion

_BODY_TYPES = {"json": "jsonb", "text": "text", "bytes": "bytea"}


class NotFound(E.ProgrammingError):
    """No webhook source at that name (HTTP 404)."""
    default_sqlstate = E.UNDEFINED_TABLE


class Rejected(E.DataError):
    """The request was refused: CHECK not true, or a body that does not decode (HTTP 400)."""
    default_sqlstate = E.INVALID_PARAMETER_VALUE


@dataclass(frozen=True)
class WebhookSpec:
    body_format: str             #: json, text or bytes
    include_headers: bool
    header_columns: tuple        #: (header name lower-cased, column, bytes)
    check_sql: str | None        #: SELECT (<check>) over the inputs, $1.. in check_with order
    check_with: tuple            #: (headers | body | secret, secret id or None, name, bytes)


def _check_sql(plan) -> str:
    cols = []
    for k, (kind, _sid, name, as_bytes) in enumerate(plan.check_with, 1):
        t = "map[text=>text]" if kind == "headers" and not as_bytes else ("bytea" if as_bytes else "text")
        src = f"${k}::text::map[text=>text]" if kind == "headers" and not as_bytes else f"${k}::{t}"
        if kind == "headers" and as_bytes:
            raise E.error_for(E.FEATURE_NOT_SUPPORTED, "CHECK (WITH (HEADERS BYTES)) is not supported: headers are "
                              "map[text=>text]")
        cols.append(f'{src} AS "{name}"')
    inputs = ", ".join(cols) if cols else "1 AS _"
    return f"SELECT ({plan.check}) AS ok FROM (SELECT {inputs}) AS webhook_request"


def create_webhook_source(db, session, plan, stmt, params) -> Result:
    from mzlite.ddl import require_cluster
    from mzlite.describe import describe_statement
    cat = db.catalog
    if cat.try_resolve(plan.name) is not None:
        if plan.if_not_exists:
            return Result(plan.tag, None)
        raise E.error_for(E.DUPLICATE_OBJECT, f"catalog item '{plan.name}' already exists")
    session.refuse_in_transaction(plan)
    cluster = require_cluster(db, session, plan.in_cluster)
    check_sql = None
    if plan.check is not None:
        check_sql = _check_sql(plan)
        try:
            _types, checked = describe_statement(db.parse_one(check_sql), cat, ())
        except E.Error as e:
            raise E.error_for(e.sqlstate, f"invalid CHECK expression: {e.message}") from None
        if [t for _n, t in checked.columns] != ["bool"]:
            raise E.error_for(E.DATATYPE_MISMATCH, f"CHECK must be boolean, not {checked.columns[0][1]}")
    columns = [ColumnDef("body", _BODY_TYPES[plan.body_format], False)]
    if plan.include_headers:
        columns.append(ColumnDef("headers", "map[text=>text]", False))
    columns += [ColumnDef(col, "bytea" if as_bytes else "text", True) for _h, col, as_bytes in plan.header_columns]
    spec = WebhookSpec(plan.body_format, plan.include_headers,
                       tuple((h.lower(), c, b) for h, c, b in plan.header_columns), check_sql, plan.check_with)
    src = db.allocate_user()
    item = CatalogItem(src, plan.name, "source", tuple(columns), create_sql=plan.create_sql, cluster=cluster,
                       depends_on=frozenset(sid for _k, sid, _n, _b in plan.check_with if sid is not None),
                       source=SourceInfo("webhook", "webhook"))
    db.storage.create_table(src, item.arity())
    try:
        cat.add(item)
    except Exception:
        db.storage.drop(src)
        raise
    db.storage.sources.add(WebhookIngestion(src, spec))
    return Result(plan.tag, None)


def _find(db, database: str, schema: str, name: str):
    item = db.catalog.try_resolve((database, schema, name))
    ing = db.storage.sources.get(item.id) if item is not None and item.kind == "source" else None
    if not isinstance(ing, WebhookIngestion):
        raise NotFound(f"no webhook source named {database}.{schema}.{name}")
    return ing


def receive(con, database: str, schema: str, name: str, headers, body: bytes) -> None:
    """Check one request (``headers``: ``(name, value)`` pairs; ``body`` its bytes) against
    webhook source ``database.schema.name`` and append it as one row; ``NotFound`` or
    ``Rejected`` otherwise (see the module docstring)."""
    db = con.database
    ing = _find(db, database, schema, name)
    spec: WebhookSpec = ing.spec
    hdrs: dict = {}
    for k, v in headers:
        k = k.lower()
        hdrs[k] = f"{hdrs[k]},{v}" if k in hdrs else v
    header_map = make_map(sorted(hdrs.items()))
    try:
        text = body.decode("utf-8") if spec.body_format != "bytes" or spec.check_sql else None
    except UnicodeDecodeError:
        if spec.body_format != "bytes":
            raise Rejected("the request body is not valid UTF-8") from None
        text = None
    if spec.check_sql is not None:
        _check(con, db, spec, hdrs, body, text)
    if spec.body_format == "json":
        try:
            value = parse_jsonb(text)
        except EvalError as e:
            raise Rejected(f"the request body is not valid JSON: {e.message}") from None
    else:
        value = text if spec.body_format == "text" else body
    row = [value]
    if spec.include_headers:
        row.append(header_map)
    for h, _col, as_bytes in spec.header_columns:
        v = hdrs.get(h)
        row.append(v.encode() if as_bytes and v is not None else v)
    if not ing.append(db.storage.sources, tuple(row)):
        raise NotFound(f"no webhook source named {database}.{schema}.{name}")
    db.controller.assist_after_write()


def _check(con, db, spec: WebhookSpec, hdrs: dict, body: bytes, text) -> None:
    from repr.maps import map_out
    params = []
    for kind, sid, _name, as_bytes in spec.check_with:
        if kind == "headers":
            params.append(map_out(make_map(sorted(hdrs.items())), str))
        elif kind == "body":
            if not as_bytes and text is None:
                raise Rejected("the request body is not valid UTF-8")
            params.append(body if as_bytes else text)
        else:
            value = db.secrets.get(sid)
            if value is None:
                raise Rejected("a secret the CHECK names no longer exists")
            params.append(value if as_bytes else value.decode("utf-8", "replace"))
    try:
        ok = con.execute(spec.check_sql, params).fetchall()
    except E.Error as e:
        raise Rejected(f"the CHECK failed: {e.message}") from None
    if not ok or ok[0][0] is not True:
        raise Rejected("the CHECK rejected the request")
