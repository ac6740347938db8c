"""The functions over ``boolean``: three-valued logic, the boolean tests and its casts.

Owns the func ids ``sql.functions.boolean`` names: ``and``/``or`` (lazy: ``expr.compile``
short-circuits them; the functions are the n-ary truth tables), ``not``, ``is_true`` ...
``is_not_false`` (never NULL), and the casts between ``boolean`` and ``text`` / ``integer`` /
``bigint`` (to boolean)
(``sql.types.boolean``).
Invariant: the truth tables are SQL's (FALSE dominates AND, TRUE dominates OR, NULL
otherwise); raises only ``EvalError``.
Deliberately not here: comparisons of booleans (``expr.functions.generic``'s) and the
parser and printer (``repr.strconv``).
"""
from __future__ import annotations

import functools

from expr.functions.common import add
from repr.strconv import bool_out, parse_bool

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)


def _connective(dominant: bool):
    """The n-ary truth table in which ``dominant`` decides (FALSE for AND, TRUE for OR)."""
    def f(*args):
        res = not dominant
        for a in args:
            if a is dominant:
                return dominant
            if a is None:
                res = None
        return res
    return f


_add("and", _connective(False), strict=False, lazy=True)
_add("or", _connective(True), strict=False, lazy=True)
_add("not", lambda a: not a, inline="(not {0})")
_add("is_true", lambda a: a is True, strict=False, inline="({0} is True)")
_add("is_not_true", lambda a: a is not True, strict=False, inline="({0} is not True)")
_add("is_false", lambda a: a is False, strict=False, inline="({0} is False)")
_add("is_not_false", lambda a: a is not False, strict=False, inline="({0} is not False)")

_add("cast_bool_to_text", bool_out, inline="('true' if {0} else 'false')")
_add("cast_text_to_bool", parse_bool)
_add("cast_bool_to_int4", int, inline="int({0})")
_add("cast_int4_to_bool", lambda i: i != 0, inline="({0} != 0)")
_add("cast_int8_to_bool", lambda i: i != 0, inline="({0} != 0)")
