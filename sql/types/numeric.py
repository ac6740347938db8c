"""The SQL type ``numeric``: name, category, casts, input and the ``numeric(p,s)`` modifier.

Owns ``numeric`` (typcategory ``N``), its spellings (``decimal``, ``dec``), its casts (from
the integers implicitly and back by assignment; to the floats implicitly and back by
assignment; I/O casts with ``text``), its input function (``repr.numeric.parse_numeric``)
and the validation of its modifier as written (``MODIFIERS``: precision 1..1000, scale
-1000..1000, PostgreSQL's messages) and its display (``FORMATS``: ``numeric(5,2)``).
A modifier never changes the type string the engine sees (``numeric(5,2)`` is ``numeric``):
it rides beside the type and the binder inserts ``typmod_numeric`` (``repr.numeric``).
Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.numeric``.
Deliberately not here: the functions (``sql.functions.numeric``).
"""
from __future__ import annotations

from repr.numeric import parse_numeric
from sql.types.common import bad, io_casts

_INTEGERS = ("int2", "int4", "int8")
_FLOATS = ("float4", "float8")

TYPES = {"numeric": ("numeric", "N", False)}
SPELLINGS = {"numeric": "numeric", "decimal": "numeric", "dec": "numeric"}
CASTS = {**io_casts("numeric"),
         **{(i, "numeric"): "implicit" for i in _INTEGERS}, **{("numeric", i): "assignment" for i in _INTEGERS},
         **{("numeric", f): "implicit" for f in _FLOATS}, **{(f, "numeric"): "assignment" for f in _FLOATS}}
PARSERS = {"numeric": parse_numeric}


def _numeric_typmod(mods: list):
    """``("numeric", p, s)`` for ``numeric(p[, s])``; None without a modifier."""
    if not mods:
        return None
    if len(mods) > 2:
        raise bad("invalid NUMERIC type modifier")
    p = mods[0]
    s = mods[1] if len(mods) > 1 else 0
    if not 1 <= p <= 1000:
        raise bad(f"NUMERIC precision {p} must be between 1 and 1000")
    if not -1000 <= s <= 1000:
        raise bad(f"NUMERIC scale {s} must be between -1000 and 1000")
    return ("numeric", p, s)


#: spelling -> (base type, validator of the written modifiers)
MODIFIERS = {sp: ("numeric", _numeric_typmod) for sp in ("numeric", "decimal", "dec")}
#: modifier kind -> its display (PostgreSQL's format_type)
FORMATS = {"numeric": lambda m: f"numeric({m[1]},{m[2]})"}
