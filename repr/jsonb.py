"""The jsonb value class (``Jsonb``): PostgreSQL's binary JSON as an immutable, hashable,
totally ordered Python value, with its text input and output.

Owns the representation.  A ``Jsonb`` wraps one *canonical* JSON value ``v``:
``None`` (JSON null), ``bool``, ``Decimal`` (every number), ``str``, ``tuple`` of canonical
values (an array) or ``JObject`` (a tuple of ``(key, value)`` pairs, keys unique and in
PostgreSQL's storage order: shorter UTF-8 length first, then bytewise; duplicate keys on
input keep the last value).  Equality, hashing and ordering all go through ``key``, a
type-tagged tuple (so ``true`` never equals ``1``) that orders as PostgreSQL's jsonb btree
opclass does: Object > Array > Boolean > Number > String > Null; arrays by length, then
element by element; objects by pair count, then key-1, value-1, key-2, ... in storage
order; and, for historical reasons, an empty *top-level* array sorts below everything.
Strings compare by code point (mzlite's collation is C).  Numbers compare numerically, so
``1.0`` equals ``1`` (as in PostgreSQL) although their text forms differ.

Invariant: a ``Jsonb`` is never mutated; ``v`` is always canonical (``make`` converts
plain Python values: dict/list/int/float/str/bool/None).
Deliberately not here: the SQL functions over jsonb (``expr.functions.jsonb``) and
SQL signatures (``sql.functions.jsonb``).
"""
from __future__ import annotations

from decimal import Decimal
import json

from repr.errors import EvalError

__all__ = ["Jsonb", "JObject", "parse_jsonb", "jsonb_out", "make", "to_python", "canon", "sort_pairs"]


class JObject(tuple):
    """A JSON object's pairs, in storage order (see ``sort_pairs``)."""
    __slots__ = ()

    def get(self, k):
        for a, b in self:
            if a == k:
                return b
        return MISSING

    def keys(self):
        return [a for a, _ in self]


#: what ``JObject.get`` returns for an absent key (JSON null is None)
MISSING = object()


def _key_order(k: str):
    b = k.encode("utf-8", "surrogatepass")
    return (len(b), b)


def sort_pairs(pairs) -> JObject:
    """Pairs (later duplicates win) as a ``JObject`` in storage order."""
    d = {}
    for k, v in pairs:
        d[k] = v
    return JObject(sorted(d.items(), key=lambda kv: _key_order(kv[0])))


def _vkey(v):
    if v is None:
        return (0,)
    t = type(v)
    if t is str:
        return (1, v)
    if t is Decimal:
        return (2, v)
    if t is bool:
        return (3, v)
    if t is JObject:
        return (5, len(v), tuple(x for k, val in v for x in ((1, k), _vkey(val))))
    return (4, len(v), tuple(_vkey(x) for x in v))


class Jsonb:
    """A jsonb datum (see the module docstring)."""
    __slots__ = ("v", "key", "_h")

    def __init__(self, v):
        self.v = v
        self.key = (-1,) if (type(v) is tuple and not v) else _vkey(v)
        self._h = None

    def __hash__(self):
        h = self._h
        if h is None:
            h = self._h = hash(self.key)
        return h

    def __eq__(self, o):
        return type(o) is Jsonb and self.key == o.key

    def __ne__(self, o):
        return not self.__eq__(o)

    def __lt__(self, o):
        return self.key < o.key

    def __le__(self, o):
        return self.key <= o.key

    def __gt__(self, o):
        return self.key > o.key

    def __ge__(self, o):
        return self.key >= o.key

    def __repr__(self):
        return f"Jsonb({jsonb_out(self)!r})"

    def __str__(self):
        return jsonb_out(self)


# ------------------------------------------------------------------ input

def _bad_json(s: str) -> EvalError:
    return EvalError("22P02", "invalid input syntax for type json")


def _no_constant(name):
    raise ValueError(name)


def _check_str(s: str) -> str:
    if "\x00" in s:
        raise EvalError("22P05", "unsupported Unicode escape sequence")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise EvalError("22P02", "invalid input syntax for type json") from None
    return s


def _canon_parsed(x):
    t = type(x)
    if t is str:
        return _check_str(x)
    if t is list:
        return tuple(_canon_parsed(e) for e in x)
    if t is _Pairs:
        return sort_pairs((_check_str(k), _canon_parsed(v)) for k, v in x)
    return x  # None, bool, Decimal


class _Pairs(list):
    pass


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal, parse_constant=_no_constant,
                            object_pairs_hook=_Pairs)


def parse_jsonb(s: str) -> Jsonb:
    """PostgreSQL's jsonb_in: 22P02 ``invalid input syntax for type json`` on bad input."""
    try:
        v, end = _DECODER.raw_decode(s, len(s) - len(s.lstrip(" \t\n\r")))
    except (ValueError, RecursionError):
        raise _bad_json(s) from None
    if s[end:].strip(" \t\n\r"):
        raise _bad_json(s)
    return Jsonb(_canon_parsed(v))


# ------------------------------------------------------------------ output

_ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quote_json(s: str) -> str:
    """PostgreSQL's escape_json."""
    out = ['"']
    for c in s:
        e = _ESC.get(c)
        if e is not None:
            out.append(e)
        elif c < " ":
            out.append("\\u%04x" % ord(c))
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _num_out(d: Decimal) -> str:
    if not d:
        d = abs(d)
    return format(d, "f")


def _out(v, parts: list) -> None:
    if v is None:
        parts.append("null")
        return
    t = type(v)
    if t is bool:
        parts.append("true" if v else "false")
    elif t is str:
        parts.append(quote_json(v))
    elif t is Decimal:
        parts.append(_num_out(v))
    elif t is JObject:
        parts.append("{")
        for i, (k, x) in enumerate(v):
            if i:
                parts.append(", ")
            parts.append(quote_json(k))
            parts.append(": ")
            _out(x, parts)
        parts.append("}")
    else:
        parts.append("[")
        for i, x in enumerate(v):
            if i:
                parts.append(", ")
            _out(x, parts)
        parts.append("]")


def value_out(v) -> str:
    parts: list = []
    _out(v, parts)
    return "".join(parts)


def jsonb_out(j: Jsonb) -> str:
    return value_out(j.v)


def _pretty(v, indent: int, parts: list) -> None:
    t = type(v)
    if t is JObject and not v:
        parts.append("{\n" + "    " * indent + "}")
    elif t is tuple and not v:
        parts.append("[\n" + "    " * indent + "]")
    elif t is JObject:
        parts.append("{\n")
        for i, (k, x) in enumerate(v):
            if i:
                parts.append(",\n")
            parts.append("    " * (indent + 1) + quote_json(k) + ": ")
            _pretty(x, indent + 1, parts)
        parts.append("\n" + "    " * indent + "}")
    elif t is tuple:
        parts.append("[\n")
        for i, x in enumerate(v):
            if i:
                parts.append(",\n")
            parts.append("    " * (indent + 1))
            _pretty(x, indent + 1, parts)
        parts.append("\n" + "    " * indent + "]")
    else:
        _out(v, parts)


def jsonb_pretty(j: Jsonb) -> str:
    parts: list = []
    _pretty(j.v, 0, parts)
    return "".join(parts)


# ------------------------------------------------------------------ Python values

def canon(x):
    """A canonical value from plain Python (dict, list/tuple, str, int, float, Decimal, bool, None)."""
    if x is None or x is True or x is False:
        return x
    if isinstance(x, str):
        return _check_str(str(x))
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, int):
        return Decimal(int(x))
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")):
            raise EvalError("22P02", "invalid input syntax for type json")
        return Decimal(repr(x))
    if isinstance(x, Decimal):
        if not x.is_finite():
            raise EvalError("22P02", "invalid input syntax for type json")
        return x
    if isinstance(x, Jsonb):
        return x.v
    if isinstance(x, dict):
        return sort_pairs((_check_str(str(k)), canon(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return tuple(canon(e) for e in x)
    raise EvalError("22023", f"cannot convert {type(x).__name__} to jsonb")


def make(x) -> Jsonb:
    return x if isinstance(x, Jsonb) else Jsonb(canon(x))


def to_python(v):
    """Plain Python from a canonical value: dict, list, str, bool, None, and numbers as int
    when integral without a fractional part in their text, else float."""
    if v is None or type(v) in (bool, str):
        return v
    t = type(v)
    if t is Decimal:
        if v == v.to_integral_value() and v.as_tuple().exponent >= 0:
            return int(v)
        return float(v)
    if t is JObject:
        return {k: to_python(x) for k, x in v}
    return [to_python(x) for x in v]
