"""Options of DDL statements that mzlite honours, and the refusal of every other one.

Owns the checks ``planner.bind_stmt`` runs on CREATE TABLE (and its columns), CREATE INDEX
and CREATE [MATERIALIZED] VIEW before planning them.  Invariant: an option is either
honoured or refused with 0A000; none is parsed and dropped.  What is honoured: ``UNLOGGED``
(mzlite logs nothing: every table is in memory), ``TABLESPACE pg_default``, the collations
``C``, ``POSIX`` and ``default`` (text compares by code point, which is the C collation),
``CREATE INDEX CONCURRENTLY`` (building an index never blocks writes here).  Refused, each
with the reason: temporary tables and views (nothing would drop them when the session
ends), storage parameters (``WITH (...)``), other tablespaces and collations, ``ON COMMIT``,
unique indexes (declare UNIQUE or PRIMARY KEY on the table: those are enforced), index
methods, ``INCLUDE``, ordering and operator classes of index columns (an arrangement is a
hash index: order has no meaning), ``WITH CHECK OPTION`` and view options, materialized view
options mzlite does not implement.
Deliberately not here: the constraints of CREATE TABLE (``bind_stmt._table_constraints``).
"""
from __future__ import annotations

from planner.bind_expr import enum_name
from sql import errors

#: collations mzlite's text comparison implements (code point order)
C_COLLATIONS = ("c", "posix", "default", "ucs_basic")


def _refuse(b, what: str, loc=None):
    return b.error(errors.FEATURE_NOT_SUPPORTED, what, loc)


def check_collation(b, coll, loc=None) -> None:
    """Refuse a ``COLLATE`` mzlite does not implement (it compares text by code point)."""
    if coll is None:
        return
    name = coll.collname[-1].sval if coll.collname else ""
    if name.lower() not in C_COLLATIONS:
        raise _refuse(b, f'collation "{name}" is not supported: mzlite compares text by code point (the "C" '
                         f"collation)", getattr(coll, "location", loc))


def _persistence(b, rv, what: str) -> None:
    if rv.relpersistence == "t":
        raise _refuse(b, f"temporary {what} are not supported: nothing would drop them when the session ends",
                      rv.location)


def check_create_table(b, node) -> None:
    _persistence(b, node.relation, "tables")
    if node.options:
        raise _refuse(b, "storage parameters (CREATE TABLE ... WITH (...)) are not supported", node.relation.location)
    if node.tablespacename not in (None, "pg_default"):
        raise _refuse(b, "tablespaces are not supported", node.relation.location)
    if enum_name(node.oncommit) not in (None, "ONCOMMIT_NOOP"):
        raise _refuse(b, "ON COMMIT is not supported", node.relation.location)
    if getattr(node, "accessMethod", None):
        raise _refuse(b, "table access methods (USING) are not supported", node.relation.location)


def check_column(b, el) -> None:
    check_collation(b, el.collClause, el.location)
    if getattr(el, "storage_name", None) or getattr(el, "compression", None):
        raise _refuse(b, "column STORAGE and COMPRESSION are not supported", el.location)


def check_create_index(b, node) -> None:
    loc = node.relation.location
    if node.unique:
        raise _refuse(b, "unique indexes are not supported: declare UNIQUE or PRIMARY KEY on the table, which "
                         "mzlite enforces", loc)
    if node.accessMethod not in (None, "btree"):
        raise _refuse(b, f'index method "{node.accessMethod}" is not supported: an index is an arrangement', loc)
    if node.indexIncludingParams:
        raise _refuse(b, "INCLUDE is not supported in CREATE INDEX", loc)
    if node.options:
        raise _refuse(b, "storage parameters (CREATE INDEX ... WITH (...)) are not supported", loc)
    if node.tableSpace is not None:
        raise _refuse(b, "tablespaces are not supported", loc)
    for el in node.indexParams or ():
        # ASC (NULLS LAST) is every key's default order, so saying it asks for nothing an
        # arrangement lacks (Materialize's TPC-H and CH-benCHmark schemas say it); DESC and
        # NULLS FIRST ask for an order an index scan would give, which an arrangement does not
        ordering, nulls = enum_name(el.ordering), enum_name(el.nulls_ordering)
        if ordering not in (None, "SORTBY_DEFAULT", "SORTBY_ASC") or \
                nulls not in (None, "SORTBY_NULLS_DEFAULT") + (("SORTBY_NULLS_LAST",) if ordering == "SORTBY_ASC" else ()):
            raise _refuse(b, "DESC and NULLS FIRST/LAST are not supported in CREATE INDEX: an arrangement "
                             "has no order", loc)
        if el.opclass:
            raise _refuse(b, "operator classes are not supported in CREATE INDEX", loc)
        if el.collation:
            name = el.collation[-1].sval
            if name.lower() not in C_COLLATIONS:
                raise _refuse(b, f'collation "{name}" is not supported: mzlite compares text by code point', loc)


def check_create_view(b, node) -> None:
    _persistence(b, node.view, "views")
    if node.options:
        raise _refuse(b, "view options (CREATE VIEW ... WITH (...)) are not supported", node.view.location)
    if enum_name(node.withCheckOption) not in (None, "NO_CHECK_OPTION"):
        raise _refuse(b, "WITH CHECK OPTION is not supported: views are not updatable", node.view.location)


def check_create_materialized_view(b, node) -> None:
    into = node.into
    _persistence(b, into.rel, "materialized views")
    if into.options:
        names = ", ".join(o.defname for o in into.options)
        raise _refuse(b, f"materialized view options are not supported: {names}", into.rel.location)
    if into.tableSpaceName is not None:
        raise _refuse(b, "tablespaces are not supported", into.rel.location)
    if into.skipData:
        raise _refuse(b, "WITH NO DATA is not supported: a materialized view is always up to date",
                      into.rel.location)
