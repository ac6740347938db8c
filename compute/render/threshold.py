"""Negate, Union, Threshold: the multiplicity operators.

Owns ``NegateOp`` and ``UnionOp`` (linear: emit from ``push``) and ``ThresholdOp``
(non-linear: keeps ``row -> count`` and emits, per row touched in a time, the change of
``max(count, 0)`` at ``flush``).  Distinct lives with Reduce (it is a Reduce without
aggregates).  Invariant: ``ThresholdOp`` has emitted exactly ``max(count, 0)`` copies of
every row.  Errors pass through unchanged (they are never negated or clipped: the render
routes them around these operators).
"""
from __future__ import annotations

from compute.render.operator import EMPTY, Operator, take_touched

__all__ = ["NegateOp", "UnionOp", "ThresholdOp"]


class NegateOp(Operator):
    def push(self, port: int, chunk: list, time: int):
        return [(r, -d) for r, d in chunk], EMPTY


class UnionOp(Operator):
    """Forwards every input port unchanged."""

    def __init__(self, n_inputs: int):
        self.n_inputs = n_inputs

    def push(self, port: int, chunk: list, time: int):
        return chunk, EMPTY


class ThresholdOp(Operator):
    needs_flush = True

    def __init__(self):
        self.counts: dict = {}
        #: row -> count before the time being processed
        self.touched: dict = {}

    def push(self, port: int, chunk: list, time: int):
        counts = self.counts
        touched = self.touched
        get = counts.get
        for row, d in chunk:
            c = get(row, 0)
            if row not in touched:
                touched[row] = c
            n = c + d
            if n:
                counts[row] = n
            else:
                del counts[row]
        return EMPTY, EMPTY

    def flush_pending(self) -> bool:
        return bool(self.touched)

    def flush(self, time: int, budget=None):
        out = []
        get = self.counts.get
        for row, old in take_touched(self.touched, budget):
            new = get(row, 0)
            o = old if old > 0 else 0
            n = new if new > 0 else 0
            if n != o:
                out.append((row, n - o))
        return out, EMPTY
