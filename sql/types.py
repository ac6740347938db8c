"""SQL types: names, display names, categories, the cast lattice, common-type resolution
and parsing of string literals.

Owns: the set of type names mzlite knows (PostgreSQL's short names: ``bool int2 int4 int8
numeric float8 text``, Materialize's ``mz_timestamp``, and ``unknown`` for an untyped
literal), the mapping from user spellings (``integer``, ``varchar(10)``, ``double
precision``, ...) to them, which casts exist in which context (``implicit`` /
``assignment`` / ``explicit``, PostgreSQL's pg_cast), ``common_type`` (PostgreSQL's
select_common_type for UNION/CASE/COALESCE/VALUES) and ``parse_literal``.
Invariant: every name this module returns is a key of ``TYPES``; ``can_cast`` is
monotone in context (implicit => assignment => explicit).
Deliberately not here: function/operator signatures (``sql.functions``) and evaluation
(``expr.functions``; its text parsers are the runtime twins of ``parse_literal``,
kept in agreement by ``tests/test_types.py`` because ``sql`` may not import ``compute``).
"""
from __future__ import annotations

from decimal import Context, Decimal
import math
import re

from sql.errors import DataError, ProgrammingError

#: type name -> (display name, category, preferred in its category)
TYPES: dict[str, tuple[str, str, bool]] = {
    "bool": ("boolean", "B", True),
    "int2": ("smallint", "N", False),
    "int4": ("integer", "N", False),
    "int8": ("bigint", "N", False),
    "numeric": ("numeric", "N", False),
    "float8": ("double precision", "N", True),
    "text": ("text", "S", True),
    "mz_timestamp": ("mz_timestamp", "D", True),
    "unknown": ("unknown", "X", False),
}

NUMERIC_TYPES = ("int2", "int4", "int8", "numeric", "float8")
INTEGER_TYPES = ("int2", "int4", "int8")

_SPELLINGS = {
    "bool": "bool", "boolean": "bool",
    "int2": "int2", "smallint": "int2",
    "int": "int4", "integer": "int4", "int4": "int4",
    "int8": "int8", "bigint": "int8",
    "numeric": "numeric", "decimal": "numeric", "dec": "numeric",
    "real": "float8", "float4": "float8", "float": "float8", "float8": "float8",
    "double precision": "float8", "double": "float8",
    "text": "text", "varchar": "text", "character varying": "text", "char": "text", "character": "text",
    "bpchar": "text", "string": "text", "name": "text",
    "mz_timestamp": "mz_timestamp",
    "unknown": "unknown",
}
_MODIFIER = re.compile(r"\s*\(\s*\d+\s*(,\s*-?\d+\s*)?\)\s*$")


def normalize_type_name(name: str) -> str:
    """The short name for a user spelling; raises 42704 for an unknown type."""
    raw = name
    n = " ".join(name.strip().lower().replace('"', "").split())
    if n.startswith("pg_catalog."):
        n = n[len("pg_catalog."):]
    n = _MODIFIER.sub("", n)
    if n in _SPELLINGS:
        return _SPELLINGS[n]
    if n.endswith(" list") or (n.endswith("[]") and n[:-2].strip().endswith(" list")):  # lists (sql.types_lists)
        if n.endswith("[]"):
            raise ProgrammingError(f'type "{raw}" does not exist', sqlstate="42704")
        from sql.types_lists import normalize
        return normalize(n, normalize_type_name)
    if n.endswith("[]") and n[:-2].strip() and n[:-2].strip() != "unknown":  # arrays (sql.types_document)
        return normalize_type_name(n[:-2]) + "[]"
    raise ProgrammingError(f'type "{raw}" does not exist', sqlstate="42704")


def display_name(type_: str) -> str:
    """The name shown to users (``cursor.description``, error messages)."""
    t = TYPES.get(type_)
    if t is None and type_.endswith(" list"):  # lists (sql.types_lists)
        return display_name(type_[:-5]) + " list"
    if t is None and type_.endswith("[]"):  # arrays (sql.types_document)
        return display_name(type_[:-2]) + "[]"
    return t[0] if t else type_


def category(type_: str) -> str:
    """PostgreSQL's typcategory: B boolean, N numeric, S string, D date/time, X unknown."""
    t = TYPES.get(type_)
    if t is None and type_.endswith(" list"):  # lists (sql.types_lists): pseudo-category L
        return "L"
    if t is None and type_.endswith("[]"):  # arrays (sql.types_document)
        return "A"
    return t[1] if t else "U"


def is_preferred(type_: str) -> bool:
    t = TYPES.get(type_)
    return bool(t and t[2])


_RANK = {"implicit": 0, "assignment": 1, "explicit": 2}


#: Casts contributed by type families defined in their own modules (``register_type``):
#: (from, to) -> least context.  Consulted before the built-in rules below.
EXTRA_CASTS: dict[tuple[str, str], str] = {}
#: type -> input function (text -> value) for families defined in their own modules;
#: it raises ``DataError`` as ``parse_literal`` does.
EXTRA_PARSERS: dict[str, object] = {}


def register_type(name: str, display: str, category_: str, preferred: bool, spellings=(), parser=None) -> None:
    """Add a type family member defined outside this module (e.g. ``sql.types_datetime``):
    its short name, display name, PostgreSQL typcategory, whether it is preferred in its
    category, extra user spellings and its literal input function."""
    TYPES[name] = (display, category_, preferred)
    _SPELLINGS[name] = name
    for sp in spellings:
        _SPELLINGS[sp] = name
    if parser is not None:
        EXTRA_PARSERS[name] = parser


def cast_context(from_: str, to: str) -> str | None:
    """The least context in which ``from_`` converts to ``to`` (None: never)."""
    if from_ == to or from_ == "unknown":
        return "implicit"
    extra = EXTRA_CASTS.get((from_, to))
    if extra is not None:
        return extra
    if from_.endswith(" list") or to.endswith(" list"):  # lists (sql.types_lists)
        from sql.types_lists import list_cast_context
        return list_cast_context(from_, to)
    if from_.endswith("[]") or to.endswith("[]"):  # arrays (sql.types_document)
        from sql.types_document import array_cast_context
        return array_cast_context(from_, to)
    if from_ in NUMERIC_TYPES and to in NUMERIC_TYPES:
        return "implicit" if NUMERIC_TYPES.index(from_) < NUMERIC_TYPES.index(to) else "assignment"
    if to == "text":
        return "assignment" if from_ in TYPES else None
    if from_ == "text":
        return "explicit" if to in TYPES and to != "unknown" else None
    if (from_, to) in (("bool", "int4"), ("int4", "bool")):
        return "explicit"
    if to == "mz_timestamp" and from_ in ("int2", "int4", "int8", "numeric"):
        return "implicit"
    if from_ == "mz_timestamp" and to == "numeric":
        return "explicit"
    return None


def can_cast(from_: str, to: str, context: str) -> bool:
    """Whether a value of ``from_`` converts to ``to`` in ``context``
    (``implicit`` ⊂ ``assignment`` ⊂ ``explicit``)."""
    c = cast_context(from_, to)
    return c is not None and _RANK[c] <= _RANK[context]


def common_type(types) -> str | None:
    """PostgreSQL's select_common_type: the type every input converts to implicitly,
    or None when the inputs' categories do not match (the caller raises 42804)."""
    types = list(types)
    known = [t for t in types if t != "unknown"]
    if not known:
        return "text" if types else None
    ptype = known[0]
    pcat, ppref = category(ptype), is_preferred(ptype)
    for t in known[1:]:
        if t == ptype:
            continue
        if category(t) != pcat:
            return None
        if not ppref and can_cast(ptype, t, "implicit") and not can_cast(t, ptype, "implicit"):
            ptype, ppref = t, is_preferred(t)
    if all(can_cast(t, ptype, "implicit") for t in known):
        return ptype
    return None


# ----------------------------------------------------------------------------- literals

_INT_RANGES = {"int2": (-32768, 32767), "int4": (-2147483648, 2147483647),
               "int8": (-9223372036854775808, 9223372036854775807)}
_WS = " \t\n\r\f\v"
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_NUM_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_SPECIAL = {"nan": "NaN", "infinity": "Infinity", "+infinity": "Infinity", "-infinity": "-Infinity",
            "inf": "Infinity", "+inf": "Infinity", "-inf": "-Infinity"}


def _syntax(type_: str, s: str) -> DataError:
    return DataError(f'invalid input syntax for type {display_name(type_)}: "{s}"', sqlstate="22P02")


def parse_literal(text: str, type_: str):
    """The value of the string literal ``text`` as ``type_`` (PostgreSQL's input functions).

    Raises ``DataError`` 22P02 for bad syntax, 22003 for out-of-range values."""
    t = text.strip(_WS)
    if type_ in ("text", "unknown"):
        return text
    if type_ in _INT_RANGES:
        if not _INT_RE.match(t):
            raise _syntax(type_, text)
        v = int(t)
        lo, hi = _INT_RANGES[type_]
        if not lo <= v <= hi:
            raise DataError(f'value "{text}" is out of range for type {display_name(type_)}', sqlstate="22003")
        return v
    if type_ == "numeric":
        if t.lower() in _SPECIAL:
            return Decimal(_SPECIAL[t.lower()])
        if not _NUM_RE.match(t):
            raise _syntax(type_, text)
        d = Decimal(t)
        exp = d.as_tuple().exponent
        if (d and d.adjusted() > 131071) or exp < -16383:
            raise DataError("value overflows numeric format", sqlstate="22003")
        return d.quantize(Decimal(1), context=Context(prec=d.adjusted() + 2)) if exp > 0 else d
    if type_ == "float8":
        if t.lower() in _SPECIAL:
            return float(_SPECIAL[t.lower()])
        if not _NUM_RE.match(t):
            raise _syntax(type_, text)
        v = float(t)
        mant = re.split("[eE]", t)[0]
        if math.isinf(v) or (v == 0.0 and any(c in "123456789" for c in mant)):
            raise DataError(f'"{t}" is out of range for type double precision', sqlstate="22003")
        return v
    if type_ == "bool":
        low = t.lower()
        if low:
            for word, val in (("true", True), ("false", False), ("yes", True), ("no", False)):
                if word.startswith(low):
                    return val
            if low in ("on", "1"):
                return True
            if low in ("of", "off", "0"):
                return False
        raise _syntax(type_, text)
    if type_ == "mz_timestamp":
        if not _INT_RE.match(t):
            raise _syntax(type_, text)
        v = int(t)
        if not 0 <= v <= 18446744073709551615:
            raise DataError("mz_timestamp out of range", sqlstate="22003")
        return v
    parser = EXTRA_PARSERS.get(type_)
    if parser is not None:
        return parser(text)
    raise ProgrammingError(f"cannot cast type unknown to {display_name(type_)}", sqlstate="42846")


import sql.types_datetime  # noqa: E402,F401  (date, time, timestamp, timestamptz, interval)
import sql.types_document  # noqa: E402,F401  (bytea, uuid, jsonb, arrays)
import sql.types_exact  # noqa: E402,F401  (char(n)/bpchar, type modifiers)
