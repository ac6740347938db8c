"""Exact character and numeric types: ``char(n)`` (``bpchar``), ``varchar(n)``, ``numeric(p,s)``, ``real``.

Owns the ``bpchar`` and ``float4`` (``real``) types' registration (display ``character``, string category), its
casts, and type modifiers: which spellings take one (``typmod_for``), their validation
(PostgreSQL's messages), how a modified type is spelled (``format_type``) and what
``information_schema.columns`` says about it (``column_facts``).

Design: a modifier never changes the type string the rest of the engine sees (``varchar(3)``
is ``text``, ``numeric(5,2)`` is ``numeric``).  It is carried beside the type (the catalog's
``ColumnDef.typmod``, the binder's cast target) and enforced by an explicit call the binder
inserts (``typmod_varchar`` / ``typmod_bpchar`` / ``typmod_numeric`` in
``expr.functions.exact``): silently truncating for an explicit cast, raising 22001 /
22003 for an assignment (INSERT, UPDATE, DEFAULT).
``char(n)`` needs its own type because its comparisons differ (trailing blanks are
insignificant).  Rather than a second family of operators, values are stored padded to
``n`` (what the user reads back), and ``bpchar`` converts implicitly to ``text`` by
dropping trailing blanks, as PostgreSQL's ``text(bpchar)`` does; having no operators of
its own, every comparison, ``length``, ``LIKE`` or ``||`` on ``bpchar`` resolves to the
text one through that cast, which gives PostgreSQL's bpchar answers
(``'a '::char(3) = 'a'::char(3)``, ``length('a'::char(3)) = 1``) without touching the
operator tables.  Values of one ``char(n)`` column all have length ``n``, so grouping and
ordering on the stored strings agree with the stripped ones.
Invariant: every (from, to) pair given a context in ``EXTRA_CASTS`` here has a
``cast_<from>_to_<to>`` implementation in ``expr.functions.exact``.
Deliberately not here: evaluation (``expr.functions.exact``) or binding.
"""
from __future__ import annotations

import math
import re
import struct
from typing import Optional

from sql import types as T
from sql.errors import DataError, ProgrammingError

T.register_type("bpchar", "character", "S", False, spellings=("bpchar", "char", "character"),
                parser=lambda s: s)


# ---------------------------------------------------------------------------- real (float4)
# ``real`` is its own numeric type, between numeric and double precision in the implicit-cast
# order (PostgreSQL's pg_cast: integers and numeric widen to real, real widens to double;
# the reverse directions are assignment casts); ``NUMERIC_TYPES`` is extended here, before
# ``sql.functions`` reads it, so every numeric rule covers real.  A real value is the Python
# float of its shortest decimal form (0.1::real is 0.1, not 0.10000000149011612): equality and
# order are those of the float32 values, and ``expr.functions.exact`` converts back to the
# exact float32 value wherever a real meets a double.
T.register_type("float4", "real", "N", False, spellings=("float4", "real"))
T.NUMERIC_TYPES = ("int2", "int4", "int8", "numeric", "float4", "float8")
_F32 = struct.Struct("<f")
_NUM_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_SPECIAL = {"nan": math.nan, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf,
            "inf": math.inf, "+inf": math.inf, "-inf": -math.inf}


def parse_float4(text: str) -> float:
    """float4in: the canonical value (see above) of ``text``; 22P02 / 22003 as PostgreSQL."""
    t = text.strip(" \t\n\r\f\v")
    if t.lower() in _SPECIAL:
        return _SPECIAL[t.lower()]
    if not _NUM_RE.match(t):
        raise DataError(f'invalid input syntax for type real: "{text}"', sqlstate="22P02")
    v = float(t)
    try:
        e = _F32.unpack(_F32.pack(v))[0]
    except OverflowError:
        e = math.inf
    mant = re.split("[eE]", t)[0]
    if math.isinf(e) or (e == 0.0 and any(c in "123456789" for c in mant)):
        raise DataError(f'"{t}" is out of range for type real', sqlstate="22003")
    for p in range(1, 10):
        d = float("%.*g" % (p, e))
        if _F32.unpack(_F32.pack(d))[0] == e:
            return d
    return e


T.EXTRA_PARSERS["float4"] = parse_float4

#: types that convert to and from bpchar (through their text forms)
BPCHAR_PEERS = ("bool", "int2", "int4", "int8", "numeric", "float4", "float8")
T.EXTRA_CASTS[("bpchar", "text")] = "implicit"
T.EXTRA_CASTS[("text", "bpchar")] = "implicit"
for _t in BPCHAR_PEERS:
    T.EXTRA_CASTS[(_t, "bpchar")] = "assignment"
    T.EXTRA_CASTS[("bpchar", _t)] = "explicit"

VARCHAR_MAX = 10485760
_NAMES_WITH_MODIFIERS = {"varchar": "varchar", "character varying": "varchar", "char varying": "varchar",
                         "bpchar": "bpchar", "char": "bpchar", "character": "bpchar",
                         "numeric": "numeric", "decimal": "numeric", "dec": "numeric"}


def _bad(msg: str, code: str = "22023") -> ProgrammingError:
    return ProgrammingError(msg, sqlstate=code)


def typmod_for(spelled: str, type_: str, mods) -> Optional[tuple]:
    """The modifier of the type spelled ``spelled`` (last name part, e.g. ``varchar``) whose
    base type is ``type_``, given the integer modifiers ``mods`` written after it; None when
    the type carries none.  Raises 22023 (PostgreSQL's bounds) or 42601 (no modifier allowed)."""
    kind = _NAMES_WITH_MODIFIERS.get(spelled.lower())
    mods = list(mods or ())
    if kind is None or (kind == "varchar" and type_ != "text") or (kind == "bpchar" and type_ != "bpchar") \
            or (kind == "numeric" and type_ != "numeric"):
        if mods:
            raise _bad(f'type modifier is not allowed for type "{spelled}"', "42601")
        return None
    if kind in ("varchar", "bpchar"):
        if not mods:
            return ("varchar", None) if kind == "varchar" else None
        if len(mods) != 1:
            raise _bad(f"invalid type modifier", "42601")
        n = mods[0]
        word = "varchar" if kind == "varchar" else "char"
        if n < 1:
            raise _bad(f"length for type {word} must be at least 1")
        if n > VARCHAR_MAX:
            raise _bad(f"length for type {word} cannot exceed {VARCHAR_MAX}")
        return (kind, n)
    if not mods:
        return None
    if len(mods) > 2:
        raise _bad("invalid NUMERIC type modifier")
    p = mods[0]
    s = mods[1] if len(mods) > 1 else 0
    if not 1 <= p <= 1000:
        raise _bad(f"NUMERIC precision {p} must be between 1 and 1000")
    if not -1000 <= s <= 1000:
        raise _bad(f"NUMERIC scale {s} must be between -1000 and 1000")
    return ("numeric", p, s)


def format_type(type_: str, typmod: Optional[tuple]) -> str:
    """PostgreSQL's format_type: ``character varying(3)``, ``character(3)``, ``numeric(5,2)``."""
    if typmod is None:
        return T.display_name(type_)
    if typmod[0] == "varchar":
        return "character varying" if typmod[1] is None else f"character varying({typmod[1]})"
    if typmod[0] == "bpchar":
        return f"character({typmod[1]})"
    if typmod[0] == "numeric":
        return f"numeric({typmod[1]},{typmod[2]})"
    return T.display_name(type_)


#: bits of binary precision of the binary-radix numeric types (information_schema)
_BINARY_PRECISION = {"int2": 16, "int4": 32, "int8": 64, "float4": 24, "float8": 53}


def column_facts(type_: str, typmod: Optional[tuple]) -> dict:
    """``information_schema.columns``' type columns for a column: data_type,
    character_maximum_length, character_octet_length, numeric_precision,
    numeric_precision_radix, numeric_scale (as PostgreSQL 15 reports them)."""
    facts = {"data_type": T.display_name(type_), "character_maximum_length": None,
             "character_octet_length": None, "numeric_precision": None, "numeric_precision_radix": None,
             "numeric_scale": None}
    if typmod is not None and typmod[0] == "varchar":
        facts["data_type"] = "character varying"
    if type_ in ("text", "bpchar"):
        n = typmod[1] if typmod is not None else None
        facts["character_maximum_length"] = n
        facts["character_octet_length"] = n * 4 if n is not None else 1073741824
    elif type_ in _BINARY_PRECISION:
        facts["numeric_precision"] = _BINARY_PRECISION[type_]
        facts["numeric_precision_radix"] = 2
        if type_.startswith("int"):
            facts["numeric_scale"] = 0
    elif type_ == "numeric":
        facts["numeric_precision_radix"] = 10
        if typmod is not None:
            facts["numeric_precision"], facts["numeric_scale"] = typmod[1], typmod[2]
    return facts
