"""The functions over ``double precision`` (``float8``) and ``real`` (``float4``).

Owns the func ids ``sql.functions.floats`` names: arithmetic with PostgreSQL's float checks
(22003 overflow when a finite operation gives an infinity, underflow when it gives zero from
non-zero operands, 22012 division by zero), the math functions (``sqrt``, ``cbrt``,
``power``, ``ln``, ``log10``, ``exp``, rounding, ``pi``), the NaN-aware comparisons, the
cross-type ``real``/``double precision`` operators (PostgreSQL's float48*/float84*), and the
casts among the floats, the integers and ``text`` (``sql.types.floats``).
A real value is the double of its shortest float32 decimal form (``repr.strconv``);
arithmetic on two reals computes in double and rounds once to float32, which equals float32
arithmetic for ``+ - * /`` (a double holds the exact result of each to more than twice
float32's precision); a real meeting a double converts exactly (``float4_exact``).
Invariant: raises only ``EvalError``; a real result is canonical (``float4_canon``).
Deliberately not here: conversions to and from ``numeric`` (``expr.functions.numeric``)
and text I/O (``repr.strconv``).
"""
from __future__ import annotations

import functools
import math

from expr.functions.common import (add, division_by_zero, float_overflow, float_underflow, int_out_of_range,
                                   nan_aware_comparisons)
from repr.errors import EvalError
from repr.strconv import (INT_RANGES, float4_canon, float4_exact, float4_out, float8_out, parse_float4,
                          parse_float8)

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)

_INF = math.inf
_INTEGER_TYPES = ("int2", "int4", "int8")

# ---------------------------------------------------------------------- float8 arithmetic


def _f_check(r, a, b):
    """PostgreSQL's float8 overflow check."""
    if r in (_INF, -_INF) and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise float_overflow()
    return r


def _f_ovf(a, b, r):
    return _f_check(r, a, b)


def _fmul_chk(a, b, r):
    _f_check(r, a, b)
    if r == 0.0 and a != 0.0 and b != 0.0:
        raise float_underflow()
    return r


def _fdiv(a, b):
    if b == 0.0 and a == a:
        raise division_by_zero()
    r = a / b if b != 0.0 else a
    _f_check(r, a, b)
    if r == 0.0 and a != 0.0 and b not in (_INF, -_INF):
        raise float_underflow()
    return r


_fenv = {"_INF": _INF, "_f_ovf": _f_ovf, "_fmul_chk": _fmul_chk}
_add("add_float8", lambda a, b: _f_ovf(a, b, a + b),
     inline="({r} if -_INF < ({r} := {0} + {1}) < _INF else _f_ovf({0}, {1}, {r}))", env=_fenv)
_add("sub_float8", lambda a, b: _f_ovf(a, b, a - b),
     inline="({r} if -_INF < ({r} := {0} - {1}) < _INF else _f_ovf({0}, {1}, {r}))", env=_fenv)
_add("mul_float8", lambda a, b: _fmul_chk(a, b, a * b),
     inline="({r} if (-_INF < ({r} := {0} * {1}) < _INF and ({r} != 0.0 or {0} == 0.0 or {1} == 0.0))"
            " else _fmul_chk({0}, {1}, {r}))", env=_fenv)
_add("div_float8", _fdiv)
_add("neg_float8", lambda a: -a, inline="(-{0})")
_add("abs_float8", abs, inline="abs({0})")
_add("sign_float8", lambda a: float((a > 0) - (a < 0)))


def _f_unary(fn):
    def g(a):
        if a != a or a in (_INF, -_INF):
            return a
        r = float(fn(a))
        return math.copysign(0.0, a) if r == 0.0 else r
    return g


_add("ceil_float8", _f_unary(math.ceil))
_add("floor_float8", _f_unary(math.floor))
_add("trunc_float8", _f_unary(math.trunc))
_add("round_float8", lambda a: a if a != a or a in (_INF, -_INF) else round(a, 0))


def _sqrt_f(a):
    if a < 0:
        raise EvalError("2201F", "cannot take square root of a negative number")
    return math.sqrt(a)


def _cbrt_f(a):
    r = math.cbrt(a)
    if r and r == r and r not in (_INF, -_INF):
        r2 = r - (r * r * r - a) / (3 * r * r)  # one Newton step: C's cbrt is correctly rounded
        if abs(r2 * r2 * r2 - a) < abs(r * r * r - a):
            r = r2
    return r


def _pow_f(a, b):
    if a == 0.0 and b < 0:
        raise EvalError("2201F", "zero raised to a negative power is undefined")
    if a < 0 and b == b and b not in (_INF, -_INF) and b != math.floor(b):
        raise EvalError("2201F", "a negative number raised to a non-integer power yields a complex result")
    try:
        r = math.pow(a, b)
    except OverflowError:
        raise float_overflow() from None
    except ValueError:  # pragma: no cover - guarded above
        return math.nan
    if r in (_INF, -_INF) and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise float_overflow()
    if r == 0.0 and a != 0.0 and a == a and b == b and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise float_underflow()
    return r


def _ln_f(a):
    if a == 0.0:
        raise EvalError("2201E", "cannot take logarithm of zero")
    if a < 0:
        raise EvalError("2201E", "cannot take logarithm of a negative number")
    return math.log(a)


def _log10_f(a):
    return _ln_f(a) and math.log10(a)


def _exp_f(a):
    try:
        r = math.exp(a)
    except OverflowError:
        raise float_overflow() from None
    if r == 0.0 and a != -_INF:
        raise float_underflow()
    return r


_add("sqrt_float8", _sqrt_f)
_add("cbrt_float8", _cbrt_f)
_add("power_float8", _pow_f)
_add("ln_float8", _ln_f)
_add("log10_float8", _log10_f)
_add("exp_float8", _exp_f)
_add("pi", lambda: math.pi)
FUNCTIONS.update(nan_aware_comparisons("float8"))

# ------------------------------------------------------------------------ real (float4)


def _rounded(r: float, a: float, b: float, zero_ok: bool) -> float:
    """The real result of an operation on ``a`` and ``b`` computed exactly as ``r``."""
    try:
        e = float4_exact(r) if r == r and r not in (_INF, -_INF) else r
    except OverflowError:
        e = _INF
    if e in (_INF, -_INF) and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise float_overflow()
    if e == 0.0 and r != 0.0 and not zero_ok:
        raise float_underflow()
    return float4_canon(e)


def _f4_div(a, b):
    if b == 0.0:
        raise division_by_zero()
    x, y = float4_exact(a), float4_exact(b)
    return _rounded(x / y, x, y, x == 0.0)


_add("add_float4", lambda a, b: _rounded(float4_exact(a) + float4_exact(b), a, b, True))
_add("sub_float4", lambda a, b: _rounded(float4_exact(a) - float4_exact(b), a, b, True))
_add("mul_float4", lambda a, b: _rounded(float4_exact(a) * float4_exact(b), a, b, a == 0.0 or b == 0.0))
_add("div_float4", _f4_div)
_add("neg_float4", lambda a: -a, inline="(-{0})")
_add("abs_float4", abs, inline="abs({0})")
for _n in ("eq", "neq", "lt", "lte", "gt", "gte"):
    # canonical reals order as their float32 values: the (NaN-aware) double comparisons apply
    _add(f"{_n}_float4", FUNCTIONS[f"{_n}_float8"].fn)
for _n in ("add", "sub", "mul", "div", "eq", "neq", "lt", "lte", "gt", "gte"):
    _f8 = FUNCTIONS[f"{_n}_float8"].fn
    _add(f"{_n}_float48", (lambda f: lambda a, b: f(float4_exact(a), b))(_f8))
    _add(f"{_n}_float84", (lambda f: lambda a, b: f(a, float4_exact(b)))(_f8))


def float8_to_float4(x: float) -> float:
    """float8 -> real (PostgreSQL's float8_to_float4 errors)."""
    try:
        r = float4_canon(x)
    except OverflowError:
        raise float_overflow() from None
    if r == 0.0 and x != 0.0:
        raise float_underflow()
    return r


# ------------------------------------------------------------------------------- casts


def _float_to_int(t: str, exact):
    lo, hi, _ = INT_RANGES[t]

    def f(x):
        if x != x or x in (_INF, -_INF):
            raise int_out_of_range(t)
        v = int(round(exact(x)))  # round half to even, as rint()
        if not lo <= v <= hi:
            raise int_out_of_range(t)
        return v
    return f


for _t in _INTEGER_TYPES:
    _add(f"cast_{_t}_to_float8", float, inline="float({0})")
    _add(f"cast_float8_to_{_t}", _float_to_int(_t, float))
    _add(f"cast_{_t}_to_float4", lambda v: float4_canon(float(v)))
    _add(f"cast_float4_to_{_t}", _float_to_int(_t, float4_exact))
_add("cast_float8_to_float4", float8_to_float4)
_add("cast_float4_to_float8", float4_exact)
_add("cast_float8_to_text", float8_out)
_add("cast_text_to_float8", parse_float8)
_add("cast_float4_to_text", float4_out)
_add("cast_text_to_float4", parse_float4)
