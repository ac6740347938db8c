"""Character values with a length: ``char(n)`` (``bpchar``) and ``varchar(n)``.

Owns the value side of their type modifiers, as PostgreSQL's bpchar() and varchar() apply
them on a cast or an assignment: ``typmod_bpchar(s, n, explicit)`` pads to ``n`` blanks or
truncates, ``typmod_varchar(s, n, explicit)`` truncates; an explicit cast truncates silently,
an assignment raises 22001 when a non-blank character would be lost.  ``VARCHAR_MAX`` is the
largest length a modifier may give.
Invariant: a ``char(n)`` value is a ``str`` of exactly ``n`` characters (what the user reads
back; its comparisons drop the trailing blanks, see ``sql.types.char``); a modifier ``n`` of
None (``varchar`` without a length) leaves the value unchanged.  Errors are ``EvalError``.
Also the one-byte type ``"char"`` (PostgreSQL's internal ``char``): ``pg_char_in`` keeps the
first byte of its input (``\\ooo``, a backslash and three octal digits, spells any byte) and a
value is held as its output text (``pg_char_out`` of the byte: empty for byte 0, the character
below 128, ``\\ooo`` above), so it reads back, stores and prints as text; ``pg_char_to_int``
/ ``pg_char_from_int`` convert with the byte as a signed integer (22003 outside -128..127).
Deliberately not here: validating the modifier as written (``sql.types.char``) and the casts
between ``bpchar`` and other types (``expr.functions.char``).
"""
from __future__ import annotations

from repr.errors import EvalError

#: PostgreSQL's largest char(n)/varchar(n) length
VARCHAR_MAX = 10485760


def _too_long(word: str, n: int) -> EvalError:
    return EvalError("22001", f"value too long for type {word}({n})")


def typmod_bpchar(s: str, n, explicit: bool) -> str:
    if n is None:
        return s
    k = len(s)
    if k > n:
        if not explicit and s[n:].strip(" "):
            raise _too_long("character", n)
        return s[:n]
    return s if k == n else s + " " * (n - k)


def typmod_varchar(s: str, n, explicit: bool) -> str:
    if n is None or len(s) <= n:
        return s
    if not explicit and s[n:].strip(" "):
        raise _too_long("character varying", n)
    return s[:n]


# ------------------------------------------------------------------ "char"

def pg_char_out(b: int) -> str:
    """The text of the byte ``b`` (0..255) as a ``"char"`` value."""
    if b == 0:
        return ""
    return chr(b) if b < 128 else "\\%03o" % b


def _octal(s: str) -> bool:
    return len(s) == 4 and s[0] == "\\" and all(c in "01234567" for c in s[1:])


def pg_char_in(s: str) -> str:
    """``"char"`` input: the first byte of ``s`` (``\\ooo`` names one byte)."""
    if _octal(s):
        return pg_char_out(int(s[1:], 8) & 0xFF)
    return pg_char_out(s.encode()[0]) if s else ""


def pg_char_to_int(v: str) -> int:
    if not v:
        return 0
    b = int(v[1:], 8) if _octal(v) else ord(v[0])
    return b - 256 if b >= 128 else b


def pg_char_from_int(i: int) -> str:
    if not -128 <= i <= 127:
        raise EvalError("22003", '"char" out of range')
    return pg_char_out(i & 0xFF)
