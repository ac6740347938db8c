"""The functions over ``numeric`` (``Decimal``): arithmetic, math, comparisons and casts.

Owns the func ids ``sql.functions.numeric`` names, with PostgreSQL's result scales:
``numeric_div`` (select_div_scale), ``round_numeric``/``trunc_numeric``, the scales of
sqrt/ln/log10/exp/power, NaN propagation (``_n_guard``), the NaN-aware comparisons, the
casts between ``numeric`` and the integers, the floats and ``text``, and the ``numeric(p,s)``
modifier check the binder inserts (``typmod_numeric``, ``repr.numeric``'s).
Invariant: exact operations (add, sub, mul, remainder, quantize) run in ``NUMERIC_CONTEXT``
(enough digits for any PostgreSQL numeric); inexact ones (division, sqrt, ln, exp, power)
run in a local context sized for the result scale, never in the thread's default context.
Errors are ``EvalError`` (22003 overflow, 22012 division by zero, 2201E/2201F math domain).
Deliberately not here: the value rules and text I/O (``repr.numeric``) and NULL handling
(``expr.compile``).
"""
from __future__ import annotations

import decimal
from decimal import Decimal
import functools
import math

from expr.functions.common import (add, division_by_zero, float_overflow, int_out_of_range,
                                   nan_aware_comparisons)
from repr.errors import EvalError
from repr.numeric import NUMERIC_CONTEXT, dscale, numeric_out, parse_numeric, parse_numeric_many, typmod_numeric
from repr.strconv import INT_RANGES, float4_exact, parse_float4

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)

_C = NUMERIC_CONTEXT
_D1 = Decimal(1)
_INF = math.inf


def _weight_first(d: Decimal) -> tuple[int, int]:
    """(weight, first base-10000 digit) of ``d`` as PostgreSQL's NumericVar stores it."""
    if not d:
        return 0, 0
    a = abs(d)
    w = a.adjusted() // 4
    return w, int(a.scaleb(-4 * w, _C))


def select_div_scale(a: Decimal, b: Decimal) -> int:
    w1, f1 = _weight_first(a)
    w2, f2 = _weight_first(b)
    qweight = w1 - w2
    if f1 <= f2:
        qweight -= 1
    rscale = 16 - qweight * 4
    return min(max(rscale, dscale(a), dscale(b), 0), 1000)


def _n_guard(fn):
    def g(*args):
        for a in args:
            if type(a) is Decimal and a.is_nan():
                return a
        try:
            return fn(*args)
        except decimal.Overflow:
            raise EvalError("22003", "value overflows numeric format") from None
        except decimal.DivisionByZero:
            raise division_by_zero() from None
    return g


def numeric_div(a: Decimal, b: Decimal) -> Decimal:
    """``a / b`` with PostgreSQL's result scale (select_div_scale) and rounding."""
    if not b:
        if b.is_nan():
            return b
        raise division_by_zero()
    if not (a.is_finite() and b.is_finite()):
        return _C.divide(a, b) if not (a.is_infinite() and b.is_infinite()) else Decimal("NaN")
    rscale = select_div_scale(a, b)
    prec = max(a.adjusted() - b.adjusted(), 0) + rscale + 5
    q = decimal.Context(prec=max(prec, 10), rounding=decimal.ROUND_DOWN).divide(a, b)
    return q.quantize(Decimal(1).scaleb(-rscale), rounding=decimal.ROUND_HALF_UP, context=_C)


def _n_mod(a, b):
    if not b and not b.is_nan():
        raise division_by_zero()
    return _C.remainder(a, b)


def _n_div_trunc(a, b):
    if not b:
        raise division_by_zero()
    return _C.divide_int(a, b)


def round_numeric(a: Decimal, s: int = 0) -> Decimal:
    if not a.is_finite():
        return a
    s = max(min(s, 2000), -131072)
    ctx = decimal.Context(prec=max(a.adjusted(), 0) + max(s, 0) + 5, Emax=999999, Emin=-999999)
    q = a.quantize(Decimal(1).scaleb(-s), rounding=decimal.ROUND_HALF_UP, context=ctx)
    if s < 0:
        q = q.quantize(_D1, context=_C)
    return q


def trunc_numeric(a: Decimal, s: int = 0) -> Decimal:
    if not a.is_finite():
        return a
    s = max(min(s, 2000), -131072)
    ctx = decimal.Context(prec=max(a.adjusted(), 0) + max(s, 0) + 5, Emax=999999, Emin=-999999)
    q = a.quantize(Decimal(1).scaleb(-s), rounding=decimal.ROUND_DOWN, context=ctx)
    if s < 0:
        q = q.quantize(_D1, context=_C)
    return q


def _n_to_int_places(a, rounding):
    if not a.is_finite():
        return a
    return a.quantize(_D1, rounding=rounding, context=_C)


def _n_sqrt(a):
    if a < 0:
        raise EvalError("2201F", "cannot take square root of a negative number")
    if not a.is_finite():
        return a
    w, _ = _weight_first(a)
    sweight = (w + 1) * 4 // 2 - 1
    rscale = min(max(16 - sweight, dscale(a), 0), 1000)
    return sqrt_at(a, rscale)


def sqrt_at(a: Decimal, rscale: int) -> Decimal:
    ctx = decimal.Context(prec=max(a.adjusted() // 2, 0) + rscale + 10, Emax=999999, Emin=-999999)
    return ctx.sqrt(a).quantize(Decimal(1).scaleb(-rscale), context=_C)


def _n_power(a, b):
    if not a and b < 0:
        raise EvalError("2201F", "zero raised to a negative power is undefined")
    if a < 0 and b != b.to_integral_value():
        raise EvalError("2201F", "a negative number raised to a non-integer power yields a complex result")
    if not a:
        return Decimal(1) if not b else Decimal(0)
    est = float(b) * math.log10(abs(float(a))) if a.is_finite() and b.is_finite() else 0.0
    if est > 131072:
        raise EvalError("22003", "value overflows numeric format")
    if b == b.to_integral_value() and abs(b) < 2 ** 31:
        rscale = min(max(16, dscale(a)), 1000)  # PostgreSQL <= 15's power_var for integer exponents
    else:
        rscale = min(max(16 - int(math.floor(est)), dscale(a), dscale(b), 0), 1000)
    ctx = decimal.Context(prec=int(max(est, 0)) + rscale + 20, Emax=999999, Emin=-999999,
                          traps=[decimal.Overflow])
    r = ctx.power(a, b)
    return r.quantize(Decimal(1).scaleb(-rscale), rounding=decimal.ROUND_HALF_UP, context=ctx)


def _n_exp(a):
    if not a.is_finite():
        return a if a.is_nan() or a > 0 else Decimal(0)
    val = float(a) * 0.434294481903252
    if val > 131072:
        raise EvalError("22003", "value overflows numeric format")
    rscale = min(max(16 - int(val), dscale(a), 0), 1000)
    ctx = decimal.Context(prec=max(int(val), 0) + rscale + 10, Emax=999999, Emin=-999999)
    return ctx.exp(a).quantize(Decimal(1).scaleb(-rscale), context=ctx)


def _n_log10(a):
    if not a:
        raise EvalError("2201E", "cannot take logarithm of zero")
    if a < 0:
        raise EvalError("2201E", "cannot take logarithm of a negative number")
    if not a.is_finite():
        return a
    ctx = decimal.Context(prec=60)
    ln_x = ctx.ln(a)
    dweight = int(math.floor(math.log10(abs(float(ln_x))))) if ln_x else 0
    rscale = min(max(16 - dweight, dscale(a), 0), 1000)
    return ctx.log10(a).quantize(Decimal(1).scaleb(-rscale), context=_C)


def _n_ln(a):
    if not a:
        raise EvalError("2201E", "cannot take logarithm of zero")
    if a < 0:
        raise EvalError("2201E", "cannot take logarithm of a negative number")
    r = decimal.Context(prec=60).ln(a)
    return r.quantize(Decimal(1).scaleb(-max(16 - int(math.floor(math.log10(max(abs(float(r)), 1e-300)))), dscale(a))),
                      context=_C)


def _n_sign(a):
    if a.is_nan():
        return a
    return Decimal((a > 0) - (a < 0))


for _name, _fn in (
        ("add_numeric", _n_guard(_C.add)),
        ("sub_numeric", _n_guard(_C.subtract)),
        ("mul_numeric", _n_guard(_C.multiply)),
        ("div_numeric", _n_guard(numeric_div)),
        ("mod_numeric", _n_guard(_n_mod)),
        ("neg_numeric", _C.minus),
        ("abs_numeric", _C.abs),
        ("sign_numeric", _n_sign),
        ("round_numeric", _n_guard(round_numeric)),
        ("round_numeric_int4", _n_guard(round_numeric)),
        ("ceil_numeric", lambda a: _n_to_int_places(a, decimal.ROUND_CEILING)),
        ("floor_numeric", lambda a: _n_to_int_places(a, decimal.ROUND_FLOOR)),
        ("trunc_numeric", lambda a: _n_to_int_places(a, decimal.ROUND_DOWN)),
        ("sqrt_numeric", _n_guard(_n_sqrt)),
        ("power_numeric", lambda a, b: _D1 if not b else _n_guard(_n_power)(a, b)),
        ("ln_numeric", _n_guard(_n_ln)),
        ("exp_numeric", _n_guard(_n_exp)),
        ("log10_numeric", _n_guard(_n_log10)),
        ("trunc_numeric_int4", _n_guard(trunc_numeric)),
        ("div_trunc_numeric", _n_guard(_n_div_trunc))):
    _add(_name, _fn)
FUNCTIONS.update(nan_aware_comparisons("numeric"))
_add("typmod_numeric", typmod_numeric)

# ------------------------------------------------------------------------------- casts


def _numeric_to_int(t):
    lo, hi, word = INT_RANGES[t]

    def f(d):
        if d.is_nan():
            raise EvalError("0A000", f"cannot convert NaN to {word}")
        if d.is_infinite():
            raise EvalError("0A000", f"cannot convert infinity to {word}")
        v = int(d.quantize(_D1, rounding=decimal.ROUND_HALF_UP, context=_C))
        if not lo <= v <= hi:
            raise int_out_of_range(t)
        return v
    return f


def _float_to_numeric(x, digits: str):
    """PostgreSQL's float8_numeric / float4_numeric: ``digits`` significant digits."""
    if x != x:
        return Decimal("NaN")
    if x in (_INF, -_INF):
        return Decimal("Infinity") if x > 0 else Decimal("-Infinity")
    d = Decimal(digits % x)
    if d.as_tuple().exponent > 0:
        d = d.quantize(_D1, context=_C)
    return d


def _numeric_to_float8(d):
    f = float(d)
    if f in (_INF, -_INF) and d.is_finite():
        raise float_overflow()
    return f


def _numeric_to_float4(d: Decimal) -> float:
    if d.is_nan():
        return math.nan
    if d.is_infinite():
        return _INF if d > 0 else -_INF
    return parse_float4(format(d, "f"))


for _t in ("int2", "int4", "int8"):
    _add(f"cast_{_t}_to_numeric", Decimal)
    _add(f"cast_numeric_to_{_t}", _numeric_to_int(_t))
_add("cast_numeric_to_float8", _numeric_to_float8)
_add("cast_float8_to_numeric", lambda x: _float_to_numeric(x, "%.15g"))
_add("cast_numeric_to_float4", _numeric_to_float4)
_add("cast_float4_to_numeric", lambda x: _float_to_numeric(float4_exact(x), "%.6g"))
_add("cast_numeric_to_text", numeric_out)
_add("cast_text_to_numeric", parse_numeric, many=parse_numeric_many)
