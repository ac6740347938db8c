"""The functions over ``smallint``, ``integer`` and ``bigint``.

Owns the func ids ``sql.functions.integer`` names: arithmetic with PostgreSQL's overflow
(22003 ``integer out of range``) and division-by-zero (22012) errors (division truncates
toward zero, the remainder takes the dividend's sign), ``abs``, unary minus, the bit
operators (shifts use the count modulo the width, as C on x86 does), and the casts between
the integer types and to and from ``text`` (``sql.types.integer``), and ``oid``'s casts (from
the integers, wrapping a negative 32-bit value; to ``integer`` reinterpreting the 32 bits).
Invariant: a result is always inside its type's range; the inline templates of ``+ - *``,
unary minus, ``abs`` and the narrowing casts check the range without a call, and name the
overflow raiser ``_ovf_<type>``, one object per type.
Deliberately not here: conversions to and from ``numeric`` (``expr.functions.numeric``) and
the floats (``expr.functions.floats``), and comparisons (``expr.functions.generic``).
"""
from __future__ import annotations

import functools

from expr.functions.common import add, check_int, division_by_zero, int_out_of_range
from repr.strconv import INT_RANGES, oid_of, parse_int, parse_int_many, parse_oid

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)

INTEGER_TYPES = ("int2", "int4", "int8")
_OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*"}


def _int_ops(t: str) -> dict:
    """The arithmetic and bit operators of integer type ``t``; returns their inline env."""
    lo, hi, _ = INT_RANGES[t]
    chk = check_int(t)

    def ovf(*_a):
        raise int_out_of_range(t)

    def div(a, b):
        if b == 0:
            raise division_by_zero()
        q = abs(a) // abs(b)
        q = q if (a < 0) == (b < 0) else -q
        if q > hi:
            raise int_out_of_range(t)
        return q

    def mod(a, b):
        if b == 0:
            raise division_by_zero()
        r = abs(a) % abs(b)
        return -r if a < 0 else r

    env = {f"_ovf_{t}": ovf}
    for name, op in _SYMBOLS.items():
        _add(f"{name}_{t}", (lambda f: lambda a, b: chk(f(a, b)))(_OPS[name]),
             inline=f"({{r}} if {lo} <= ({{r}} := {{0}} {op} {{1}}) <= {hi} else _ovf_{t}())", env=env)
    _add(f"div_{t}", div)
    _add(f"mod_{t}", mod)
    _add(f"neg_{t}", lambda a: chk(-a), inline=f"(-{{0}} if {{0}} != {lo} else _ovf_{t}())", env=env)
    _add(f"abs_{t}", lambda a: chk(abs(a)), inline=f"(abs({{0}}) if {{0}} != {lo} else _ovf_{t}())", env=env)
    bits = 64 if t == "int8" else 16 if t == "int2" else 32
    mask, half = (1 << bits) - 1, 1 << (bits - 1)
    shift_mask = 63 if t == "int8" else 31  # C shifts of int/int64 on x86 use the count mod width

    def wrap(v):
        v &= mask
        return v - (1 << bits) if v >= half else v

    _add(f"bitand_{t}", lambda a, b: a & b, inline="({0} & {1})")
    _add(f"bitor_{t}", lambda a, b: a | b, inline="({0} | {1})")
    _add(f"bitxor_{t}", lambda a, b: a ^ b, inline="({0} ^ {1})")
    _add(f"bitnot_{t}", lambda a: ~a, inline="(~{0})")
    _add(f"shl_{t}", lambda a, b: wrap(a << (b & shift_mask)))
    _add(f"shr_{t}", lambda a, b: a >> (b & shift_mask))
    return env


_ENVS = {t: _int_ops(t) for t in INTEGER_TYPES}

# ------------------------------------------------------------------------------- casts
for _a in INTEGER_TYPES:
    for _b in INTEGER_TYPES:
        if INTEGER_TYPES.index(_a) < INTEGER_TYPES.index(_b):
            _add(f"cast_{_a}_to_{_b}", lambda v: v, inline="{0}")
        elif _a != _b:
            _lo, _hi, _ = INT_RANGES[_b]
            _add(f"cast_{_a}_to_{_b}", check_int(_b), inline=f"({{0}} if {_lo} <= {{0}} <= {_hi} else _ovf_{_b}())",
                 env=_ENVS[_b])
    _add(f"cast_{_a}_to_text", str, inline="str({0})")
    _add(f"cast_text_to_{_a}", (lambda t: lambda s: parse_int(s, t))(_a),
         many=(lambda t: lambda values: parse_int_many(values, t))(_a))
    _add(f"cast_{_a}_to_oid", oid_of)
_add("cast_oid_to_int4", lambda v: v - 4294967296 if v >= 2147483648 else v)
_add("cast_oid_to_int8", lambda v: v, inline="{0}")
_add("cast_oid_to_text", str, inline="str({0})")
_add("cast_text_to_oid", parse_oid)
