"""The functions over ``char(n)`` (``bpchar``) and the ``char(n)``/``varchar(n)`` checks.

Owns the func ids ``sql.functions.char`` and ``sql.types.char`` name: the ``"char"`` casts
(``repr.char``'s ``pg_char_*``), the ``bpchar`` casts
(to text drops trailing blanks; from text is the identity; the other types convert through
their text forms, ``DERIVED`` from their own text casts) and the modifier checks the binder
inserts, ``typmod_bpchar(s, n, explicit)`` and ``typmod_varchar(s, n, explicit)``
(``repr.char``'s).
Invariant: raises only ``EvalError``; a cast from ``bpchar`` reads the value without its
trailing blanks, as PostgreSQL's does.
Deliberately not here: deciding where modifiers apply (the binder), the value rules
(``repr.char``) and ``char(n)``'s comparisons (those of text, through the implicit cast:
``sql.types.char``).
"""
from __future__ import annotations

import functools

from expr.functions.common import FuncImpl, add
from repr.char import pg_char_from_int, pg_char_in, pg_char_to_int, typmod_bpchar, typmod_varchar

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)

#: the types converting to and from bpchar through text (``sql.types.char.BPCHAR_PEERS``)
_PEERS = ("bool", "int2", "int4", "int8", "numeric", "float4", "float8")

_add("typmod_bpchar", typmod_bpchar)
_add("typmod_varchar", typmod_varchar)
_add("cast_bpchar_to_text", lambda s: s.rstrip(" "), inline="{0}.rstrip(' ')")
_add("cast_text_to_bpchar", lambda s: s, inline="{0}")
_add("cast_char_to_text", lambda s: s, inline="{0}")
_add("cast_char_to_bpchar", lambda s: s, inline="{0}")
_add("cast_text_to_char", pg_char_in)
_add("cast_bpchar_to_char", lambda s: pg_char_in(s.rstrip(" ")))
_add("cast_char_to_int4", pg_char_to_int)
_add("cast_int4_to_char", pg_char_from_int)


def _to_bpchar(t: str):
    """``cast_<t>_to_bpchar``: the value's text form."""
    return lambda functions: functions[f"cast_{t}_to_text"]


def _from_bpchar(t: str):
    """``cast_bpchar_to_<t>``: ``t``'s text input, on the value without trailing blanks."""
    def build(functions):
        parse = functions[f"cast_text_to_{t}"].fn
        return FuncImpl(lambda s: parse(s.rstrip(" ")))
    return build


#: implementations over the assembled registry (``expr.functions``)
DERIVED = {**{f"cast_{t}_to_bpchar": _to_bpchar(t) for t in _PEERS},
           **{f"cast_bpchar_to_{t}": _from_bpchar(t) for t in _PEERS}}
