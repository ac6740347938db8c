"""Binding of Materialize's named list and map types (``CREATE TYPE ... AS LIST|MAP``,
``DROP TYPE``) and the lookup of a type name among them.

Owns ``create_named_type`` (the options a list or map type needs, Materialize's checks and
messages: a required option missing, a type modifier, an unnamed list or map type as an
option, a map key other than ``text``, a name already taken), ``drop_named_type`` (refused,
2BP01, while a table's or view's definition names the type) and
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

from pglast import ast

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


def _users(catalog, name: str) -> list:
    """The items whose definition spells ``name`` as a word (a column of the type, a cast to
    it): conservative, since a named type leaves no dependency edge (it is resolved away)."""
    word = re.compile(r"(?<![A-Za-z0-9_$])" + re.escape(name) + r"(?![A-Za-z0-9_$])", re.IGNORECASE)
    return [i for i in catalog.items() if i.create_sql and word.search(i.create_sql)]


def drop_named_type(b, stmt, node):
    """``DROP TYPE [IF EXISTS] name, ...`` (pglast's DropStmt of OBJECT_TYPE); refused while
    an item's definition names the type (CASCADE too: it would have to drop them)."""
    keys = []
    for obj in node.objects:
        names = [n.sval for n in (obj.names if isinstance(obj, ast.TypeName) else obj)]
        if named_type(b.catalog, names) is None:
            if node.missing_ok:
                continue
            raise b.error(errors.UNDEFINED_OBJECT, f"unknown catalog item '{'.'.join(names)}'", 0)
        users = _users(b.catalog, names[-1])
        if users:
            raise b.error(errors.DEPENDENT_OBJECTS_STILL_EXIST, f"cannot drop type \"{names[-1]}\": "
                          f"{users[0].kind_word()} \"{users[0].name}\" depends on it", 0)
        keys.append(b.catalog.key_for(tuple(names)))
    return P.DropNamedTypePlan(tuple(keys))
