"""The SQL types ``smallint``, ``integer``, ``bigint`` and ``oid``: names, category, casts, input.

Owns ``int2``/``int4``/``int8`` (typcategory ``N``, none preferred), their spellings, the
casts among them (widening implicitly, narrowing by assignment, as PostgreSQL's pg_cast)
and with ``text``, and their input functions (``repr.strconv.parse_int``); ``oid`` (an
unsigned 32-bit integer, category ``N``) with PostgreSQL's casts: from the integers
implicitly, to ``integer``/``bigint`` by assignment, no arithmetic, comparisons only.
Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.integer``.
Deliberately not here: casts to ``numeric``, the floats and ``mz_timestamp`` (those
families'), and the functions (``sql.functions.integer``).
"""
from __future__ import annotations

import functools

from repr.strconv import parse_int, parse_oid
from sql.types.common import io_casts

#: the integer types, narrowest first (the implicit-cast direction)
INTEGER_TYPES = ("int2", "int4", "int8")
TYPES = {"int2": ("smallint", "N", False), "int4": ("integer", "N", False), "int8": ("bigint", "N", False),
         "oid": ("oid", "N", False)}
SPELLINGS = {"int2": "int2", "smallint": "int2", "int": "int4", "integer": "int4", "int4": "int4",
             "int8": "int8", "bigint": "int8", "oid": "oid"}
CASTS = {**io_casts(*INTEGER_TYPES),
         **{(a, b): "implicit" if INTEGER_TYPES.index(a) < INTEGER_TYPES.index(b) else "assignment"
            for a in INTEGER_TYPES for b in INTEGER_TYPES if a != b}}
CASTS.update({**io_casts("oid"), **{(t, "oid"): "implicit" for t in INTEGER_TYPES},
              ("oid", "int4"): "assignment", ("oid", "int8"): "assignment"})
PARSERS = {**{t: functools.partial(parse_int, type_=t) for t in INTEGER_TYPES}, "oid": parse_oid}
