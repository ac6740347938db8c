"""Signatures of the forms defined once for every type: COALESCE, GREATEST, LEAST, NULLIF,
ROW, IS [NOT] NULL and IS [NOT] DISTINCT FROM.

Owns their tables (name or operator -> func id of ``expr.functions.generic``).  PostgreSQL
resolves these in its parser, not through pg_proc: ``sql.functions`` gives every argument
of ``SPECIAL_FORMS`` one common type (NULLIF: the ``=`` operator's), ``ROW`` any types,
a NULL test any type, and IS DISTINCT FROM the types of ``=``.
Invariant: every func id here is implemented in ``expr.functions.generic``.
Deliberately not here: the comparison operators (each type family declares its own, most
naming ``generic``'s ``eq``...) and the resolution algorithm (``sql.functions``).
"""
from __future__ import annotations

#: functions whose arguments all take one common type (PostgreSQL's special forms)
SPECIAL_FORMS = {"coalesce": "coalesce", "greatest": "greatest", "least": "least", "nullif": "nullif"}
#: row constructors
ROW = {"row": "record", "record": "record"}
NULL_TESTS = {"is null": "is_null", "isnull": "is_null", "is not null": "is_not_null", "notnull": "is_not_null"}
DISTINCT = {"is distinct from": "is_distinct_from", "is not distinct from": "is_not_distinct_from"}
