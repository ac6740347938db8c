"""Character values with a length: ``char(n)`` (``bpchar``) and ``varchar(n)``.

Owns the value side of their type modifiers, as PostgreSQL's bpchar() and varchar() apply
them on a cast or an assignment: ``typmod_bpchar(s, n, explicit)`` pads to ``n`` blanks or
truncates, ``typmod_varchar(s, n, explicit)`` truncates; an explicit cast truncates silently,
an assignment raises 22001 when a non-blank character would be lost.  ``VARCHAR_MAX`` is the
largest length a modifier may give.
Invariant: a ``char(n)`` value is a ``str`` of exactly ``n`` characters (what the user reads
back; its comparisons drop the trailing blanks, see ``sql.types.char``); a modifier ``n`` of
None (``varchar`` without a length) leaves the value unchanged.  Errors are ``EvalError``.
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
