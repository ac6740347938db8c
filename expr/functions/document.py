"""Implementations of the bytea, uuid, jsonb and array functions, registered into
``expr.functions.FUNCTIONS`` when that module is imported.

Owns (with ``expr.functions.jsonb`` and ``expr.functions.arrays``, split out to keep
modules short): input/output of ``bytea`` (Python ``bytes``; hex and escape input, hex output),
``uuid`` (``uuid.UUID``; PostgreSQL's accepted input forms, lowercase hyphenated output),
``jsonb`` (``repr.jsonb.Jsonb``) and arrays (``repr.arrays.Array``), their text
output hooks (``functions_text.TEXT_OUT``), the casts, operators and functions named by
``sql.functions_document``, the array casts synthesized per element type (a resolver in
``expr.functions.RESOLVERS``: ``cast_text_to_int4[]``, ``cast_int4[]_to_text``,
``cast_int4[]_to_int8[]``), ``to_jsonb`` of any value, the finishers of ``array_agg``,
``jsonb_agg`` and ``jsonb_object_agg`` (``collect_finish``), the ANY/ALL array
comparisons and the jsonb table functions (``TABLE_FUNCTIONS_DOCUMENT``, which the FlatMap
operator and the reference evaluator consult after their own tables).
Invariant: every function raises only ``EvalError`` with PostgreSQL's SQLSTATE and message.
``VOLATILE`` names the func ids that must not be folded at plan time nor maintained.
Deliberately not here: SQL signatures (``sql.functions_document``).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import uuid

from expr.functions import _reg, text as _text
from repr.errors import EvalError
from repr.jsonb import Jsonb, jsonb_out

#: func ids whose value changes per call: never constant-folded, refused in maintained objects
VOLATILE = frozenset({"gen_random_uuid"})

# ------------------------------------------------------------------ bytea


def bytea_in(s: str) -> bytes:
    if s.startswith("\\x"):
        out = bytearray()
        i, n = 2, len(s)
        while i < n:
            c = s[i]
            if c in " \t\n\r":
                i += 1
                continue
            if c not in "0123456789abcdefABCDEF":
                raise EvalError("22023", f'invalid hexadecimal digit: "{c}"')
            if i + 1 >= n:
                raise EvalError("22023", "invalid hexadecimal data: odd number of digits")
            d = s[i + 1]
            if d not in "0123456789abcdefABCDEF":
                raise EvalError("22023", f'invalid hexadecimal digit: "{d}"')
            out.append(int(c + d, 16))
            i += 2
        return bytes(out)
    return _escape_in(s)


def _escape_in(s: str) -> bytes:
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


def _escape_out(b: bytes) -> str:
    out = []
    for x in b:
        if x == 0 or x >= 0x80:
            out.append("\\%03o" % x)
        elif x == 0x5C:
            out.append("\\\\")
        else:
            out.append(chr(x))
    return "".join(out)


def bytea_encode(b: bytes, fmt: str) -> str:
    f = fmt.lower()
    if f == "hex":
        return b.hex()
    if f == "base64":
        s = base64.b64encode(b).decode()
        return "\n".join(s[i:i + 76] for i in range(0, len(s), 76))
    if f == "escape":
        return _escape_out(b)
    raise EvalError("22023", f'unrecognized encoding: "{fmt}"')


def bytea_decode(s: str, fmt: str) -> bytes:
    f = fmt.lower()
    if f == "hex":
        return bytea_in("\\x" + s)
    if f == "base64":
        t = "".join(s.split())
        try:
            return base64.b64decode(t, validate=True)
        except (binascii.Error, ValueError):
            raise EvalError("22023", "invalid base64 end sequence") from None
    if f == "escape":
        return _escape_in(s)
    raise EvalError("22023", f'unrecognized encoding: "{fmt}"')


def bytea_substr(b: bytes, start: int, count=None) -> bytes:
    if count is None:
        return b[max(start - 1, 0):]
    if count < 0:
        raise EvalError("22011", "negative substring length not allowed")
    end = start + count
    return b[max(start - 1, 0):max(end - 1, 0)]


def bytea_get_byte(b: bytes, n: int) -> int:
    if not 0 <= n < len(b):
        raise EvalError("2202E", f"index {n} out of valid range, 0..{len(b) - 1}")
    return b[n]


_reg("cast_text_to_bytea", bytea_in)
_reg("cast_bytea_to_text", bytea_out)
_reg("bytea_length", len)
_reg("bytea_substr", bytea_substr)
_reg("bytea_encode", bytea_encode)
_reg("bytea_decode", bytea_decode)
_reg("bytea_md5", lambda b: hashlib.md5(b).hexdigest())
_reg("bytea_get_byte", bytea_get_byte)
_reg("bytea_concat", lambda a, b: a + b)


# ------------------------------------------------------------------ uuid

_HEX = set("0123456789abcdefABCDEF")


def uuid_in(s: str) -> uuid.UUID:
    i, n = 0, len(s)
    braces = n > 0 and s[0] == "{"
    if braces:
        i = 1
    digits = []
    for k in range(16):
        if i + 1 >= n or s[i] not in _HEX or s[i + 1] not in _HEX:
            raise EvalError("22P02", f'invalid input syntax for type uuid: "{s}"')
        digits.append(s[i:i + 2])
        i += 2
        if i < n and s[i] == "-" and k % 2 == 1 and k < 15:
            i += 1
    if braces:
        if i >= n or s[i] != "}":
            raise EvalError("22P02", f'invalid input syntax for type uuid: "{s}"')
        i += 1
    if i != n:
        raise EvalError("22P02", f'invalid input syntax for type uuid: "{s}"')
    return uuid.UUID("".join(digits))


_reg("cast_text_to_uuid", uuid_in)
_reg("cast_uuid_to_text", str)
_reg("gen_random_uuid", uuid.uuid4)


# ------------------------------------------------------------------ text output

_text.TEXT_OUT[bytes] = bytea_out
_text.TEXT_OUT[uuid.UUID] = str
_text.TEXT_OUT[Jsonb] = jsonb_out



# the jsonb and array halves (split only to keep modules short); re-exported names
from expr.functions.arrays import collect_finish, ordered_aggregate  # noqa: E402,F401
from expr.functions.jsonb import TABLE_FUNCTIONS_DOCUMENT, to_jsonb, to_jsonb_value  # noqa: E402,F401

__all__ = ["VOLATILE", "collect_finish", "ordered_aggregate", "to_jsonb", "to_jsonb_value",
           "TABLE_FUNCTIONS_DOCUMENT", "bytea_in", "bytea_out", "uuid_in"]
