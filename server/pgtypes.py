"""Values on the wire: type OIDs, and the text and binary formats of every mzlite type.

Owns ``TYPES`` (mzlite's type name, short or display, -> ``PgType``: PostgreSQL's OID, typlen
and array OID), and the codecs between engine values and the wire: ``encoder(type, format)``
for result columns and ``decode_parameter(oid, format, data)`` for Bind's parameters.

Invariants: the OIDs of the types PostgreSQL also has are PostgreSQL's (``pg_type.oid``),
so psycopg, asyncpg and JDBC decode them with their built-in codecs; ``mz_timestamp`` and
the list types use Materialize's OIDs; text output is PostgreSQL's text output (``t``/``f``
for booleans, ``repr.strconv`` for the rest), binary output PostgreSQL's ``typsend``.  A
type without a binary form (Materialize's lists, records) refuses the binary format with
0A000 rather than sending something a client would misread.
Deliberately not here: the messages that carry values (``server.messages``), which type a
parameter or column has (the engine: ``Connection.describe``).
"""
from __future__ import annotations

import datetime as _dt
import json
import struct
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, Optional

from mzlite.pg_catalog import JSON_OID, PG_TYPES
from repr.strconv import float4_out, to_text
from sql.errors import Error, error_for


@dataclass(frozen=True)
class PgType:
    """One type as PostgreSQL clients see it: ``oid``, ``typlen`` (-1 variable) and the OID of
    its array type (0 none); ``name`` is mzlite's short name."""
    name: str
    oid: int
    typlen: int
    array_oid: int


#: mzlite type name (short and display) -> PgType
TYPES: dict[str, PgType] = {}
#: OID -> PgType (arrays included, as ``name[]``)
BY_OID: dict[int, PgType] = {}
for _name, _display, _oid, _typname, _len, _cat, _arr in PG_TYPES:  # the engine's pg_type
    TYPES[_name] = TYPES[_display] = BY_OID[_oid] = PgType(_name, _oid, _len, _arr)
    if _arr:
        TYPES[_name + "[]"] = TYPES[_display + "[]"] = BY_OID[_arr] = PgType(_name + "[]", _arr, -1, 0)
TYPES["json"] = BY_OID[JSON_OID] = PgType("json", JSON_OID, -1, 199)
TEXT = TYPES["text"]


def pg_type(type_name: str) -> PgType:
    """The wire type of an mzlite type name (lists and other types without a PostgreSQL
    counterpart travel as text)."""
    return TYPES.get(type_name) or TEXT


def type_name_for_oid(oid: int) -> Optional[str]:
    """mzlite's type name for a parameter type OID a client declared (None: infer it)."""
    if oid == 0:
        return None
    t = BY_OID.get(oid)
    if t is None or t.name == "unknown":
        return None
    if t.name == "record":
        return None
    return {"json": "jsonb", "oid": "int8"}.get(t.name, t.name)


# ------------------------------------------------------------------ text output

def _str_bytes(v) -> bytes:
    return (v if type(v) is str else to_text(v)).encode("utf-8")


def _bool_text(v) -> bytes:
    return b"t" if v else b"f"


def _text_encoder(name: str) -> Callable:
    if name == "bool":
        return _bool_text
    if name == "float4":
        return lambda v: float4_out(v).encode()
    if name in ("text", "varchar", "bpchar"):
        return _str_bytes
    if name.endswith("[]") and name.startswith("bool"):
        return lambda v: to_text(v).replace("true", "t").replace("false", "f").encode("utf-8")
    return lambda v: to_text(v).encode("utf-8")


# ------------------------------------------------------------------ binary output

_EPOCH_DATE = _dt.date(2000, 1, 1)
_EPOCH_TS = _dt.datetime(2000, 1, 1)
_EPOCH_TSTZ = _dt.datetime(2000, 1, 1, tzinfo=_dt.timezone.utc)
_I64_MAX, _I64_MIN = 2 ** 63 - 1, -2 ** 63
_I32_MAX, _I32_MIN = 2 ** 31 - 1, -2 ** 31


def _infinite(v):
    return getattr(v, "sign", None) if type(v).__name__ == "DateInfinity" else None


def _date_bin(v) -> bytes:
    s = _infinite(v)
    if s is not None:
        return struct.pack("!i", _I32_MAX if s > 0 else _I32_MIN)
    return struct.pack("!i", (v - _EPOCH_DATE).days)


def _micros(delta: _dt.timedelta) -> int:
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _timestamp_bin(v) -> bytes:
    s = _infinite(v)
    if s is not None:
        return struct.pack("!q", _I64_MAX if s > 0 else _I64_MIN)
    return struct.pack("!q", _micros(v - (_EPOCH_TSTZ if v.tzinfo is not None else _EPOCH_TS)))


def _time_bin(v) -> bytes:
    return struct.pack("!q", ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond)


def _interval_bin(v) -> bytes:
    return struct.pack("!qii", v.micros, v.days, v.months)


def _numeric_bin(v: Decimal) -> bytes:
    if v.is_nan():
        return struct.pack("!hhHH", 0, 0, 0xC000, 0)
    if v.is_infinite():
        return struct.pack("!hhHH", 0, 0, 0xD000 if v > 0 else 0xF000, 0)
    sign, digits, exp = v.as_tuple()
    dscale = max(-exp, 0)
    ds = "".join(map(str, digits))
    if exp > 0:
        ds += "0" * exp
        exp = 0
    int_part = ds[:len(ds) + exp] if len(ds) + exp > 0 else ""
    frac = ds[len(ds) + exp:] if exp < 0 else ""
    if len(ds) + exp < 0:
        frac = "0" * (-(len(ds) + exp)) + ds
    int_part = int_part.lstrip("0")
    int_part = "0" * ((-len(int_part)) % 4) + int_part
    frac = frac + "0" * ((-len(frac)) % 4)
    groups = [int(int_part[i:i + 4]) for i in range(0, len(int_part), 4)] + \
             [int(frac[i:i + 4]) for i in range(0, len(frac), 4)]
    weight = len(int_part) // 4 - 1
    while groups and groups[0] == 0:  # leading zero groups
        groups.pop(0)
        weight -= 1
    while groups and groups[-1] == 0:
        groups.pop()
    if not groups:
        weight = 0
    return struct.pack(f"!hhHH{len(groups)}H", len(groups), weight, 0x4000 if sign else 0, dscale, *groups)


def _jsonb_bin(v) -> bytes:
    return b"\x01" + to_text(v).encode("utf-8")


def _scalar_binary(name: str) -> Optional[Callable]:
    return {
        "bool": lambda v: b"\x01" if v else b"\x00",
        "int2": struct.Struct("!h").pack, "int4": struct.Struct("!i").pack, "int8": struct.Struct("!q").pack,
        "oid": struct.Struct("!I").pack, "mz_timestamp": struct.Struct("!Q").pack,
        "float4": struct.Struct("!f").pack, "float8": struct.Struct("!d").pack,
        "text": _str_bytes, "varchar": _str_bytes, "bpchar": _str_bytes, "bytea": bytes, "uuid": lambda v: v.bytes,
        "date": _date_bin, "time": _time_bin, "timestamp": _timestamp_bin, "timestamptz": _timestamp_bin,
        "interval": _interval_bin, "numeric": _numeric_bin, "jsonb": _jsonb_bin,
    }.get(name)


def _array_binary(elem: PgType, enc: Callable) -> Callable:
    def encode(v) -> bytes:
        dims = v.dims
        parts = [struct.pack("!iii", len(dims), 1 if any(x is None for x in v) else 0, elem.oid)]
        parts += [struct.pack("!ii", d, 1) for d in dims]
        for x in v:
            if x is None:
                parts.append(b"\xff\xff\xff\xff")
            else:
                b = enc(x)
                parts.append(struct.pack("!i", len(b)) + b)
        return b"".join(parts)
    return encode


def _parsing_strings(enc: Callable, name: str) -> Callable:
    """``enc``, for a column whose value may arrive as the text of a value of its type (a
    parameter the client declared as ``name`` that binds as an untyped string)."""
    def encode(v):
        if type(v) is str:
            from sql.types import parse_literal
            v = parse_literal(v, name)
        return enc(v)
    return encode


def encoder(type_name: str, fmt: int) -> Callable:
    """The function from a non-NULL engine value of type ``type_name`` to its wire bytes in
    format ``fmt`` (0 text, 1 binary); 0A000 for binary where the type has none."""
    t = pg_type(type_name)
    if fmt == 0:
        return _text_encoder(t.name if t is not TEXT else "")
    if t.name.endswith("[]"):
        elem = TYPES[t.name[:-2]]
        enc = _scalar_binary(elem.name)
        if enc is not None:
            return _array_binary(elem, enc)
    else:
        enc = _scalar_binary(t.name if (t is not TEXT or type_name in TYPES) else "")
        if enc is not None:
            return enc if t.name in ("text", "varchar", "bpchar") else _parsing_strings(enc, t.name)
    raise error_for("0A000", f"binary format for type {type_name} is not supported")


# ------------------------------------------------------------------ parameters

def _parse_bool(s: str) -> bool:
    v = s.strip().lower()
    if v in ("t", "true", "y", "yes", "on", "1"):
        return True
    if v in ("f", "false", "n", "no", "off", "0"):
        return False
    raise error_for("22P02", f'invalid input syntax for type boolean: "{s}"')


def _text_param(name: str, s: str):
    """A text-format parameter of declared type ``name`` as the Python value that binds as
    that type (text and untyped parameters stay strings: an untyped literal, as in PostgreSQL)."""
    try:
        if name in ("int2", "int4", "int8", "oid"):
            return int(s)
        if name in ("float4", "float8"):
            return float(s)
        if name == "numeric":
            return Decimal(s)
        if name == "bool":
            return _parse_bool(s)
        if name == "uuid":
            return uuid.UUID(s)
        if name == "bytea":
            from repr.strconv import parse_bytea
            return parse_bytea(s)
        if name in ("json", "jsonb"):
            return _json_param(s)
        if name in ("date", "time", "timestamp", "timestamptz"):
            from sql.types import parse_literal  # the engine's own input function
            return parse_literal(s, name)
    except (ValueError, ArithmeticError):
        raise error_for("22P02", f'invalid input syntax for type {name}: "{s}"') from None
    return s


def _json_param(s: str):
    """A JSON parameter: an object binds as jsonb (a dict); any other JSON text stays an
    untyped string, which the context casts (a list would bind as an array)."""
    try:
        v = json.loads(s, parse_float=Decimal)
    except ValueError:
        raise error_for("22P02", "invalid input syntax for type json") from None
    return v if isinstance(v, dict) else s


def _array_param(elem: str, b: bytes) -> str:
    """A binary array (``array_send``'s layout: ndim, has-null flag, element OID, a (length,
    lower bound) pair per dimension, then each element as length and bytes) as its text
    literal, an untyped string the column's array input reads (lower bounds other than 1
    are refused, as mzlite's arrays have none)."""
    from repr.arrays import make_array
    ndim, _flags, _oid = struct.unpack_from("!iii", b, 0)
    if not 0 <= ndim <= 6:
        raise error_for("22P03", f"invalid number of dimensions: {ndim}")
    pos, dims = 12, []
    for _ in range(ndim):
        length, lower = struct.unpack_from("!ii", b, pos)
        if lower != 1:
            raise error_for("0A000", "array lower bounds other than 1 are not supported")
        dims.append(length)
        pos += 8
    n = 1
    for d in dims:
        n *= d
    elems = []
    for _ in range(n if dims else 0):
        (length,) = struct.unpack_from("!i", b, pos)
        pos += 4
        if length == -1:
            elems.append(None)
            continue
        data = b[pos:pos + length]
        if len(data) != length:
            raise struct.error("short element")
        pos += length
        if elem == "interval":
            from repr.dates import Interval
            micros, days, months = struct.unpack("!qii", data)
            elems.append(Interval(months, days, micros))
        else:
            v = _binary_param(elem, data)
            elems.append(v if not isinstance(v, dict) else json.dumps(v, default=str))
    if pos != len(b):
        raise struct.error("trailing bytes")
    return to_text(make_array(elems, dims))


#: the binary size of the fixed-size types: fewer bytes is PostgreSQL's 08P01, more its 22P03
_FIXED_SIZE = {"bool": 1, "int2": 2, "int4": 4, "int8": 8, "oid": 4, "mz_timestamp": 8, "float4": 4, "float8": 8,
               "date": 4, "time": 8, "timestamp": 8, "timestamptz": 8, "interval": 16, "uuid": 16}


def _binary_param(name: str, b: bytes):
    size = _FIXED_SIZE.get(name)
    if size is not None and len(b) != size:
        if len(b) < size:
            raise error_for("08P01", "insufficient data left in message")
        raise error_for("22P03", f"incorrect binary data format in bind parameter of type {name}")
    try:
        if name.endswith("[]"):
            return _array_param(name[:-2], b)
        if name == "bool":
            return b != b"\x00"
        if name == "int2":
            return struct.unpack("!h", b)[0]
        if name == "int4":
            return struct.unpack("!i", b)[0]
        if name in ("int8",):
            return struct.unpack("!q", b)[0]
        if name == "oid":
            return struct.unpack("!I", b)[0]
        if name == "mz_timestamp":
            return struct.unpack("!Q", b)[0]
        if name == "float4":
            return struct.unpack("!f", b)[0]
        if name == "float8":
            return struct.unpack("!d", b)[0]
        if name in ("text", "varchar", "bpchar", "unknown", "json"):
            return b.decode("utf-8")
        if name == "bytea":
            return bytes(b)
        if name == "uuid":
            return uuid.UUID(bytes=bytes(b))
        if name == "date":
            return _EPOCH_DATE + _dt.timedelta(days=struct.unpack("!i", b)[0])
        if name == "timestamp":
            return _EPOCH_TS + _dt.timedelta(microseconds=struct.unpack("!q", b)[0])
        if name == "timestamptz":
            return _EPOCH_TSTZ + _dt.timedelta(microseconds=struct.unpack("!q", b)[0])
        if name == "time":
            us = struct.unpack("!q", b)[0]
            return (_dt.datetime.min + _dt.timedelta(microseconds=us)).time()
        if name == "interval":
            from repr.dates import Interval
            micros, days, months = struct.unpack("!qii", b)
            if not months:
                return _dt.timedelta(days=days, microseconds=micros)
            return to_text(Interval(months, days, micros))  # an untyped literal: months stay months
        if name == "numeric":
            return _numeric_from_binary(b)
        if name == "jsonb":
            return _json_param(b[1:].decode("utf-8"))
    except (struct.error, ValueError, OverflowError, UnicodeDecodeError):
        raise error_for("22P03", f"incorrect binary data format in bind parameter of type {name}") from None
    raise error_for("0A000", f"binary format for parameters of type {name} is not supported")


def _numeric_from_binary(b: bytes) -> Decimal:
    n, weight, sign, dscale = struct.unpack("!hhHH", b[:8])
    if sign == 0xC000:
        return Decimal("NaN")
    if sign in (0xD000, 0xF000):
        return Decimal("Infinity") if sign == 0xD000 else Decimal("-Infinity")
    groups = struct.unpack(f"!{n}H", b[8:8 + 2 * n])
    digits = "".join(f"{g:04d}" for g in groups) or "0"
    exp = (weight - n + 1) * 4 if groups else 0
    if -exp > dscale:  # drop the zero padding of the last group beyond the scale
        digits = digits[:len(digits) - (-exp - dscale)] or "0"
        exp = -dscale
    elif -exp < dscale:
        digits += "0" * (dscale + exp)
        exp = -dscale
    # a tuple, not arithmetic: no context precision limits the digits
    return Decimal((1 if sign == 0x4000 else 0, tuple(int(d) for d in digits), exp))


def decode_parameter(type_name: Optional[str], fmt: int, data: Optional[bytes]):
    """A Bind parameter as the Python value ``Cursor.execute`` binds: None for NULL; by the
    statement's parameter type ``type_name`` (None: untyped, a string)."""
    if data is None:
        return None
    name = type_name or "unknown"
    if fmt == 1:
        return _binary_param(name, data)
    try:
        s = bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise error_for("22021", 'invalid byte sequence for encoding "UTF8"') from None
    return _text_param(name, s)


__all__ = ["PgType", "TYPES", "BY_OID", "pg_type", "type_name_for_oid", "encoder", "decode_parameter", "Error"]
