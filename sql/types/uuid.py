"""The SQL type ``uuid``: name, category, I/O casts and literal input.

Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.uuid``.
Deliberately not here: the functions (``sql.functions.uuid``) and the value's text I/O
(``repr.strconv``).
"""
from __future__ import annotations

from repr.strconv import parse_uuid
from sql.types.common import io_casts

TYPES = {"uuid": ("uuid", "U", False)}
SPELLINGS = {"uuid": "uuid"}
CASTS = io_casts("uuid")
PARSERS = {"uuid": parse_uuid}
