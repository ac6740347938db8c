"""Evaluation for exact character and numeric types: ``char(n)`` values and type modifiers.

Owns the func ids of ``sql.types_exact``: the ``bpchar`` casts (to text drops trailing
blanks; from text is the identity; other types go through their text forms) and the
modifier checks the binder inserts: ``typmod_bpchar(s, n, explicit)`` (pad to n; truncate),
``typmod_varchar(s, n, explicit)`` (truncate) and ``typmod_numeric(d, p, s)`` (round to s,
overflow past p - s integer digits).  An explicit cast truncates silently; an assignment
raises 22001 when a non-blank character would be lost, as PostgreSQL does.
Invariant: raises only ``EvalError`` (``EvalErrorDetail`` carries PostgreSQL's DETAIL).
Deliberately not here: deciding where modifiers apply (the binder) or signatures (``sql``).
"""
from __future__ import annotations

import decimal
from decimal import Decimal
import math
import re
import struct

from expr.functions import FUNCTIONS, _reg
from expr.functions.text import INT_RANGES, shortest_float_out, to_text
from repr.errors import EvalError

#: types converting to and from bpchar through text (``sql.types_exact.BPCHAR_PEERS``; real's
#: text form is float4_out, registered with the real casts below)
_PEERS = ("bool", "int2", "int4", "int8", "numeric", "float8")


class EvalErrorDetail(EvalError):
    """An ``EvalError`` with PostgreSQL's DETAIL line (the coordinator passes it on)."""

    def __init__(self, sqlstate: str, message: str, detail: str):
        super().__init__(sqlstate, message)
        self.detail = detail


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


_CTX = decimal.Context(prec=2100, Emax=999999, Emin=-999999)


def typmod_numeric(d: Decimal, p: int, s: int) -> Decimal:
    if d.is_nan():
        return d
    if d.is_infinite():
        raise EvalErrorDetail("22003", "numeric field overflow",
                              f"A field with precision {p}, scale {s} cannot hold an infinite value.")
    r = d.quantize(Decimal(1).scaleb(-s), rounding=decimal.ROUND_HALF_UP, context=_CTX)
    maxdigits = p - s
    if r and r.adjusted() + 1 > maxdigits:
        limit = f"10^{maxdigits}" if maxdigits else "1"
        raise EvalErrorDetail("22003", "numeric field overflow",
                              f"A field with precision {p}, scale {s} must round to an absolute value "
                              f"less than {limit}.")
    if s < 0:  # keep the integer form (no exponent) numeric_out expects
        r = r.quantize(Decimal(1), context=_CTX)
    return r


def _rstrip(s: str) -> str:
    return s.rstrip(" ")


_reg("typmod_bpchar", typmod_bpchar)
_reg("typmod_varchar", typmod_varchar)
_reg("typmod_numeric", typmod_numeric)
_reg("cast_bpchar_to_text", _rstrip, inline="{0}.rstrip(' ')")
_reg("cast_text_to_bpchar", lambda s: s, inline="{0}")


def _from_text(t: str):
    def f(s):
        return FUNCTIONS[f"cast_text_to_{t}"].fn(s.rstrip(" "))
    return f


for _t in _PEERS:
    _reg(f"cast_{_t}_to_bpchar", to_text)
    _reg(f"cast_bpchar_to_{_t}", _from_text(_t))


# ----------------------------------------------------------------------------- real (float4)
# A real value is the Python float of its shortest decimal form (``float4_canon``), see
# ``sql.types_exact``; ``exact`` gives back the float32 value as a double for arithmetic and
# for the conversion to double precision.  Arithmetic on two reals computes in double and
# rounds once to float32, which equals float32 arithmetic for + - * / (a double holds the
# exact result of each to more than twice float32's precision).

_F32 = struct.Struct("<f")
_INF = math.inf


def exact(x: float) -> float:
    """The float32 value ``x`` stands for, as a double."""
    return _F32.unpack(_F32.pack(x))[0]


def float4_canon(x: float) -> float:
    """``x`` rounded to float32, as the double of its shortest decimal form; raises
    ``OverflowError`` when it does not fit."""
    if x != x or x in (_INF, -_INF):
        return x
    e = _F32.unpack(_F32.pack(x))[0]
    for p in range(1, 10):
        d = float("%.*g" % (p, e))
        if _F32.unpack(_F32.pack(d))[0] == e:
            return d
    return e


def float4_out(x: float) -> str:
    """PostgreSQL 15's float4out: shortest digits, exponent form below 1e-4 or from 1e6
    (values are kept as the double of their shortest float32 decimal form)."""
    return shortest_float_out(x, 6)


def _overflow() -> EvalError:
    return EvalError("22003", "value out of range: overflow")


def _underflow() -> EvalError:
    return EvalError("22003", "value out of range: underflow")


def _rounded(r: float, a: float, b: float, zero_ok: bool) -> float:
    """The real result of an operation on ``a`` and ``b`` computed exactly as ``r``."""
    try:
        e = exact(r) if r == r and r not in (_INF, -_INF) else r
    except OverflowError:
        e = _INF
    if e in (_INF, -_INF) and a not in (_INF, -_INF) and b not in (_INF, -_INF):
        raise _overflow()
    if e == 0.0 and r != 0.0 and not zero_ok:
        raise _underflow()
    return float4_canon(e)


def _f4_div(a, b):
    if b == 0.0:
        raise EvalError("22012", "division by zero")
    x, y = exact(a), exact(b)
    return _rounded(x / y, x, y, x == 0.0)


_reg("add_float4", lambda a, b: _rounded(exact(a) + exact(b), a, b, True))
_reg("sub_float4", lambda a, b: _rounded(exact(a) - exact(b), a, b, True))
_reg("mul_float4", lambda a, b: _rounded(exact(a) * exact(b), a, b, a == 0.0 or b == 0.0))
_reg("div_float4", _f4_div)
_reg("neg_float4", lambda a: -a, inline="(-{0})")
_reg("abs_float4", abs, inline="abs({0})")
for _n in ("eq", "neq", "lt", "lte", "gt", "gte"):
    # canonical reals order as their float32 values: the (NaN-aware) double comparisons apply
    _reg(f"{_n}_float4", FUNCTIONS[f"{_n}_float8"].fn)
for _n in ("add", "sub", "mul", "div", "eq", "neq", "lt", "lte", "gt", "gte"):
    _f8 = FUNCTIONS[f"{_n}_float8"].fn
    _reg(f"{_n}_float48", (lambda f: lambda a, b: f(exact(a), b))(_f8))
    _reg(f"{_n}_float84", (lambda f: lambda a, b: f(a, exact(b)))(_f8))


def _to_float4(x: float) -> float:
    """float8 -> real (PostgreSQL's float8_to_float4 errors)."""
    try:
        r = float4_canon(x)
    except OverflowError:
        raise _overflow() from None
    if r == 0.0 and x != 0.0:
        raise _underflow()
    return r


def _numeric_to_float4(d: Decimal) -> float:
    if d.is_nan():
        return math.nan
    if d.is_infinite():
        return _INF if d > 0 else -_INF
    return _text_to_float4(format(d, "f"))


_NUM_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_SPECIAL = {"nan": math.nan, "infinity": _INF, "+infinity": _INF, "-infinity": -_INF,
            "inf": _INF, "+inf": _INF, "-inf": -_INF}


def _text_to_float4(s: str) -> float:
    """float4in (the runtime twin of ``sql.types_exact.parse_float4``; tests check they agree)."""
    t = s.strip(" \t\n\r\f\v")
    if t.lower() in _SPECIAL:
        return _SPECIAL[t.lower()]
    if not _NUM_RE.match(t):
        raise EvalError("22P02", f'invalid input syntax for type real: "{s}"')
    try:
        r = float4_canon(float(t))
    except OverflowError:
        r = _INF
    mant = re.split("[eE]", t)[0]
    if r in (_INF, -_INF) or (r == 0.0 and any(c in "123456789" for c in mant)):
        raise EvalError("22003", f'"{t}" is out of range for type real')
    return r


def _float4_to_numeric(x: float) -> Decimal:
    """PostgreSQL 15's float4_numeric: six significant digits (FLT_DIG)."""
    if x != x:
        return Decimal("NaN")
    if x in (_INF, -_INF):
        return Decimal("Infinity") if x > 0 else Decimal("-Infinity")
    d = Decimal("%.6g" % exact(x))
    if d.as_tuple().exponent > 0:
        d = d.quantize(Decimal(1), context=_CTX)
    return d


def _float4_to_int(t: str):
    lo, hi, word = INT_RANGES[t]

    def f(x):
        if x != x or x in (_INF, -_INF):
            raise EvalError("22003", f"{word} out of range")
        v = int(round(exact(x)))  # round half to even, as rint()
        if not lo <= v <= hi:
            raise EvalError("22003", f"{word} out of range")
        return v
    return f


for _t in ("int2", "int4", "int8"):
    _reg(f"cast_{_t}_to_float4", lambda v: float4_canon(float(v)))
    _reg(f"cast_float4_to_{_t}", _float4_to_int(_t))
_reg("cast_float8_to_float4", _to_float4)
_reg("cast_float4_to_float8", exact)
_reg("cast_numeric_to_float4", _numeric_to_float4)
_reg("cast_float4_to_numeric", _float4_to_numeric)
_reg("cast_float4_to_text", float4_out)
_reg("cast_float4_to_bpchar", float4_out)
_reg("cast_text_to_float4", _text_to_float4)
_reg("cast_bpchar_to_float4", _from_text("float4"))
