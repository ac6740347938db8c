"""Signatures of the functions and operators over ``numeric``.

Owns PostgreSQL's numeric entries: ``abs``, ``ceil``/``ceiling``/``floor``/``trunc``/
``round`` (and ``round``/``trunc`` to a number of places), ``sqrt``, ``sign``, ``ln``,
``exp``, ``log``/``log10``, ``power``/``pow``/``^``, ``mod``/``%``, ``div`` (truncating),
``+ - * /``, unary ``-``/``+`` and the NaN-aware comparisons.
Invariant: every func id here is implemented in ``expr.functions.numeric`` (unary plus:
``expr.functions.generic``).
Deliberately not here: ``sum``/``avg``/... (``sql.functions.aggregates``).
"""
from __future__ import annotations

from sql.functions.common import ARITH, CMP, Sig, sigs

_N = ("numeric",)
_NN = ("numeric", "numeric")

FUNCTIONS = sigs(
    ("abs", _N, "numeric", "abs_numeric"),
    *((n, _N, "numeric", f"{'ceil' if n == 'ceiling' else n}_numeric")
      for n in ("ceil", "ceiling", "floor", "trunc", "round", "sqrt", "sign")),
    ("power", _NN, "numeric", "power_numeric"), ("pow", _NN, "numeric", "power_numeric"),
    ("round", ("numeric", "int4"), "numeric", "round_numeric_int4"),
    ("mod", _NN, "numeric", "mod_numeric"),
    ("div", _NN, "numeric", "div_trunc_numeric"),
    ("exp", _N, "numeric", "exp_numeric"),
    ("log", _N, "numeric", "log10_numeric"), ("log10", _N, "numeric", "log10_numeric"),
    ("ln", _N, "numeric", "ln_numeric"),
    ("trunc", ("numeric", "int4"), "numeric", "trunc_numeric_int4"))
OPERATORS = sigs(*((op, _NN, "numeric", f"{name}_numeric") for op, name in ARITH.items()),
                 ("^", _NN, "numeric", "power_numeric"),
                 *((op, _NN, "bool", f"{fid}_numeric") for op, fid in CMP.items()))
UNARY = {("-", "numeric"): Sig(_N, "numeric", "neg_numeric"), ("+", "numeric"): Sig(_N, "numeric", "identity")}
#: func ids the binder writes for syntax rather than resolving a name
FUNC_IDS = {"typmod_numeric": "a numeric(p,s) modifier on a cast or an assignment (sql.types.numeric)"}
