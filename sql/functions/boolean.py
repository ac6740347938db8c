"""Signatures of the boolean operators: AND, OR, NOT, IS [NOT] TRUE/FALSE/UNKNOWN, comparisons.

Owns ``LOGIC`` and ``BOOL_TESTS`` (resolved by ``sql.functions``: their operand must be
``boolean`` or unknown, else 42804) and the comparisons of booleans (``OPERATORS``).
Invariant: every func id here is implemented in ``expr.functions.boolean`` or, for the
comparisons and ``IS UNKNOWN`` (a NULL test), ``expr.functions.generic``.
Deliberately not here: ``bool_and``/``bool_or`` (``sql.functions.aggregates``).
"""
from __future__ import annotations

from sql.functions.common import CMP, sigs

LOGIC = {"and": "and", "or": "or", "not": "not"}
BOOL_TESTS = {"is true": "is_true", "is not true": "is_not_true", "is false": "is_false",
              "is not false": "is_not_false", "is unknown": "is_null", "is not unknown": "is_not_null"}
OPERATORS = sigs(*((op, ("bool", "bool"), "bool", fid) for op, fid in CMP.items()))
