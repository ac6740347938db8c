"""Signatures of the functions and operators over ``real`` and ``double precision``.

Owns PostgreSQL's float entries: ``abs`` of both; over ``double precision`` the math
functions (``ceil``/``ceiling``/``floor``/``trunc``/``round``, ``sqrt``, ``cbrt``, ``sign``,
``ln``, ``exp``, ``log``/``log10``, ``power``/``pow``/``^``, ``pi()``); ``+ - * /``, unary
``-``/``+`` and the NaN-aware comparisons of both, and the cross-type real/double operators
(PostgreSQL's float48*/float84*: a real operand meets a double without a cast, so
``real * int`` is real and ``real * double precision`` double).
Invariant: every func id here is implemented in ``expr.functions.floats`` (unary plus:
``expr.functions.generic``).
Deliberately not here: ``sum``/``avg``/... (``sql.functions.aggregates``).
"""
from __future__ import annotations

from sql.functions.common import ARITH, CMP, Sig, sigs

_F = ("float4", "float8")
_D = ("float8",)
_DD = ("float8", "float8")

FUNCTIONS = sigs(
    *(("abs", (t,), t, f"abs_{t}") for t in _F),
    *((n, _D, "float8", f"{'ceil' if n == 'ceiling' else n}_float8")
      for n in ("ceil", "ceiling", "floor", "trunc", "round", "sqrt", "sign", "ln")),
    ("power", _DD, "float8", "power_float8"), ("pow", _DD, "float8", "power_float8"),
    *((n, _D, "float8", fid) for n, fid in (("cbrt", "cbrt_float8"), ("exp", "exp_float8"), ("log", "log10_float8"),
                                             ("log10", "log10_float8"))),
    ("pi", (), "float8", "pi"))
OPERATORS = sigs(
    *((op, (t, t), t, f"{name}_{t}") for op, name in ARITH.items() if op != "%" for t in _F),
    ("^", _DD, "float8", "power_float8"),
    *((op, (t, t), "bool", f"{fid}_{t}") for op, fid in CMP.items() for t in _F),
    *(sig for ops, ret in ((ARITH, "float8"), (CMP, "bool")) for op, name in ops.items() if op != "%"
      for sig in ((op, ("float4", "float8"), ret, f"{name}_float48"),
                  (op, ("float8", "float4"), ret, f"{name}_float84"))))
UNARY = {**{("-", t): Sig((t,), t, f"neg_{t}") for t in _F}, **{("+", t): Sig((t,), t, "identity") for t in _F}}
