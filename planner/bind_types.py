"""Binding of Materialize's named list and map types (``CREATE TYPE ... AS LIST|MAP``,
``DROP TYPE``) and the lookup of a type name among them.

Owns ``create_named_type`` (the options a list or map type needs, Materialize's checks and
messages: a required option missing, a type modifier, an unnamed list or map type as an
option, a map key other than ``text``, a name already taken), ``drop_named_type`` (refused,
2BP01, while a table's or view's definition names the type; with CASCADE those items and
their dependents are dropped first) and
``named_type`` (the structural type a user's type name stands for, or None).  A named type
is an alias: ``CREATE TYPE int4_map AS MAP (KEY TYPE = text, VALUE TYPE = int4)`` makes
``int4_map`` mean ``map[text=>int4]`` wherever a type name is written; values of the two
are the same type (``pg_typeof`` names the structure).
Invariant: a built-in type name wins over a named type of the same unqualified name
(``pg_catalog`` comes first in the search path, as in Materialize: ``'x'::bool`` is a
boolean after ``CREATE TYPE bool AS MAP ...``, ``public.bool`` the map); a named type's
options are resolved when it is created, so it never changes meaning.
Deliberately not here: the grammar (``sql.mztypes``), the catalog's table of named types
(``planner.catalog.Catalog.types``), persisting them (a durable database refuses CREATE
TYPE: ``mzlite.namespaces``).
"""
from __future__ import annotations

import re

from pglast import ast, visitors

from planner import plans as P
from sql import errors, types as T
from sql.types import arrays as TA, lists as TL, maps as TM


def named_type(catalog, names) -> str | None:
    """The structural type the name ``names`` (its parts) denotes among the named types."""
    if len(names) == 1:
        return catalog.types.get(names[0])
    if len(names) == 2:
        return catalog.types.get(names[1] if names[0] == "public" else ".".join(names))
    if len(names) == 3 and names[0] == "materialize":
        return named_type(catalog, names[1:])
    return None


def _option_type(b, stmt, kind: str, opt: str, text: str, loc: int) -> str:
    from sql.parse import parse_one
    try:
        sel = parse_one(f"SELECT NULL::{text}").node
        tn = sel.targetList[0].val.typeName
    except errors.Error:
        raise b.error(errors.SYNTAX_ERROR, f'syntax error at or near "{text}"', loc) from None
    what = f"CREATE TYPE ... AS {kind.upper()} option {opt.upper()}"
    if tn.typmods:
        base = b.type_name(ast.TypeName(names=tn.names, location=loc))
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{what} cannot accept type modifier on "
                      f"pg_catalog.{base}, you must use the default type", loc)
    t = b.type_name(tn)
    spelled = [n.sval for n in tn.names]
    named = named_type(b.catalog, spelled) is not None and T.SPELLINGS.get(spelled[-1]) is None
    if (TL.is_list(t) or TM.is_map(t) or TA.is_array(t)) and not named:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"{what} can only use named data types, but found unnamed "
                      f"data type pg_catalog.{t}. Use CREATE TYPE to create a named type first", loc)
    return t


def create_named_type(b, stmt, node):
    key = b.catalog.key_for(node.name, stmt.position(0))
    opts: dict = {}
    for opt, text, loc in node.options:
        opts[opt] = _option_type(b, stmt, node.kind, opt, text, loc)
    required = ("element type",) if node.kind == "list" else ("key type", "value type")
    for r in required:
        if r not in opts:
            raise b.error(errors.SYNTAX_ERROR, f"{r.upper()} option is required", 0)
    if node.kind == "list":
        type_ = TL.list_of(opts["element type"])
    else:
        if opts["key type"] != "text":
            raise b.error(errors.DATATYPE_MISMATCH, f"map key type must be text, got {T.display_name(opts['key type'])}",
                          0)
        type_ = TM.map_of(opts["value type"])
    if key in b.catalog.types or b.catalog.try_resolve(node.name) is not None:
        raise b.error(errors.DUPLICATE_OBJECT, f"catalog item '{node.name[-1]}' already exists", 0)
    return P.CreateNamedTypePlan(key, type_)


def _type_key(names) -> str | None:
    """The key in ``Catalog.types`` a spelled type name looks up (as ``named_type`` does)."""
    if len(names) == 1:
        return None if T.SPELLINGS.get(names[0]) is not None else names[0]  # a built-in wins
    if len(names) == 2:
        return names[1] if names[0] == "public" else ".".join(names)
    if len(names) == 3 and names[0] == "materialize":
        return _type_key(names[1:])
    return None


class _TypeNames(visitors.Visitor):
    def __init__(self):
        self.keys: set = set()

    def visit_TypeName(self, ancestors, node):
        self.keys.add(_type_key(tuple(n.sval for n in node.names)))


def _names_type(item, key: str) -> bool:
    """Whether ``item``'s definition spells the named type ``key`` as a type (a column of
    it, a cast to it).  A named type leaves no dependency edge (it is resolved away), so the
    definition is parsed again.  A Materialize-only statement (a source, a connection, a
    secret: ``sql.mzsyntax``'s dataclasses) has no type names; a definition mzlite's parser
    refuses (another dialect's text) is matched on the bare name as a word (conservative)."""
    from sql.parse import parse_one
    try:
        node = parse_one(item.create_sql).node
    except errors.Error:
        node = None
    if isinstance(node, ast.Node):
        v = _TypeNames()
        v(node)
        return key in v.keys
    if node is not None:
        return False
    word = re.compile(r"(?<![A-Za-z0-9_$])" + re.escape(key.rsplit(".", 1)[-1]) + r"(?![A-Za-z0-9_$])",
                      re.IGNORECASE)
    return bool(word.search(item.create_sql))


def _users(catalog, key: str) -> list:
    """The user items whose definition names the type ``key``."""
    return [i for i in catalog.items() if i.id.is_user() and i.create_sql and _names_type(i, key)]


def drop_named_type(b, stmt, node):
    """``DROP TYPE [IF EXISTS] name, ... [CASCADE]`` (pglast's DropStmt of OBJECT_TYPE).
    Refused (2BP01) while an item's definition names the type; with CASCADE those items go
    first, with their dependents (views over a table, indexes), in drop order."""
    from planner.bind_expr import enum_name
    cascade = enum_name(node.behavior) == "DROP_CASCADE"
    keys, drop_ids = [], []
    for obj in node.objects:
        names = [n.sval for n in (obj.names if isinstance(obj, ast.TypeName) else obj)]
        if named_type(b.catalog, names) is None:
            if node.missing_ok:
                continue
            raise b.error(errors.UNDEFINED_OBJECT, f"unknown catalog item '{'.'.join(names)}'", 0)
        key = b.catalog.key_for(tuple(names))
        users = _users(b.catalog, key)
        if users and not cascade:
            raise b.error(errors.DEPENDENT_OBJECTS_STILL_EXIST, f"cannot drop type \"{names[-1]}\": "
                          f"{users[0].kind_word()} \"{users[0].name}\" depends on it", 0)
        for u in users:
            drop_ids.extend(d for d in b.catalog.check_drop(u.id, True) if d not in drop_ids)
        keys.append(key)
    return P.DropNamedTypePlan(tuple(keys), tuple(drop_ids))
