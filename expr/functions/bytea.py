"""The functions over ``bytea`` (Python ``bytes``).

Owns the func ids ``sql.functions.bytea`` names: ``length``, ``bit_length``, ``length`` and
``convert_from`` in a named encoding (``_codec``: the encodings Python's codecs know, under
any of their spellings; undecodable bytes raise 22021), ``substr`` (1-based, clamped),
``encode``/``decode`` (``hex``, ``base64`` with PostgreSQL's 76-column lines, ``escape``),
``md5``, ``get_byte``, ``||``, Materialize's ``digest``/``hmac`` (``md5``, ``sha1``, ``sha224``,
``sha256``, ``sha384``, ``sha512``; any other algorithm 22023) and ``constant_time_eq``
(``hmac.compare_digest``), and the casts to and from ``text`` (``sql.types.bytea``).
Invariant: raises only ``EvalError`` with PostgreSQL's SQLSTATE and message.
Deliberately not here: the text input and output (``repr.strconv``) and comparisons
(``expr.functions.generic``: bytes order as PostgreSQL's bytea, bytewise).
"""
from __future__ import annotations

import base64
import binascii
import codecs
import functools
import hashlib
import hmac as _hmac

from expr.functions.common import add
from repr.errors import EvalError
from repr.strconv import bytea_escape_in, bytea_escape_out, bytea_out, parse_bytea

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)


def bytea_encode(b: bytes, fmt: str) -> str:
    f = fmt.lower()
    if f == "hex":
        return b.hex()
    if f == "base64":
        s = base64.b64encode(b).decode()
        return "\n".join(s[i:i + 76] for i in range(0, len(s), 76))
    if f == "escape":
        return bytea_escape_out(b)
    raise EvalError("22023", f'unrecognized encoding: "{fmt}"')


def bytea_decode(s: str, fmt: str) -> bytes:
    f = fmt.lower()
    if f == "hex":
        return parse_bytea("\\x" + s)
    if f == "base64":
        t = "".join(s.split())
        try:
            return base64.b64decode(t, validate=True)
        except (binascii.Error, ValueError):
            raise EvalError("22023", "invalid base64 end sequence") from None
    if f == "escape":
        return bytea_escape_in(s)
    raise EvalError("22023", f'unrecognized encoding: "{fmt}"')


def _codec(name: str) -> str:
    try:
        return codecs.lookup(name.strip()).name
    except LookupError:
        raise EvalError("22023", f"invalid encoding name '{name}'") from None


def bytea_convert_from(b: bytes, encoding: str) -> str:
    """``b`` decoded from ``encoding`` (Materialize's message for bytes that do not decode)."""
    codec = _codec(encoding)
    try:
        s = b.decode(codec)
    except UnicodeDecodeError as ex:
        n = ex.end - ex.start
        raise EvalError("22021", f"invalid {encoding.strip().lower()} sequence of {n} bytes from index {ex.start}") \
            from None
    if "\0" in s:
        raise EvalError("22021", 'invalid byte sequence for encoding "UTF8": 0x00')
    return s


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


_add("cast_text_to_bytea", parse_bytea)
_add("cast_bytea_to_text", bytea_out)
_add("bytea_length", len)
_add("bytea_bit_length", lambda b: 8 * len(b))
_add("text_bit_length", lambda s: 8 * len(s.encode()))
_add("bytea_length_in", lambda b, enc: len(bytea_convert_from(b, enc)))
_add("bytea_convert_from", bytea_convert_from)
_add("bytea_substr", bytea_substr)
_add("bytea_encode", bytea_encode)
_add("bytea_decode", bytea_decode)
_add("bytea_md5", lambda b: hashlib.md5(b).hexdigest())
_add("bytea_get_byte", bytea_get_byte)
_add("bytea_concat", lambda a, b: a + b)


_HASHES = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512")


def _algorithm(name: str) -> str:
    if name.lower() not in _HASHES:
        raise EvalError("22023", f"invalid hash algorithm '{name}'")
    return name.lower()


def _bytes(x) -> bytes:
    return x.encode() if isinstance(x, str) else x


def digest(data, algorithm: str) -> bytes:
    return hashlib.new(_algorithm(algorithm), _bytes(data)).digest()


def hmac_digest(data, key, algorithm: str) -> bytes:
    return _hmac.new(_bytes(key), _bytes(data), _algorithm(algorithm)).digest()


def constant_time_eq(a, b) -> bool:
    return _hmac.compare_digest(_bytes(a), _bytes(b))


_add("digest", digest)
_add("hmac", hmac_digest)
_add("constant_time_eq", constant_time_eq)
