"""Constant collections.

Owns ``ConstantInput``: the rows (or the error) of a ``relation.Constant``, delivered once
at the dataflow's first time (its ``as_of``).  Invariant: a constant is sealed: its
upper is the empty frontier, so it never holds back the dataflow's frontier, and a read
at ``Timestamp::MAX`` of a dataflow over constants is answerable.
"""
from __future__ import annotations

from compute.render.operator import consolidate_pairs
from expr.relation import Constant

__all__ = ["ConstantInput"]


class ConstantInput:
    """An input of the dataflow (not an operator): ``hydrate`` gives its one delivery."""

    #: the empty frontier: nothing will ever change
    upper = None

    def __init__(self, expr: Constant):
        self.expr = expr

    def hydrate(self, as_of: int, oks: bool = True):
        """``(oks, errs)`` at ``as_of``."""
        if self.expr.error is not None:
            return [], [(tuple(self.expr.error), 1)]
        return consolidate_pairs(self.expr.rows), []

    def read(self, lower: int, upper):
        return []
