"""CREATE SOURCE and DROP SOURCE -> plans.

Owns which sources mzlite can create -- load generators COUNTER, AUCTION, MARKETING and TPCH,
their options (``TICK INTERVAL``, ``AS OF``, ``UP TO``, ``SCALE FACTOR``, ``MAX CARDINALITY``)
checked and normalised into a ``CreateSourcePlan``; PostgreSQL through a connection
(``PUBLICATION``, ``FOR ALL TABLES | FOR TABLES``) into a ``CreatePostgresSourcePlan``; webhooks
(``BODY FORMAT``, ``INCLUDE HEADERS``/``HEADER``, the CHECK's inputs with its secrets resolved)
into a ``CreateWebhookSourcePlan`` -- the refusal, naming what is unsupported (0A000), of every
other connector (Kafka, MySQL, SQL Server), generator and option; DROP SOURCE's resolution into a ``DropPlan``; SHOW
SUBSOURCES; the refused source statements (``sql.mzsources.Refused``).  Invariant: a plan
names only options the generator honours -- an option mzlite cannot honour is refused,
never ignored.  Deliberately not here: the generators' outputs and data
(``storage.sources``), creating the catalog items and collections (``mzlite.sources``).
"""
from __future__ import annotations

from typing import Optional

from planner import plans as P
from planner.bind_drop import drop_items
from repr.dates import parse_interval
from repr.errors import EvalError
from sql import errors
from sql import mzsources as mz

#: generator -> the options it accepts
_OPTIONS = {
    "COUNTER": ("TICK INTERVAL", "AS OF", "UP TO", "MAX CARDINALITY"),
    "AUCTION": ("TICK INTERVAL", "AS OF", "UP TO"),
    "MARKETING": ("TICK INTERVAL", "AS OF", "UP TO"),
    "TPCH": ("SCALE FACTOR", "TICK INTERVAL", "AS OF", "UP TO"),
}
_MULTI_OUTPUT = ("AUCTION", "MARKETING", "TPCH")
_CONNECTOR_WORDS = {"POSTGRES": "PostgreSQL", "KAFKA": "Kafka", "MYSQL": "MySQL", "SQL SERVER": "SQL Server",
                    "WEBHOOK": "webhook"}


def _tick_ms(b, value, loc) -> int:
    if not isinstance(value, str):
        raise b.error(errors.INVALID_PARAMETER_VALUE, f"TICK INTERVAL must be an interval string, not {value!r}", loc)
    try:
        iv = parse_interval(value)
    except EvalError as e:
        raise b.error(e.sqlstate, e.message, loc) from None
    micros = iv.months * 30 * 86_400_000_000 + iv.days * 86_400_000_000 + iv.micros
    if micros < 1000:
        raise b.error(errors.INVALID_PARAMETER_VALUE, f"TICK INTERVAL must be at least 1 millisecond, not '{value}'",
                      loc)
    return micros // 1000


def _count(b, name: str, value, loc, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise b.error(errors.INVALID_PARAMETER_VALUE,
                      f"{name} must be an integer of at least {minimum}, not {value!r}", loc)
    return value


def create_source(b, stmt, node: mz.CreateSource):
    cloc = node.connector_location
    if node.connector == "POSTGRES" and node.connection is not None:
        return _postgres_source(b, stmt, node)
    if node.connector == "WEBHOOK":
        return _webhook_source(b, stmt, node)
    if node.connector != "LOAD GENERATOR":
        what = _CONNECTOR_WORDS.get(node.connector, node.connector)
        if node.connector == "POSTGRES":
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "CREATE SOURCE ... FROM POSTGRES needs CONNECTION name: "
                          "mzlite reads PostgreSQL through a connection (CREATE CONNECTION ... TO POSTGRES)", cloc)
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"CREATE SOURCE ... FROM {node.connector} is not supported: "
                      f"mzlite cannot ingest from {what} (its sources are PostgreSQL, webhooks and the load "
                      f"generators COUNTER, AUCTION, MARKETING and TPCH)", cloc)
    gen = node.generator
    if gen not in _OPTIONS:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"LOAD GENERATOR {gen} is not supported (mzlite has COUNTER, "
                      f"AUCTION, MARKETING and TPCH)", cloc)
    name = b.catalog.key_for(node.name, b.pos(node.location))
    schema = b.catalog.schema_of(node.name, b.pos(node.location), write=True)
    if b.catalog.try_resolve(name) is not None and not node.if_not_exists:
        raise b.error(errors.DUPLICATE_OBJECT, f"catalog item '{name}' already exists", node.location)
    if node.with_options:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"CREATE SOURCE ... WITH ({node.with_options[0][0]}) is not "
                      f"supported", cloc)
    seen: dict = {}
    for opt, value in node.options:
        if opt not in _OPTIONS[gen]:
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"LOAD GENERATOR {gen} option {opt} is not supported "
                          f"(it accepts {', '.join(_OPTIONS[gen])})", cloc)
        if opt in seen:
            raise b.error(errors.SYNTAX_ERROR, f"{opt} specified more than once", cloc)
        seen[opt] = value
    tick_ms: Optional[int] = None if gen == "TPCH" else 1000
    if "TICK INTERVAL" in seen:
        tick_ms = _tick_ms(b, seen["TICK INTERVAL"], cloc)
    as_of = _count(b, "AS OF", seen["AS OF"], cloc) if "AS OF" in seen else 0
    up_to = _count(b, "UP TO", seen["UP TO"], cloc) if "UP TO" in seen else None
    if up_to is not None and up_to < as_of:
        raise b.error(errors.INVALID_PARAMETER_VALUE, f"UP TO ({up_to}) must be at least AS OF ({as_of})", cloc)
    max_card = _count(b, "MAX CARDINALITY", seen["MAX CARDINALITY"], cloc, 1) if "MAX CARDINALITY" in seen else None
    scale = None
    if gen == "TPCH":
        scale = seen.get("SCALE FACTOR", 0.01)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale <= 10:
            raise b.error(errors.INVALID_PARAMETER_VALUE, f"SCALE FACTOR must be a number above 0 and at most 10, "
                          f"not {scale!r}", cloc)
        scale = float(scale)
    tables = None
    if gen in _MULTI_OUTPUT:
        if node.for_schemas is not None:
            raise b.error(errors.FEATURE_NOT_SUPPORTED, "FOR SCHEMAS is not supported for load generators", cloc)
        if not node.for_all_tables and node.for_tables is None:
            raise b.error(errors.SYNTAX_ERROR, "multi-output sources require a FOR TABLES (..) or FOR ALL TABLES "
                          "statement", cloc)
        if node.for_tables is not None:
            tables = tuple((t[-1], alias or t[-1]) for t, alias in node.for_tables)
    elif node.for_all_tables or node.for_tables is not None or node.for_schemas is not None:
        raise b.error(errors.SYNTAX_ERROR, "FOR ALL TABLES, FOR TABLES and FOR SCHEMAS are only valid for "
                      "multi-output sources", cloc)
    progress = node.expose_progress or (node.name[:-1] + (node.name[-1] + "_progress",))
    progress_name = b.catalog.key_for(progress, b.pos(node.location))
    return P.CreateSourcePlan(name, schema, gen.lower(), progress_name, tick_ms, as_of, up_to, scale, max_card,
                              tables, node.if_not_exists, stmt.text, node.in_cluster)


def _postgres_source(b, stmt, node: mz.CreateSource):
    cloc = node.connector_location
    name = b.catalog.key_for(node.name, b.pos(node.location))
    schema = b.catalog.schema_of(node.name, b.pos(node.location), write=True)
    if b.catalog.try_resolve(name) is not None and not node.if_not_exists:
        raise b.error(errors.DUPLICATE_OBJECT, f"catalog item '{name}' already exists", node.location)
    conn = b.catalog.resolve(node.connection, position=b.pos(cloc))
    if conn.kind != "connection" or conn.connection is None or conn.connection[0] != "postgres":
        raise b.error(errors.WRONG_OBJECT_TYPE, f'"{conn.name}" is not a PostgreSQL connection', cloc)
    publication = None
    for opt, value in node.options:
        if opt != "PUBLICATION":
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"POSTGRES source option {opt} is not supported (mzlite "
                          f"accepts PUBLICATION)", cloc)
        if not isinstance(value, str):
            raise b.error(errors.INVALID_PARAMETER_VALUE, "PUBLICATION must be a string", cloc)
        publication = value
    if publication is None:
        raise b.error(errors.INVALID_PARAMETER_VALUE, "a POSTGRES source needs (PUBLICATION 'name')", cloc)
    if node.with_options:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"CREATE SOURCE ... WITH ({node.with_options[0][0]}) is not "
                      f"supported", cloc)
    if not node.for_all_tables and node.for_tables is None and node.for_schemas is None:
        raise b.error(errors.SYNTAX_ERROR, "multi-output sources require a FOR TABLES (..) or FOR ALL TABLES "
                      "statement", cloc)
    tables = None
    if node.for_tables is not None:
        out = []
        for parts, alias in node.for_tables:
            if len(parts) > 2:
                raise b.error(errors.FEATURE_NOT_SUPPORTED, f"a database-qualified table ({'.'.join(parts)}) is "
                              f"not supported: name it schema.table", cloc)
            out.append(((parts[0] if len(parts) == 2 else None, parts[-1]), alias or parts[-1]))
        tables = tuple(out)
    progress = node.expose_progress or (node.name[:-1] + (node.name[-1] + "_progress",))
    progress_name = b.catalog.key_for(progress, b.pos(node.location))
    b.depends_on.add(conn.id)
    schemas = tuple(dict.fromkeys(node.for_schemas)) if node.for_schemas is not None else None
    return P.CreatePostgresSourcePlan(name, schema, conn.id, publication, progress_name, tables,
                                      node.if_not_exists, stmt.text, node.in_cluster, schemas)


def _webhook_source(b, stmt, node: mz.CreateSource):
    hook, cloc = node.webhook, node.connector_location
    name = b.catalog.key_for(node.name, b.pos(node.location))
    schema = b.catalog.schema_of(node.name, b.pos(node.location), write=True)
    if b.catalog.try_resolve(name) is not None and not node.if_not_exists:
        raise b.error(errors.DUPLICATE_OBJECT, f"catalog item '{name}' already exists", node.location)
    if hook.body_format not in ("JSON", "TEXT", "BYTES"):
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"BODY FORMAT {hook.body_format} is not supported (mzlite's "
                      f"webhooks take JSON, TEXT and BYTES)", cloc)
    if hook.header_filter:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "INCLUDE HEADERS (...) with a header filter is not supported: "
                      "INCLUDE HEADERS takes every header", cloc)
    columns = ["body"] + (["headers"] if hook.include_headers else []) + [c for _, c, _ in hook.header_columns]
    for col in columns:
        if columns.count(col) > 1:
            raise b.error(errors.DUPLICATE_COLUMN, f'column "{col}" specified more than once', cloc)
    inputs, seen = [], set()
    for kind, secret, alias, as_bytes in hook.check_with:
        sid = None
        if kind == "SECRET":
            item = b.catalog.resolve(secret, position=b.pos(cloc))
            if item.kind != "secret":
                raise b.error(errors.WRONG_OBJECT_TYPE, f'"{item.name}" is not a secret', cloc)
            sid = item.id
            b.depends_on.add(sid)
        col = alias or (secret[-1] if secret else kind.lower())
        if col in seen:
            raise b.error(errors.DUPLICATE_COLUMN, f'"{col}" is named more than once in CHECK\'s WITH', cloc)
        seen.add(col)
        inputs.append((kind.lower(), sid, col, as_bytes))
    return P.CreateWebhookSourcePlan(name, schema, hook.body_format.lower(), hook.include_headers,
                                     hook.header_columns, hook.check, tuple(inputs), node.if_not_exists, stmt.text,
                                     node.in_cluster)


def refused(b, stmt, node: mz.Refused):
    reason = f": {node.reason}" if node.reason else ""
    raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{node.what} is not supported{reason}", 0)


def show_subsources(b, stmt, node: mz.ShowSubsources):
    on = None
    if node.on is not None:
        item = b.catalog.resolve(node.on, position=b.pos(node.location))
        if item.kind != "source" or item.source is None or item.source.parent is not None:
            raise b.error(errors.WRONG_OBJECT_TYPE, f'"{item.name}" is not a source', node.location)
        on = item.id
    return P.ShowObjectsPlan("subsources", on, None)


def drop_source(b, stmt, node: mz.DropSources):
    def check(item):
        if item.source is not None and item.source.type == "progress":
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f'cannot drop progress collection "{item.name}": it is '
                          f'dropped with its source', node.location)
    return drop_items(b, stmt, node, "source", errors.UNDEFINED_TABLE, check,
                      lambda item, cascade, position: _drop_order(b, item, cascade, position))


def _drop_order(b, item, cascade: bool, position):
    """The ids DROP SOURCE ``item`` drops, dependents first.  Its progress collection goes with
    it even without CASCADE (as Materialize's does); any other dependent -- a subsource, a
    view -- needs CASCADE (2BP01)."""
    cat = b.catalog
    if cascade:
        return cat.check_drop(item.id, True, position)
    out = []
    for d in cat.direct_dependents(item.id):
        if d.kind == "index" and d.on_id == item.id:
            out.append(d.id)
        elif d.source is not None and d.source.type == "progress" and d.source.parent == item.id:
            out.extend(x for x in cat.check_drop(d.id, False, position) if x not in out)
        else:
            raise errors.error_for(errors.DEPENDENT_OBJECTS_STILL_EXIST, f"cannot drop source {item.name}: still "
                                   f"depended upon by {d.kind_word()} {d.name}", position=position)
    return out + [item.id]
