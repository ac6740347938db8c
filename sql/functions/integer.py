"""Signatures of the functions and operators over ``smallint``, ``integer`` and ``bigint``.

Owns ``abs``, ``mod``, the arithmetic operators (``+ - * / %``), the bit operators
(``& | #``, ``<<``/``>>`` by an integer count, prefix ``~``), unary ``-``/``+`` and the
comparisons, each per integer type (PostgreSQL's int2/int4/int8 entries; mixed widths
resolve through the implicit widening casts); ``oid`` has the comparisons only.
Invariant: every func id here is implemented in ``expr.functions.integer`` (comparisons and
unary plus: ``expr.functions.generic``).
Deliberately not here: ``sum``/``avg``/... (``sql.functions.aggregates``).
"""
from __future__ import annotations

from sql.functions.common import ARITH, CMP, Sig, sigs

_INTS = ("int2", "int4", "int8")

FUNCTIONS = sigs(*(("abs", (t,), t, f"abs_{t}") for t in _INTS), *(("mod", (t, t), t, f"mod_{t}") for t in _INTS))
OPERATORS = sigs(
    *((op, (t, t), t, f"{name}_{t}") for op, name in ARITH.items() for t in _INTS),
    *((op, (t, t), t, f"{name}_{t}") for op, name in (("&", "bitand"), ("|", "bitor"), ("#", "bitxor"))
      for t in _INTS),
    *((op, (t, "int4"), t, f"{name}_{t}") for op, name in (("<<", "shl"), (">>", "shr")) for t in _INTS),
    *((op, (t, t), "bool", fid) for op, fid in CMP.items() for t in _INTS + ("oid",)))
#: (prefix operator, operand type) -> signature; ``~`` reads an unknown operand as integer
UNARY = {**{("-", t): Sig((t,), t, f"neg_{t}") for t in _INTS},
         **{("+", t): Sig((t,), t, "identity") for t in _INTS},
         **{("~", t): Sig((t,), t, f"bitnot_{t}") for t in _INTS},
         ("~", "unknown"): Sig(("int4",), "int4", "bitnot_int4")}
