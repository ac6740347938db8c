"""Text I/O of SQL values: the scalar parsers and printers, and ``to_text`` of any value.

Owns, as PostgreSQL 15 reads and prints them (Materialize's ``mz_repr::strconv``): booleans
(``parse_bool``, ``bool_out``), the integers (``INT_RANGES``, ``parse_int``), ``double
precision`` (``parse_float8``, ``float8_out``: shortest round-trip digits, exponent form when
the decimal exponent is < -4 or >= 15), ``real`` (``parse_float4``, ``float4_out`` and the
value rule ``float4_canon``), Materialize's ``mz_timestamp`` (``parse_mz_timestamp``),
``bytea`` (``parse_bytea``: hex and escape input; ``bytea_out``: hex) and ``uuid``
(``parse_uuid``: PostgreSQL's accepted forms), and ``to_text``: the text form of any non-NULL
value, chosen by its Python type from ``TEXT_OUT``, the one table of output functions
(assembled here from the value modules: numeric, dates, jsonb, arrays, lists).
A ``real`` value is the Python float of its shortest decimal form (0.1::real is 0.1, not
0.10000000149011612): ``float4_canon`` rounds a double to float32 and back to that form,
``float4_exact`` gives the float32 value a real stands for, as a double.
Invariant: parsers raise only ``EvalError`` (22P02 bad syntax, 22003 out of range, 22023 /
22P02 for bad bytea, with PostgreSQL's messages); printers never raise.
Deliberately not here: functions over values (``expr.functions``) and SQL typing
(``sql.types``, whose ``parse_literal`` calls these parsers).
"""
from __future__ import annotations

import datetime as _dt
from decimal import Decimal
import math
import re
import struct
import uuid

from repr.arrays import Array, MdArray, array_out
from repr.dates import Interval, date_out, interval_out, time_out, timestamp_out
from repr.dates_infinity import DateInfinity
from repr.errors import EvalError
from repr.jsonb import Jsonb, jsonb_out
from repr.lists import List, list_out
from repr.maps import Map, map_out
from repr.numeric import NUM_RE, SPECIAL_WORDS, WHITESPACE, numeric_out
from repr.timestamp import MAX as MZ_TIMESTAMP_MAX

__all__ = ["INT_RANGES", "parse_int", "parse_int_many", "parse_bool", "bool_out", "parse_float8", "float8_out", "shortest_float_out",
           "float4_canon", "float4_exact", "float4_out", "parse_float4", "parse_mz_timestamp", "parse_bytea",
           "bytea_out", "bytea_escape_in", "bytea_escape_out", "parse_uuid", "TEXT_OUT", "to_text"]

#: integer type -> (least value, greatest value, display name)
INT_RANGES = {
    "int2": (-32768, 32767, "smallint"),
    "int4": (-2147483648, 2147483647, "integer"),
    "int8": (-9223372036854775808, 9223372036854775807, "bigint"),
}


def _syntax(type_display: str, s: str) -> EvalError:
    return EvalError("22P02", f'invalid input syntax for type {type_display}: "{s}"')


# ------------------------------------------------------------------------ bool, integers

_BOOL_WORDS = (("true", True), ("false", False), ("yes", True), ("no", False))


def parse_bool(s: str) -> bool:
    t = s.strip(WHITESPACE).lower()
    if t:
        for word, val in _BOOL_WORDS:
            if word.startswith(t):
                return val
        if t in ("on", "1"):
            return True
        if t in ("of", "off", "0"):
            return False
    raise _syntax("boolean", s)


def bool_out(b: bool) -> str:
    return "true" if b else "false"


_INT_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?[0-9]+)[ \t\n\r\f\v]*\Z")


def parse_int(s: str, type_: str = "int4") -> int:
    lo, hi, disp = INT_RANGES[type_]
    m = _INT_RE.match(s)
    if m is None:
        raise _syntax(disp, s)
    v = int(m.group(1))
    if not lo <= v <= hi:
        raise EvalError("22003", f'value "{s}" is out of range for type {disp}')
    return v


def oid_of(v: int) -> int:
    """An integer as an ``oid`` (0..2**32-1; a negative 32-bit value wraps, as PostgreSQL's
    int4-to-oid conversion does); 22003 outside -2**31..2**32-1."""
    if not -2147483648 <= v <= 4294967295:
        raise EvalError("22003", "OID out of range")
    return v & 0xFFFFFFFF


def parse_oid(s: str) -> int:
    """``oid`` input: an integer in -2**31..2**32-1 (a negative one wraps)."""
    m = _INT_RE.match(s)
    if m is None:
        raise _syntax("oid", s)
    v = int(m.group(1))
    if not -2147483648 <= v <= 4294967295:
        raise EvalError("22003", f'value "{s}" is out of range for type oid')
    return v & 0xFFFFFFFF


#: the characters of plain integers, and the lengths that cannot leave each type's range
_INT_CHARS = re.compile(r"[0-9+-]*")
_INT_WIDTH = {"int2": 4, "int4": 9, "int8": 18}


def parse_int_many(values: list, type_: str = "int4") -> list:
    """``[parse_int(v, type_) for v in values]`` for a list of str, raising the first error in
    order.  The common case is mapped in C: values of sign and digit characters no longer than
    the type's range allows (one regex pass over them joined) are ``int`` of themselves
    (``int`` accepts exactly ``[+-]?[0-9]+`` of those characters); anything else, or a value
    ``int`` refuses, takes the per-value path (and its errors)."""
    try:
        if max(map(len, values), default=0) <= _INT_WIDTH[type_] and _INT_CHARS.fullmatch("".join(values)):
            return list(map(int, values))
    except (ValueError, TypeError):
        pass
    return [parse_int(v, type_) for v in values]


def parse_mz_timestamp(s: str) -> int:
    m = _INT_RE.match(s)
    if m is None:
        raise _syntax("mz_timestamp", s)
    v = int(m.group(1))
    if not 0 <= v <= MZ_TIMESTAMP_MAX:
        raise EvalError("22003", f'mz_timestamp out of range: "{s}" (an mz_timestamp is 0 to {MZ_TIMESTAMP_MAX})')
    return v


# ---------------------------------------------------------------------------- floats


def _nonzero_mantissa(t: str) -> bool:
    return any(c in "123456789" for c in t.split("e")[0].split("E")[0])


def parse_float8(s: str) -> float:
    t = s.strip(WHITESPACE)
    low = t.lower()
    if low in SPECIAL_WORDS:
        return float(SPECIAL_WORDS[low])
    if NUM_RE.match(t) is None:
        raise _syntax("double precision", s)
    v = float(t)
    if v in (math.inf, -math.inf) or (v == 0.0 and _nonzero_mantissa(t)):
        raise EvalError("22003", f'"{t}" is out of range for type double precision')
    return v


def float8_out(x: float) -> str:
    """PostgreSQL 15's float8out (extra_float_digits = 1: shortest round-trip)."""
    return shortest_float_out(x, 15)


def shortest_float_out(x: float, max_exp: int) -> str:
    """PostgreSQL 15's float output for a value whose shortest decimal form is ``repr(x)``:
    plain notation for decimal exponents in ``[-4, max_exp)``, else ``d.ddde+XX``
    (float8out uses 15, float4out 6)."""
    if x != x:
        return "NaN"
    if x == math.inf:
        return "Infinity"
    if x == -math.inf:
        return "-Infinity"
    if x == 0.0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign, digits, exp = Decimal(repr(x)).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    # decimal exponent of the first digit
    e10 = exp + len(digits) - 1
    neg = "-" if sign else ""
    if -4 <= e10 < max_exp:
        if e10 < 0:
            return neg + "0." + "0" * (-e10 - 1) + ds
        if len(ds) <= e10 + 1:
            return neg + ds + "0" * (e10 + 1 - len(ds))
        return neg + ds[: e10 + 1] + "." + ds[e10 + 1:]
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return f"{neg}{mant}e{'-' if e10 < 0 else '+'}{abs(e10):02d}"


_F32 = struct.Struct("<f")


def float4_exact(x: float) -> float:
    """The float32 value the real ``x`` stands for, as a double."""
    return _F32.unpack(_F32.pack(x))[0]


def float4_canon(x: float) -> float:
    """``x`` rounded to float32, as the double of its shortest decimal form; raises
    ``OverflowError`` when it does not fit."""
    if x != x or x in (math.inf, -math.inf):
        return x
    e = _F32.unpack(_F32.pack(x))[0]
    for p in range(1, 10):
        d = float("%.*g" % (p, e))
        if _F32.unpack(_F32.pack(d))[0] == e:
            return d
    return e


def float4_out(x: float) -> str:
    """PostgreSQL 15's float4out: shortest digits, exponent form below 1e-4 or from 1e6."""
    return shortest_float_out(x, 6)


def parse_float4(s: str) -> float:
    """float4in: the canonical real value of ``s``."""
    t = s.strip(WHITESPACE)
    low = t.lower()
    if low in SPECIAL_WORDS:
        return float(SPECIAL_WORDS[low])
    if NUM_RE.match(t) is None:
        raise _syntax("real", s)
    try:
        r = float4_canon(float(t))
    except OverflowError:
        r = math.inf
    if r in (math.inf, -math.inf) or (r == 0.0 and _nonzero_mantissa(t)):
        raise EvalError("22003", f'"{t}" is out of range for type real')
    return r


# ----------------------------------------------------------------------------- bytea

_HEX_DIGITS = "0123456789abcdefABCDEF"


def parse_bytea(s: str) -> bytes:
    """byteain: ``\\x`` hex (blanks between digit pairs allowed), else the escape format."""
    if not s.startswith("\\x"):
        return bytea_escape_in(s)
    out = bytearray()
    i, n = 2, len(s)
    while i < n:
        c = s[i]
        if c in " \t\n\r":
            i += 1
            continue
        if c not in _HEX_DIGITS:
            raise EvalError("22023", f'invalid hexadecimal digit: "{c}"')
        if i + 1 >= n:
            raise EvalError("22023", "invalid hexadecimal data: odd number of digits")
        d = s[i + 1]
        if d not in _HEX_DIGITS:
            raise EvalError("22023", f'invalid hexadecimal digit: "{d}"')
        out.append(int(c + d, 16))
        i += 2
    return bytes(out)


def bytea_escape_in(s: str) -> bytes:
    """The escape format: ``\\\\`` a backslash, ``\\ooo`` an octal byte, other characters
    their UTF-8 bytes."""
    if "\\" not in s:
        return s.encode("utf-8", "surrogatepass")
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8", "surrogatepass")
            i += 1
        elif i + 1 < n and s[i + 1] == "\\":
            out.append(0x5C)
            i += 2
        elif i + 3 < n + 0 and s[i + 1] in "0123" and s[i + 2] in "01234567" and s[i + 3] in "01234567":
            out.append(int(s[i + 1:i + 4], 8))
            i += 4
        else:
            raise EvalError("22P02", "invalid input syntax for type bytea")
    return bytes(out)


def bytea_out(b: bytes) -> str:
    return "\\x" + b.hex()


def bytea_escape_out(b: bytes) -> str:
    out = []
    for x in b:
        if x == 0 or x >= 0x80:
            out.append("\\%03o" % x)
        elif x == 0x5C:
            out.append("\\\\")
        else:
            out.append(chr(x))
    return "".join(out)


# ------------------------------------------------------------------------------ uuid

_HEX = set(_HEX_DIGITS)


def parse_uuid(s: str) -> uuid.UUID:
    """uuid_in: 32 hex digits, a hyphen allowed after each group of four, optionally in braces."""
    i, n = 0, len(s)
    braces = n > 0 and s[0] == "{"
    if braces:
        i = 1
    digits = []
    for k in range(16):
        if i + 1 >= n or s[i] not in _HEX or s[i + 1] not in _HEX:
            raise _syntax("uuid", s)
        digits.append(s[i:i + 2])
        i += 2
        if i < n and s[i] == "-" and k % 2 == 1 and k < 15:
            i += 1
    if braces:
        if i >= n or s[i] != "}":
            raise _syntax("uuid", s)
        i += 1
    if i != n:
        raise _syntax("uuid", s)
    return uuid.UUID("".join(digits))


# --------------------------------------------------------------------------- to_text


def _array_text(a) -> str:
    return array_out(a, to_text)


def _list_text(lst) -> str:
    return list_out(lst, to_text)


def _map_text(m) -> str:
    return map_out(m, to_text)


#: Python type -> output function, for the value types other than the plain ones ``to_text``
#: tests first (str, bool, int, float, Decimal, tuple)
TEXT_OUT: dict[type, object] = {
    _dt.date: date_out,
    _dt.time: time_out,
    _dt.datetime: timestamp_out,
    Interval: interval_out,
    DateInfinity: str,
    bytes: bytea_out,
    uuid.UUID: str,
    Jsonb: jsonb_out,
    Array: _array_text,
    MdArray: _array_text,
    List: _list_text,
    Map: _map_text,
}


def to_text(v) -> str:
    """The text form of any non-NULL SQL value, chosen by its Python type."""
    t = type(v)
    if t is str:
        return v
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return float8_out(v)
    if t is Decimal:
        return numeric_out(v)
    if t is tuple:
        return "(" + ",".join("" if x is None else to_text(x) for x in v) + ")"
    out = TEXT_OUT.get(t)
    if out is not None:
        return out(v)
    return str(v)
