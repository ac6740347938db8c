"""The SQL type ``boolean``: its name, category, casts and literal input.

Owns ``bool`` (displayed ``boolean``, typcategory ``B``, preferred), its spellings, its
casts (I/O casts with ``text``; with ``integer`` explicitly, both ways, as PostgreSQL's
pg_cast; ``bigint`` to ``boolean`` explicitly, as Materialize adds) and its input function (``repr.strconv.parse_bool``).
Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.boolean``.
Deliberately not here: the functions (``sql.functions.boolean``).
"""
from __future__ import annotations

from repr.strconv import parse_bool
from sql.types.common import io_casts

TYPES = {"bool": ("boolean", "B", True)}
SPELLINGS = {"bool": "bool", "boolean": "bool"}
CASTS = {**io_casts("bool"), ("bool", "int4"): "explicit", ("int4", "bool"): "explicit",
         ("int8", "bool"): "explicit"}
PARSERS = {"bool": parse_bool}
