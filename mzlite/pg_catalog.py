"""The ``pg_catalog`` relations PostgreSQL clients read, and the type OIDs they agree on.

Owns ``PG_TYPES`` (mzlite's types as PostgreSQL's ``pg_type`` has them: OID, typname,
typlen, category, array OID; the OIDs of the types PostgreSQL also has are PostgreSQL's,
``mz_timestamp`` Materialize's), the OID scheme of mzlite's objects (namespaces with
PostgreSQL's OIDs where PostgreSQL has the schema; ``relation_oid``), and the definitions and
contents of ``pg_namespace``, ``pg_class``, ``pg_attribute``, ``pg_type``, ``pg_index``,
``pg_am``, ``pg_database`` and ``pg_cursors``, enough for psql's ``\\dt \\dv \\dm \\di \\dn
\\l``, psycopg's server-side cursors and drivers' type lookups.  ``mzlite.introspection``
refreshes them like every system relation.
Invariants: an object's OID is a function of its id (stable while it exists, never reused);
OID columns are ``int4`` (mzlite has no ``oid`` type), which compare with the integers clients
send.  Deliberately not here: everything PostgreSQL keeps there that mzlite has no notion of
(roles beyond one owner, ACLs, constraints, operators, functions: ``pg_proc`` is absent, so
psql's ``\\df`` fails with 42P01), and ``pg_cursors`` is database-wide (every session's SQL
cursors), not per session as in PostgreSQL.
"""
from __future__ import annotations

#: (mzlite name, display name, oid, typname, typlen, typcategory, array oid)
PG_TYPES = (
    ("bool", "boolean", 16, "bool", 1, "B", 1000), ("bytea", "bytea", 17, "bytea", -1, "U", 1001),
    ("int8", "bigint", 20, "int8", 8, "N", 1016), ("int2", "smallint", 21, "int2", 2, "N", 1005),
    ("int4", "integer", 23, "int4", 4, "N", 1007), ("text", "text", 25, "text", -1, "S", 1009),
    ("oid", "oid", 26, "oid", 4, "N", 1028), ("float4", "real", 700, "float4", 4, "N", 1021),
    ("float8", "double precision", 701, "float8", 8, "N", 1022), ("unknown", "unknown", 705, "unknown", -2, "X", 0),
    ("bpchar", "character", 1042, "bpchar", -1, "S", 1014),
    ("varchar", "character varying", 1043, "varchar", -1, "S", 1015), ("date", "date", 1082, "date", 4, "D", 1182),
    ("time", "time without time zone", 1083, "time", 8, "D", 1183),
    ("timestamp", "timestamp without time zone", 1114, "timestamp", 8, "D", 1115),
    ("timestamptz", "timestamp with time zone", 1184, "timestamptz", 8, "D", 1185),
    ("interval", "interval", 1186, "interval", 16, "T", 1187), ("numeric", "numeric", 1700, "numeric", -1, "N", 1231),
    ("uuid", "uuid", 2950, "uuid", 16, "U", 2951), ("jsonb", "jsonb", 3802, "jsonb", -1, "U", 3807),
    ("record", "record", 2249, "record", -1, "P", 2287),
    ("mz_timestamp", "mz_timestamp", 16552, "mz_timestamp", 8, "D", 16553),
)
JSON_OID = 114

#: schema -> OID (PostgreSQL's for pg_catalog, public and information_schema's usual one)
NAMESPACES = {"pg_catalog": 11, "public": 2200, "information_schema": 13000, "mz_catalog": 16661,
              "mz_internal": 16662}
DATABASE_OID = 16384
OWNER_OID = 10
BTREE_OID, HEAP_OID = 403, 2


def relation_oid(gid) -> int:
    """The OID of a catalog item: user objects from 20000 up (``pg_table_is_visible``, in
    ``expr.functions.text``, reads the same boundary), system ones from 15000."""
    return (20000 if gid.is_user() else 15000) + gid.n


def type_oid(type_name: str) -> int:
    """The OID of an mzlite type name (short or display; arrays as ``t[]``); 25 (text) for
    types PostgreSQL has no counterpart of (Materialize's lists)."""
    return _OIDS.get(type_name, 25)


_OIDS: dict = {}
for _n, _d, _oid, _typname, _len, _cat, _arr in PG_TYPES:
    _OIDS[_n] = _OIDS[_d] = _oid
    if _arr:
        _OIDS[_n + "[]"] = _OIDS[_d + "[]"] = _arr

_INT, _TEXT, _BOOL = "int4", "text", "bool"

#: relation -> its columns (a prefix of PostgreSQL 15's, in its order, where mzlite has the facts)
RELATIONS = {
    "pg_namespace": (("oid", _INT), ("nspname", _TEXT), ("nspowner", _INT), ("nspacl", "text[]")),
    "pg_class": (("oid", _INT), ("relname", _TEXT), ("relnamespace", _INT), ("reltype", _INT),
                 ("reloftype", _INT), ("relowner", _INT), ("relam", _INT), ("relfilenode", _INT),
                 ("reltablespace", _INT), ("relpages", _INT), ("reltuples", "float4"), ("relallvisible", _INT),
                 ("reltoastrelid", _INT), ("relhasindex", _BOOL), ("relisshared", _BOOL),
                 ("relpersistence", _TEXT), ("relkind", _TEXT), ("relnatts", "int2"), ("relchecks", "int2"),
                 ("relhasrules", _BOOL), ("relhastriggers", _BOOL), ("relhassubclass", _BOOL),
                 ("relrowsecurity", _BOOL), ("relforcerowsecurity", _BOOL), ("relispopulated", _BOOL),
                 ("relreplident", _TEXT), ("relispartition", _BOOL), ("relrewrite", _INT),
                 ("relfrozenxid", _INT), ("relminmxid", _INT), ("relacl", "text[]"), ("reloptions", "text[]")),
    "pg_attribute": (("attrelid", _INT), ("attname", _TEXT), ("atttypid", _INT), ("attstattarget", _INT),
                     ("attlen", "int2"), ("attnum", "int2"), ("attndims", _INT), ("attcacheoff", _INT),
                     ("atttypmod", _INT), ("attbyval", _BOOL), ("attalign", _TEXT), ("attstorage", _TEXT),
                     ("attcompression", _TEXT), ("attnotnull", _BOOL), ("atthasdef", _BOOL),
                     ("atthasmissing", _BOOL), ("attidentity", _TEXT), ("attgenerated", _TEXT),
                     ("attisdropped", _BOOL), ("attislocal", _BOOL), ("attinhcount", _INT),
                     ("attcollation", _INT)),
    "pg_type": (("oid", _INT), ("typname", _TEXT), ("typnamespace", _INT), ("typowner", _INT),
                ("typlen", "int2"), ("typbyval", _BOOL), ("typtype", _TEXT), ("typcategory", _TEXT),
                ("typispreferred", _BOOL), ("typisdefined", _BOOL), ("typdelim", _TEXT), ("typrelid", _INT),
                ("typsubscript", _TEXT), ("typelem", _INT), ("typarray", _INT), ("typinput", _TEXT),
                ("typoutput", _TEXT), ("typreceive", _TEXT), ("typsend", _TEXT), ("typnotnull", _BOOL),
                ("typbasetype", _INT), ("typtypmod", _INT), ("typndims", _INT), ("typcollation", _INT)),
    "pg_index": (("indexrelid", _INT), ("indrelid", _INT), ("indnatts", "int2"), ("indnkeyatts", "int2"),
                 ("indisunique", _BOOL), ("indisprimary", _BOOL), ("indisexclusion", _BOOL),
                 ("indimmediate", _BOOL), ("indisclustered", _BOOL), ("indisvalid", _BOOL),
                 ("indisready", _BOOL), ("indislive", _BOOL), ("indkey", _TEXT)),
    "pg_am": (("oid", _INT), ("amname", _TEXT), ("amhandler", _TEXT), ("amtype", _TEXT)),
    "pg_database": (("oid", _INT), ("datname", _TEXT), ("datdba", _INT), ("encoding", _INT),
                    ("datlocprovider", _TEXT), ("datistemplate", _BOOL), ("datallowconn", _BOOL),
                    ("datconnlimit", _INT), ("datcollate", _TEXT), ("datctype", _TEXT),
                    ("daticulocale", _TEXT), ("datacl", "text[]")),
    "pg_cursors": (("name", _TEXT), ("statement", _TEXT), ("is_holdable", _BOOL), ("is_binary", _BOOL),
                   ("is_scrollable", _BOOL)),
}

_RELKIND = {"table": "r", "view": "v", "materialized_view": "m", "index": "i"}


def rows(db, name: str, schema_of) -> list:
    """The contents of ``pg_catalog.<name>`` (``schema_of(item)``: the item's schema)."""
    return _ROWS[name](db, schema_of)


def _items(db):
    """Every catalog item SQL can name: user objects and system relations (not transient ones)."""
    return [i for i in db.catalog.items() if (i.id.is_user() or i.id.is_system())
            and i.kind not in ("secret", "connection")]


def _namespace(db, schema_of):
    return [(oid, name, OWNER_OID, None) for name, oid in NAMESPACES.items()]


def _class(db, schema_of):
    out = []
    indexed = {i.on_id for i in db.catalog.items("index")}
    for i in _items(db):
        kind = _RELKIND.get(i.kind) or ("v" if schema_of(i) == "information_schema" else "r")
        out.append((relation_oid(i.id), i.name.rsplit(".", 1)[-1], NAMESPACES[schema_of(i)], 0, 0, OWNER_OID,
                    BTREE_OID if kind == "i" else (HEAP_OID if kind in "rm" else 0), 0, 0, 0, -1.0, 0, 0,
                    i.id in indexed, False, "p", kind, len(i.columns) if kind != "i" else len(i.key), 0, False,
                    False, False, False, False, True, "d", False, 0, 0, 0, None, None))
    return out


def _attribute(db, schema_of):
    out = []
    for i in _items(db):
        if i.kind == "index":
            continue
        for n, c in enumerate(i.columns, 1):
            out.append((relation_oid(i.id), c.name, type_oid(c.type), -1, _typlen(c.type), n, 0, -1, -1,
                        _typlen(c.type) > 0, "i", "p", "", not c.nullable, False, False, "", "", False, True, 0, 0))
    return out


def _typlen(type_name: str) -> int:
    for n, d, oid, typname, length, cat, arr in PG_TYPES:
        if type_name in (n, d):
            return length
    return -1


def _type(db, schema_of):
    out = []
    for n, d, oid, typname, length, cat, arr in PG_TYPES:
        out.append((oid, typname, NAMESPACES["pg_catalog"], OWNER_OID, length, 0 < length <= 8, "p" if n == "record"
                    else "b", cat, False, True, ",", 0, "", 0, arr, f"{typname}in", f"{typname}out",
                    f"{typname}recv", f"{typname}send", False, 0, -1, 0, 0))
        if arr:
            out.append((arr, "_" + typname, NAMESPACES["pg_catalog"], OWNER_OID, -1, False, "b", "A", False, True,
                        ",", 0, "array_subscript_handler", oid, 0, "array_in", "array_out", "array_recv",
                        "array_send", False, 0, -1, 0, 0))
    return out


def _index(db, schema_of):
    out = []
    for ix in db.catalog.items("index"):
        if not ix.id.is_user() or ix.on_id not in db.catalog:
            continue
        on = db.catalog.get(ix.on_id)
        names = [c.name for c in on.columns]
        keys = " ".join(str(names.index(k) + 1) if k in names else "0" for k in ix.key_sql)
        n = len(ix.key)
        out.append((relation_oid(ix.id), relation_oid(ix.on_id), n, n, False, False, False, True, False, True,
                    True, True, keys))
    return out


def _am(db, schema_of):
    return [(HEAP_OID, "heap", "heap_tableam_handler", "t"), (BTREE_OID, "btree", "bthandler", "i")]


def _database(db, schema_of):
    return [(DATABASE_OID, "materialize", OWNER_OID, 6, "c", False, True, -1, "C", "C", None, None)]


def _cursors(db, schema_of):
    out = []
    for s in list(db.sessions.values()):
        for name in list(s.portals):
            out.append((name, None, False, False, False))
    return out


_ROWS = {"pg_namespace": _namespace, "pg_class": _class, "pg_attribute": _attribute, "pg_type": _type,
         "pg_index": _index, "pg_am": _am, "pg_database": _database, "pg_cursors": _cursors}
