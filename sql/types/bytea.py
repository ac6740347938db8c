"""The SQL type ``bytea``: name, category, I/O casts and literal input (hex and escape).

Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.bytea``.
Deliberately not here: the functions (``sql.functions.bytea``) and the value's text I/O
(``repr.strconv``).
"""
from __future__ import annotations

from repr.strconv import parse_bytea
from sql.types.common import io_casts

TYPES = {"bytea": ("bytea", "U", False)}
SPELLINGS = {"bytea": "bytea"}
CASTS = io_casts("bytea")
PARSERS = {"bytea": parse_bytea}
