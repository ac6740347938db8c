"""The implementation of every scalar function id (``FUNCTIONS``) and the aggregate finishers.

Owns: ``FUNCTIONS: dict[func_id, FuncImpl]``, the Python implementation of each func id
that ``sql.functions`` resolves to (arithmetic with PostgreSQL's overflow and
division-by-zero errors, comparisons, three-valued logic, casts, math functions; the text
functions and text I/O live in ``expr.functions.text`` and numeric (Decimal) arithmetic
in ``expr.functions.numeric``, split only to keep modules short), and ``sum_finish`` /
``avg_finish`` / ``variance_finish`` used by the reduce operator.
Invariants: an implementation raises only ``EvalError`` for bad data (never a bare Python
exception); a ``strict`` implementation is never called with a NULL argument (the
compiler checks); an ``inline`` template is a Python expression equivalent to calling
``fn`` on non-NULL arguments.  Numeric values are ``Decimal`` computed in
``NUMERIC_CONTEXT`` or a context sized for the result, never the thread's default
28-digit context, and results carry PostgreSQL's display scale.
Deliberately not here: NULL propagation and laziness (``expr.compile``: ``and``,
``or``, ``coalesce`` are compiled specially), and SQL signatures (``sql.functions``).
Comparisons on float8/numeric (``eq_float8``, ``lt_numeric``, ...) are NaN-aware as in
PostgreSQL: NaN equals NaN and sorts after every other value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import decimal
from decimal import Decimal
import math
from typing import Any, Callable

from expr.functions import text as _text
from expr.functions.numeric import (NUMERIC_CONTEXT, NUMERIC_ENTRIES, dscale, numeric_div, round_numeric,
                                    select_div_scale, sqrt_at)
from expr.functions.text import (INT_RANGES, bool_out, float8_out, numeric_out, parse_bool, parse_float8,
                                 parse_int, parse_numeric, to_text)
from repr.errors import EvalError

__all__ = ["FuncImpl", "FUNCTIONS", "NUMERIC_CONTEXT", "sum_finish", "avg_finish", "variance_finish",
           "numeric_div", "to_text", "float8_out", "numeric_out"]


@dataclass(frozen=True)
class FuncImpl:
    """How to evaluate one func id."""
    fn: Callable[..., Any]
    #: NULL in any argument gives NULL without calling ``fn``
    strict: bool = True
    #: Python expression over argument variables ``{0}, {1}, ...`` and a scratch variable
    #: ``{r}``, equivalent to ``fn`` on non-NULL arguments; may use names from ``env``
    inline: str | None = None
    env: dict = field(default_factory=dict)
    #: compiled by ``expr.compile`` with control flow (and, or, coalesce)
    lazy: bool = False


class _Registry(dict):
    """``FUNCTIONS``: a dict whose missing func ids may be synthesized on first lookup by
    the functions in ``RESOLVERS`` (``func_id -> FuncImpl | None``; array casts such as
    ``cast_text_to_int4[]``, one per element type, are made this way by
    ``expr.functions.document``).  A synthesized entry is stored."""

    def __missing__(self, k):
        for r in RESOLVERS:
            impl = r(k)
            if impl is not None:
                self[k] = impl
                return impl
        raise KeyError(k)

    def get(self, k, default=None):
        try:
            return self[k]
        except KeyError:
            return default

    def __contains__(self, k):
        return self.get(k) is not None


#: see ``_Registry``
RESOLVERS: list = []
FUNCTIONS: dict[str, FuncImpl] = _Registry()


def _reg(name, fn, strict=True, inline=None, env=None, lazy=False):
    FUNCTIONS[name] = FuncImpl(fn, strict, inline, env or {}, lazy)


_C = NUMERIC_CONTEXT
_INF = math.inf
_D0 = Decimal(0)
_D1 = Decimal(1)


def _range_error(t: str) -> EvalError:
    return EvalError("22003", f"{INT_RANGES[t][2]} out of range")


def _div0() -> EvalError:
    return EvalError("22012", "division by zero")


# -------------------------------------------------------------------- integer arithmetic

def _make_int_ops(t: str):
    lo, hi, _ = INT_RANGES[t]

    def ovf(*_a):
        raise _range_error(t)

    def chk(v):
        if lo <= v <= hi:
            return v
        raise _range_error(t)

    def div(a, b):
        if b == 0:
            raise _div0()
        q = abs(a) // abs(b)
        q = q if (a < 0) == (b < 0) else -q
        if q > hi:
            raise _range_error(t)
        return q

    def mod(a, b):
        if b == 0:
            raise _div0()
        r = abs(a) % abs(b)
        return -r if a < 0 else r

    env = {f"_ovf_{t}": ovf}
    rng = f"{lo} <= ({{r}} := {{0}} {{op}} {{1}}) <= {hi}"
    for name, op in (("add", "+"), ("sub", "-"), ("mul", "*")):
        pyop = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b}[name]
        _reg(f"{name}_{t}", (lambda f: lambda a, b: chk(f(a, b)))(pyop),
             inline=f"({{r}} if {rng.replace('{op}', op)} else _ovf_{t}())", env=env)
    _reg(f"div_{t}", div)
    _reg(f"mod_{t}", mod)
    _reg(f"neg_{t}", lambda a: chk(-a), inline=f"(-{{0}} if {{0}} != {lo} else _ovf_{t}())", env=env)
    _reg(f"abs_{t}", lambda a: chk(abs(a)), inline=f"(abs({{0}}) if {{0}} != {lo} else _ovf_{t}())", env=env)
    _reg(f"sign_{t}", lambda a: (a > 0) - (a < 0))
    bits = 64 if t == "int8" else 16 if t == "int2" else 32
    mask, half = (1 << bits) - 1, 1 << (bits - 1)
    shift_mask = 63 if t == "int8" else 31  # C shifts of int/int64 on x86 use the count mod width

    def wrap(v):
        v &= mask
        return v - (1 << bits) if v >= half else v

    _reg(f"bitand_{t}", lambda a, b: a & b, inline="({0} & {1})")
    _reg(f"bitor_{t}", lambda a, b: a | b, inline="({0} | {1})")
    _reg(f"bitxor_{t}", lambda a, b: a ^ b, inline="({0} ^ {1})")
    _reg(f"bitnot_{t}", lambda a: ~a, inline="(~{0})")
    _reg(f"shl_{t}", lambda a, b: wrap(a << (b & shift_mask)))
    _reg(f"shr_{t}", lambda a, b: a >> (b & shift_mask))
    return chk


_chk_int = {t: _make_int_ops(t) for t in ("int2", "int4", "int8")}


# ---------------------------------------------------------------------- float8 arithmetic

def _f_overflow() -> EvalError:
    return EvalError("22003", "value out of range: overflow")


def _f_check(r, a, b, zero_ok=True):
    """PostgreSQL's float8 overflow/underflow checks."""
    if r in (_INF, -_INF) and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise _f_overflow()
    if not zero_ok and r == 0.0 and a != 0.0:
        raise EvalError("22003", "value out of range: underflow")
    return r


def _f_ovf(a, b, r):
    return _f_check(r, a, b)


def _fmul_chk(a, b, r):
    _f_check(r, a, b)
    if r == 0.0 and a != 0.0 and b != 0.0:
        raise EvalError("22003", "value out of range: underflow")
    return r


def _fdiv(a, b):
    if b == 0.0 and a == a:
        raise _div0()
    r = a / b if b != 0.0 else a
    _f_check(r, a, b)
    if r == 0.0 and a != 0.0 and b not in (_INF, -_INF):
        raise EvalError("22003", "value out of range: underflow")
    return r


_fenv = {"_INF": _INF, "_f_ovf": _f_ovf, "_fmul_chk": _fmul_chk}
_reg("add_float8", lambda a, b: _f_ovf(a, b, a + b),
     inline="({r} if -_INF < ({r} := {0} + {1}) < _INF else _f_ovf({0}, {1}, {r}))", env=_fenv)
_reg("sub_float8", lambda a, b: _f_ovf(a, b, a - b),
     inline="({r} if -_INF < ({r} := {0} - {1}) < _INF else _f_ovf({0}, {1}, {r}))", env=_fenv)
_reg("mul_float8", lambda a, b: _fmul_chk(a, b, a * b),
     inline="({r} if (-_INF < ({r} := {0} * {1}) < _INF and ({r} != 0.0 or {0} == 0.0 or {1} == 0.0))"
            " else _fmul_chk({0}, {1}, {r}))", env=_fenv)
_reg("div_float8", _fdiv)
_reg("neg_float8", lambda a: -a, inline="(-{0})")
_reg("abs_float8", abs, inline="abs({0})")
_reg("sign_float8", lambda a: float((a > 0) - (a < 0)))


def _f_unary(fn):
    def g(a):
        if a != a or a in (_INF, -_INF):
            return a
        r = float(fn(a))
        return math.copysign(0.0, a) if r == 0.0 else r
    return g


_reg("ceil_float8", _f_unary(math.ceil))
_reg("floor_float8", _f_unary(math.floor))
_reg("trunc_float8", _f_unary(math.trunc))
_reg("round_float8", lambda a: a if a != a or a in (_INF, -_INF) else round(a, 0))


def _sqrt_f(a):
    if a < 0:
        raise EvalError("2201F", "cannot take square root of a negative number")
    return math.sqrt(a)


def _pow_f(a, b):
    if a == 0.0 and b < 0:
        raise EvalError("2201F", "zero raised to a negative power is undefined")
    if a < 0 and b == b and b not in (_INF, -_INF) and b != math.floor(b):
        raise EvalError("2201F", "a negative number raised to a non-integer power yields a complex result")
    try:
        r = math.pow(a, b)
    except OverflowError:
        raise _f_overflow() from None
    except ValueError:  # pragma: no cover - guarded above
        return math.nan
    if r in (_INF, -_INF) and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise _f_overflow()
    if r == 0.0 and a != 0.0 and a == a and b == b and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise EvalError("22003", "value out of range: underflow")
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
        raise _f_overflow() from None
    if r == 0.0 and a != -_INF:
        raise EvalError("22003", "value out of range: underflow")
    return r


_reg("sqrt_float8", _sqrt_f)
def _cbrt_f(a):
    r = math.cbrt(a)
    if r and r == r and r not in (_INF, -_INF):
        r2 = r - (r * r * r - a) / (3 * r * r)  # one Newton step: C's cbrt is correctly rounded
        if abs(r2 * r2 * r2 - a) < abs(r * r * r - a):
            r = r2
    return r


_reg("cbrt_float8", _cbrt_f)
_reg("power_float8", _pow_f)
_reg("ln_float8", _ln_f)
_reg("log10_float8", _log10_f)
_reg("exp_float8", _exp_f)
_reg("pi", lambda: math.pi)


# --------------------------------------------------------------------- numeric arithmetic

for _name, _fn in NUMERIC_ENTRIES:
    _reg(_name, _fn)


# ----------------------------------------------------------------------------- comparisons

def _nan_lt(a, b):
    # NaN sorts after everything and equals itself (PostgreSQL)
    return a == a and b != b


def _nan_le(a, b):
    return b != b or (a == a and a <= b)


_cenv = {"_nan_lt": _nan_lt, "_nan_le": _nan_le}


def _distinct(a, b):
    """IS DISTINCT FROM: NULL equals NULL, NaN equals NaN."""
    if a is None or b is None:
        return (a is None) != (b is None)
    return a != b and (a == a or b == b)
_reg("eq", lambda a, b: a == b, inline="({0} == {1})")
_reg("neq", lambda a, b: a != b, inline="({0} != {1})")
_reg("lt", lambda a, b: a < b, inline="({0} < {1})")
_reg("lte", lambda a, b: a <= b, inline="({0} <= {1})")
_reg("gt", lambda a, b: a > b, inline="({0} > {1})")
_reg("gte", lambda a, b: a >= b, inline="({0} >= {1})")
for _t in ("float8", "numeric"):
    _reg(f"eq_{_t}", lambda a, b: a == b or (a != a and b != b), inline="({0} == {1} or ({0} != {0} and {1} != {1}))")
    _reg(f"neq_{_t}", lambda a, b: a != b and (a == a or b == b), inline="({0} != {1} and ({0} == {0} or {1} == {1}))")
    _reg(f"lt_{_t}", lambda a, b: a < b if a == a and b == b else _nan_lt(a, b),
         inline="(({0} < {1}) if ({0} == {0} and {1} == {1}) else _nan_lt({0}, {1}))", env=_cenv)
    _reg(f"lte_{_t}", lambda a, b: a <= b if a == a and b == b else _nan_le(a, b),
         inline="(({0} <= {1}) if ({0} == {0} and {1} == {1}) else _nan_le({0}, {1}))", env=_cenv)
    _reg(f"gt_{_t}", lambda a, b: a > b if a == a and b == b else _nan_lt(b, a),
         inline="(({0} > {1}) if ({0} == {0} and {1} == {1}) else _nan_lt({1}, {0}))", env=_cenv)
    _reg(f"gte_{_t}", lambda a, b: a >= b if a == a and b == b else _nan_le(b, a),
         inline="(({0} >= {1}) if ({0} == {0} and {1} == {1}) else _nan_le({1}, {0}))", env=_cenv)


# ----------------------------------------------------------------- logic and NULL tests

def _and(*args):
    res = True
    for a in args:
        if a is False:
            return False
        if a is None:
            res = None
    return res


def _or(*args):
    res = False
    for a in args:
        if a is True:
            return True
        if a is None:
            res = None
    return res


def _coalesce(*args):
    for a in args:
        if a is not None:
            return a
    return None


def _sort_key(v):
    # NaN (float8 or numeric) sorts after every other value, as in PostgreSQL
    return (1, 0) if v != v else (0, v)


def _greatest(*args):
    vals = [a for a in args if a is not None]
    return max(vals, key=_sort_key) if vals else None


def _least(*args):
    vals = [a for a in args if a is not None]
    return min(vals, key=_sort_key) if vals else None


_reg("and", _and, strict=False, lazy=True)
_reg("or", _or, strict=False, lazy=True)
_reg("coalesce", _coalesce, strict=False, lazy=True)
_reg("not", lambda a: not a, inline="(not {0})")
_reg("is_null", lambda a: a is None, strict=False, inline="({0} is None)")
_reg("is_not_null", lambda a: a is not None, strict=False, inline="({0} is not None)")
_reg("is_true", lambda a: a is True, strict=False, inline="({0} is True)")
_reg("is_not_true", lambda a: a is not True, strict=False, inline="({0} is not True)")
_reg("is_false", lambda a: a is False, strict=False, inline="({0} is False)")
_reg("is_not_false", lambda a: a is not False, strict=False, inline="({0} is not False)")
_reg("is_distinct_from", _distinct, strict=False)
_reg("is_not_distinct_from", lambda a, b: not _distinct(a, b), strict=False)
_reg("nullif", lambda a, b: None if (a is not None and b is not None and not _distinct(a, b)) else a, strict=False)
_reg("greatest", _greatest, strict=False)
_reg("least", _least, strict=False)
_reg("record", lambda *args: tuple(args), strict=False)
_reg("identity", lambda a: a, inline="{0}")


# ----------------------------------------------------------------------------------- casts

def _float_to_int(t):
    lo, hi, _ = INT_RANGES[t]

    def f(x):
        if x != x or x in (_INF, -_INF):
            raise _range_error(t)
        v = int(round(x))  # round half to even, as rint()
        if not lo <= v <= hi:
            raise _range_error(t)
        return v
    return f


def _numeric_to_int(t):
    lo, hi, _ = INT_RANGES[t]

    def f(d):
        if d.is_nan():
            raise EvalError("0A000", f"cannot convert NaN to {INT_RANGES[t][2]}")
        if d.is_infinite():
            raise EvalError("0A000", f"cannot convert infinity to {INT_RANGES[t][2]}")
        v = int(d.quantize(_D1, rounding=decimal.ROUND_HALF_UP, context=_C))
        if not lo <= v <= hi:
            raise _range_error(t)
        return v
    return f


def _float_to_numeric(x):
    if x != x:
        return Decimal("NaN")
    if x in (_INF, -_INF):
        return Decimal("Infinity") if x > 0 else Decimal("-Infinity")
    d = Decimal("%.15g" % x)
    if d.as_tuple().exponent > 0:
        d = d.quantize(_D1, context=_C)
    return d


def _numeric_to_float(d):
    f = float(d)
    if f in (_INF, -_INF) and d.is_finite():
        raise _f_overflow()
    return f


def _int_to_bool(i):
    return i != 0


_INTS = ("int2", "int4", "int8")
for _a in _INTS:
    for _b in _INTS:
        if _a == _b:
            continue
        if _INTS.index(_a) < _INTS.index(_b):
            _reg(f"cast_{_a}_to_{_b}", lambda v: v, inline="{0}")
        else:
            _lo, _hi, _ = INT_RANGES[_b]
            _reg(f"cast_{_a}_to_{_b}", _chk_int[_b],
                 inline=f"({{0}} if {_lo} <= {{0}} <= {_hi} else _ovf_{_b}())",
                 env={f"_ovf_{_b}": FUNCTIONS[f"add_{_b}"].env[f"_ovf_{_b}"]})
    _reg(f"cast_{_a}_to_numeric", Decimal)
    _reg(f"cast_{_a}_to_float8", float, inline="float({0})")
    _reg(f"cast_{_a}_to_text", str, inline="str({0})")
    _reg(f"cast_float8_to_{_a}", _float_to_int(_a))
    _reg(f"cast_numeric_to_{_a}", _numeric_to_int(_a))
    _reg(f"cast_text_to_{_a}", (lambda t: lambda s: parse_int(s, t))(_a))
    _reg(f"cast_{_a}_to_mz_timestamp", lambda v: v if v >= 0 else _mz_ts_range())
_reg("cast_numeric_to_float8", _numeric_to_float)
_reg("cast_float8_to_numeric", _float_to_numeric)
_reg("cast_numeric_to_text", numeric_out)
_reg("cast_float8_to_text", float8_out)
_reg("cast_bool_to_text", bool_out, inline="('true' if {0} else 'false')")
_reg("cast_text_to_numeric", parse_numeric)
_reg("cast_text_to_float8", parse_float8)
_reg("cast_text_to_bool", parse_bool)
_reg("cast_text_to_text", lambda s: s, inline="{0}")
_reg("cast_unknown_to_text", lambda s: s, inline="{0}")
_reg("cast_bool_to_int4", int, inline="int({0})")
_reg("cast_int4_to_bool", _int_to_bool, inline="({0} != 0)")


def _mz_ts_range():
    raise EvalError("22003", "mz_timestamp out of range")


def _numeric_to_mz_ts(d):
    if not d.is_finite() or d < 0 or d != d.to_integral_value() or d > 18446744073709551615:
        raise EvalError("22003", "mz_timestamp out of range")
    return int(d)


def _text_to_mz_ts(s):
    try:
        v = int(s.strip())
    except ValueError:
        raise EvalError("22P02", f'invalid input syntax for type mz_timestamp: "{s}"') from None
    if not 0 <= v <= 18446744073709551615:
        raise EvalError("22003", "mz_timestamp out of range")
    return v


_reg("cast_numeric_to_mz_timestamp", _numeric_to_mz_ts)
_reg("cast_text_to_mz_timestamp", _text_to_mz_ts)
_reg("cast_mz_timestamp_to_text", str, inline="str({0})")
_reg("cast_mz_timestamp_to_numeric", Decimal)


# -------------------------------------------------------------------- text functions

for _name, _fn, _strict, _inline in _text.TEXT_ENTRIES:
    _reg(_name, _fn, _strict, _inline)


# ------------------------------------------------------------------- aggregate finishers

def sum_finish(total, output_type: str):
    """The SQL value of ``sum`` from an accumulated total (None when there were no rows)."""
    if total is None:
        return None
    if output_type in _chk_int:
        return _chk_int[output_type](total)
    if output_type == "numeric":
        return total if isinstance(total, Decimal) else Decimal(total)
    if output_type == "float8":
        return float(total)
    if output_type == "float4":  # a real sum, rounded once to real
        from expr.functions.exact import _to_float4
        return _to_float4(float(total))
    return total


def avg_finish(total, count: int, output_type: str):
    """``avg`` from the sum and the count of non-NULL inputs, with PostgreSQL's scale."""
    if not count or total is None:
        return None
    if output_type == "interval":  # PostgreSQL's interval_div of the sum
        from repr.dates import interval_div
        return interval_div(total, float(count))
    if output_type == "float8":
        return float(total) / count
    t = total if isinstance(total, Decimal) else Decimal(total)
    return numeric_div(t, Decimal(count))


def variance_finish(count: int, total, total_sq, func: str, output_type: str):
    """``var_samp``/``var_pop``/``stddev_samp``/``stddev_pop`` from the count, the sum
    and the sum of squares of the non-NULL inputs, as PostgreSQL computes them."""
    sample = func in ("var_samp", "stddev_samp", "variance", "stddev")
    if count == 0 or (sample and count == 1):
        return None
    stddev = func.startswith("stddev")
    if output_type == "float8":
        n = float(count)
        sx, sxx = float(total), float(total_sq)
        num = n * sxx - sx * sx  # PostgreSQL <= 11's float8 formula (it keeps no running mean)
        if num <= 0.0:
            return 0.0
        var = num / (n * (n - 1.0 if sample else n))
        return math.sqrt(var) if stddev else var
    sx = total if isinstance(total, Decimal) else Decimal(total)
    sxx = total_sq if isinstance(total_sq, Decimal) else Decimal(total_sq)
    n = Decimal(count)
    num = _C.subtract(_C.multiply(n, sxx), _C.multiply(sx, sx))
    if num <= 0:
        return Decimal(0)
    den = n * (n - 1 if sample else n)
    var = numeric_div(num, den)
    if stddev:
        var = sqrt_at(var, select_div_scale(num, den))
    return var


# ---------------------------------------------------------------- errors raised by plans
def _raise_cardinality():
    raise EvalError("21000", "more than one row returned by a subquery used as an expression")


# The binder guards a scalar subquery with ``If(count > 1, raise_cardinality(), value)``.
_reg("raise_cardinality", _raise_cardinality, strict=False)


# ---- date/time family: expr.functions.datetime registers its func ids here
from expr.functions.datetime import ENTRIES as _DT_ENTRIES  # noqa: E402
import expr.functions.document  # noqa: E402,F401  (bytea, uuid, jsonb, arrays)
import expr.functions.lists  # noqa: E402,F401  (Materialize's lists)

for _name, _fn, _strict in _DT_ENTRIES:
    _reg(_name, _fn, _strict)
import expr.functions.exact  # noqa: E402,F401  (char(n)/bpchar, type modifiers)
