"""Signatures of the functions and operators over ``uuid``: ``gen_random_uuid()`` and the
comparisons.

Invariant: every func id here is implemented in ``expr.functions.uuid`` (comparisons:
``expr.functions.generic``).
"""
from __future__ import annotations

from sql.functions.common import CMP, sigs

FUNCTIONS = sigs(("gen_random_uuid", (), "uuid", "gen_random_uuid"))
OPERATORS = sigs(*((op, ("uuid", "uuid"), "bool", fid) for op, fid in CMP.items()))
