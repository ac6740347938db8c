"""The SQL types ``real`` (``float4``) and ``double precision`` (``float8``).

Owns their names (typcategory ``N``; ``double precision`` preferred), spellings (``float``
is double precision, as pglast reads ``float(p)`` for any ``p``), casts (from the integers
implicitly and back by assignment; ``real`` widens to ``double precision`` implicitly and
narrows by assignment; I/O casts with ``text``) and input functions (``repr.strconv``).
``real`` sits between ``numeric`` and ``double precision`` in the implicit-cast order, as in
PostgreSQL, so ``real * int`` is real and ``real * double precision`` double.
Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.floats``.
Deliberately not here: casts with ``numeric`` (``sql.types.numeric``) and the functions.
"""
from __future__ import annotations

from repr.strconv import parse_float4, parse_float8
from sql.types.common import io_casts

FLOAT_TYPES = ("float4", "float8")
TYPES = {"float4": ("real", "N", False), "float8": ("double precision", "N", True)}
SPELLINGS = {"real": "float4", "float4": "float4", "float": "float8", "float8": "float8",
             "double precision": "float8", "double": "float8"}
CASTS = {**io_casts(*FLOAT_TYPES), ("float4", "float8"): "implicit", ("float8", "float4"): "assignment",
         **{(i, f): "implicit" for i in ("int2", "int4", "int8") for f in FLOAT_TYPES},
         **{(f, i): "assignment" for i in ("int2", "int4", "int8") for f in FLOAT_TYPES}}
PARSERS = {"float4": parse_float4, "float8": parse_float8}
