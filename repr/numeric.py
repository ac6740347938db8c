"""Numeric values (``Decimal``): their context, display scale, text I/O and ``numeric(p,s)``.

Owns ``NUMERIC_CONTEXT`` (the exact-arithmetic context every ``numeric`` operation that
cannot lose digits runs in), ``dscale`` (PostgreSQL's display scale of a value), the text
input ``parse_numeric`` and output ``numeric_out`` as PostgreSQL 15 reads and prints them,
and the value side of the type modifier: ``typmod_numeric`` (round to the scale, refuse a
value with too many integer digits).
Invariant: a value is a ``Decimal`` with a non-negative exponent only when it is an integer
written without a point (PostgreSQL's numeric has no negative scale: ``1e3`` is ``1000``);
``numeric_out`` never prints an exponent or a negative zero.  Errors are ``EvalError``
(22P02 bad syntax, 22003 overflow, with PostgreSQL's messages).
Deliberately not here: arithmetic and its result scales (``expr.functions.numeric``) and the
SQL type (``sql.types.numeric``).
"""
from __future__ import annotations

import decimal
from decimal import Context, Decimal
import re

from repr.errors import EvalError, EvalErrorDetail

#: exact arithmetic up to PostgreSQL's numeric limits (131072 digits before the point, 16383
#: after); only add/sub/mul/remainder/quantize use it: never an inexact operation (sqrt,
#: division, ln), which would compute this many digits
NUMERIC_CONTEXT = decimal.Context(prec=150000, rounding=decimal.ROUND_HALF_UP, Emax=999999, Emin=-999999,
                                  traps=[decimal.DivisionByZero, decimal.Overflow])

#: a numeric literal (also float8's and real's syntax, without the special words)
NUM_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[ \t\n\r\f\v]*\Z")
#: the special words numeric, double precision and real accept (case-insensitive)
SPECIAL_WORDS = {"nan": "NaN", "infinity": "Infinity", "+infinity": "Infinity", "-infinity": "-Infinity",
                 "inf": "Infinity", "+inf": "Infinity", "-inf": "-Infinity"}
WHITESPACE = " \t\n\r\f\v"


def dscale(d: Decimal) -> int:
    """PostgreSQL's display scale of a numeric value."""
    e = d.as_tuple().exponent
    return -e if isinstance(e, int) and e < 0 else 0


#: the plain decimal form (no blanks, no exponent, at most 1000 digits each side), which needs
#: none of ``parse_numeric``'s checks: ``Decimal`` of it is the value (COPY's and text
#: parameters' common case: 100,000 values, 1.3 s -> 0.3 s)
_PLAIN_RE = re.compile(r"[+-]?[0-9]{1,1000}(?:\.[0-9]{0,1000})?")


#: the characters of plain decimals; within them (and 1000 characters) ``Decimal`` accepts
#: exactly what ``parse_numeric`` does, with the same value
_PLAIN_CHARS = re.compile(r"[0-9.+-]*")
#: exact for those values, and raising (never returning NaN) for anything else
_EXACT = Context(prec=1100, traps=[decimal.InvalidOperation])


def parse_numeric_many(values: list) -> list:
    """``[parse_numeric(v) for v in values]`` for a list of str, raising the first error in
    order.  The common case is mapped in C: values of plain-decimal characters, each at most
    1000 long (one regex pass over them joined), are ``Decimal`` of themselves; anything
    else, or any value ``Decimal`` refuses, takes the per-value path (and its errors)."""
    try:
        if max(map(len, values), default=0) <= 1000 and _PLAIN_CHARS.fullmatch("".join(values)):
            return list(map(_EXACT.create_decimal, values))
    except (ArithmeticError, TypeError):
        pass
    return [parse_numeric(v) for v in values]


def parse_numeric(s: str) -> Decimal:
    """numeric_in: 22P02 for bad syntax, 22003 past numeric's limits."""
    if _PLAIN_RE.fullmatch(s) is not None:
        return Decimal(s)
    t = s.strip(WHITESPACE)
    low = t.lower()
    if low in SPECIAL_WORDS:
        return Decimal(SPECIAL_WORDS[low])
    if NUM_RE.match(t) is None:
        raise EvalError("22P02", f'invalid input syntax for type numeric: "{s}"')
    d = Decimal(t)
    exp = d.as_tuple().exponent
    if (d and d.adjusted() > 131071) or exp < -16383:
        raise EvalError("22003", "value overflows numeric format")
    if exp > 0:  # PostgreSQL numeric has no negative scale
        d = d.quantize(Decimal(1), context=Context(prec=d.adjusted() + 2))
    return d


def numeric_out(d: Decimal) -> str:
    """PostgreSQL's numeric_out: plain notation, the value's scale kept, no negative zero."""
    if not d.is_finite():
        if d.is_nan():
            return "NaN"
        return "-Infinity" if d < 0 else "Infinity"
    if not d:
        d = abs(d)
    return format(d, "f")


_TYPMOD_CONTEXT = decimal.Context(prec=2100, Emax=999999, Emin=-999999)


def typmod_numeric(d: Decimal, p: int, s: int) -> Decimal:
    """``d`` as ``numeric(p, s)``: rounded half up to ``s`` digits after the point; 22003
    (with PostgreSQL's DETAIL) when more than ``p - s`` integer digits remain."""
    if d.is_nan():
        return d
    if d.is_infinite():
        raise EvalErrorDetail("22003", "numeric field overflow",
                              f"A field with precision {p}, scale {s} cannot hold an infinite value.")
    r = d.quantize(Decimal(1).scaleb(-s), rounding=decimal.ROUND_HALF_UP, context=_TYPMOD_CONTEXT)
    maxdigits = p - s
    if r and r.adjusted() + 1 > maxdigits:
        limit = f"10^{maxdigits}" if maxdigits else "1"
        raise EvalErrorDetail("22003", "numeric field overflow",
                              f"A field with precision {p}, scale {s} must round to an absolute value "
                              f"less than {limit}.")
    if s < 0:  # keep the integer form (no exponent) numeric_out expects
        r = r.quantize(Decimal(1), context=_TYPMOD_CONTEXT)
    return r
