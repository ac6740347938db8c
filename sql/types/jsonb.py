"""The SQL type ``jsonb`` (``json`` is read as ``jsonb``, as Materialize does).

Owns its name, category, casts (I/O casts with ``text``; to the scalar types explicitly,
as PostgreSQL 11+) and literal input (``repr.jsonb.parse_jsonb``).
Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.jsonb``.
Deliberately not here: the functions (``sql.functions.jsonb``) and the value class.
"""
from __future__ import annotations

from repr.jsonb import parse_jsonb
from sql.types.common import io_casts

TYPES = {"jsonb": ("jsonb", "U", False)}
SPELLINGS = {"jsonb": "jsonb", "json": "jsonb"}
CASTS = {**io_casts("jsonb"),
         **{("jsonb", t): "explicit" for t in ("bool", "numeric", "int2", "int4", "int8", "float8")}}
PARSERS = {"jsonb": parse_jsonb}
