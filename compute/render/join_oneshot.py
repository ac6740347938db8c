"""The join of a dataflow that reads one time only: one linear path, planned when the data is in.

Owns ``OneShotJoinOp``, the join a peek's dataflow renders (``until`` is ``as_of + 1``) when
no input is read through an imported index.  Such a join never sees a second time, so the
delta paths of ``JoinOp`` (one per input, each planned and compiled up front) are work
thrown away: a 64-input join would plan 64 paths of 63 steps.  Instead, as Materialize's
differential (linear) join does, the inputs' updates at ``as_of`` are stashed as they are
pushed; the flush then plans one path starting from the smallest input (equality
predicates order it: ``compute.render.join_order``), builds only the arrangements that path looks
up, loads the other inputs into them and streams the smallest input through.  Invariant:
the result is the join of the inputs' full snapshots at ``as_of``, the same rows
``JoinOp``'s delta paths sum to from empty state.  The flush works in pieces of about its
budget of rows (``flush_pending``), and the smallest input is streamed in pieces whose
output stays near ``_PIECE_OUTPUT`` pairs (halved after a piece that produced more, doubled
after one that produced less than half), so a large join, even a cross product, stays
fuel-bounded and cancellable.

Deliberately not here: joins that see more than one time or read imported arrangements
(``compute.render.join.JoinOp``), and choosing when to use this (the render,
``compute.render.dataflow``).
"""
from __future__ import annotations

from typing import Optional, Sequence

from compute.errors import ComputeProtocolError
from compute.render.join import JoinOp, _fused_reduce_step
from compute.render.operator import EMPTY
from expr.scalar import ScalarExpr

__all__ = ["OneShotJoinOp"]

#: about how many output pairs one piece of the driver should produce
_PIECE_OUTPUT = 8192


class OneShotJoinOp(JoinOp):
    needs_flush = True

    def __init__(self, arities: Sequence[int], equivalences: Sequence[Sequence[ScalarExpr]], *,
                 as_of: int, project: Optional[Sequence[int]] = None):
        self._classes, self._supports = self._setup(arities, equivalences, as_of, project)
        self.paths = [None] * self.n_inputs
        self._local_key_fns = [[] for _ in range(self.n_inputs)]
        self._hydrating_port = None
        #: per input, the chunks pushed at ``as_of``
        self._stash: list = [[] for _ in range(self.n_inputs)]
        #: the flush's remaining work: ``(port, chunk)`` to load, then chunks of the driver
        self._todo: Optional[list] = None
        self._driver: Optional[int] = None
        self._reduce_spec = None
        #: driver rows per piece of the flush (adapted to the pieces' output)
        self._piece = 16

    def fuse_reduce(self, reduce_op) -> bool:
        """As ``JoinOp.fuse_reduce``; the fused loop is generated when the path is planned
        (at the flush), and if it cannot be the join emits rows to the reduce instead."""
        spec = getattr(reduce_op, "direct_spec", None)
        if spec is None:
            return False
        self._reduce_spec = spec
        self.reduce_into = reduce_op
        return True

    def reuses(self, port: int) -> bool:
        return False

    def ignores_hydration(self, port: int) -> bool:
        return False

    def push(self, port: int, chunk: list, time: int):
        if time != self.as_of or self._todo is not None:
            raise ComputeProtocolError(f"one-shot join pushed at {time} (it reads {self.as_of} only)")
        errs: list = []
        chunk = self._checked(port, chunk, errs)
        if chunk:
            self._stash[port].append(chunk)
        return EMPTY, (errs or EMPTY)

    def _start(self) -> None:
        sizes = [sum(len(c) for c in chunks) for chunks in self._stash]
        self._todo = []
        if min(sizes, default=0) == 0:
            self._stash = []
            return  # an inner join with an empty input is empty
        i = min(range(self.n_inputs), key=lambda p: (sizes[p], p))
        self._driver = i
        plan = self._plan_path(i, self._classes, self._supports, {})
        self.paths[i] = self._build_path(i, plan, self._classes)
        self._local_key_fns = [[(arr, arr.key_fn) for arr in self._by_input[j]]
                               for j in range(self.n_inputs)]
        if self._reduce_spec is not None:
            shape = self._fused_shapes.get(i)
            step = None if shape is None else _fused_reduce_step(*shape, self._reduce_spec)
            if step is not None:
                self._reduce_steps = {i: step}
        for j, chunks in enumerate(self._stash):
            if j != i:
                self._todo.extend((j, c) for c in chunks)
        self._todo.extend((None, c) for c in self._stash[i])
        self._todo.reverse()
        self._stash = []

    def flush(self, time: int, budget=None):
        if self._todo is None:
            self._start()
        todo = self._todo
        errs: list = []
        out: list = []
        work = 0
        while todo and (budget is None or work < budget or not work):
            port, chunk = todo.pop()
            if port is None:
                # the driver in pieces whose output stays near ``_PIECE_OUTPUT`` pairs: a
                # cross product (or a high fan-out) never makes one long call
                piece = self._piece
                if len(chunk) > piece:
                    todo.append((None, chunk[piece:]))
                    chunk = chunk[:piece]
                new = self._delta(self._driver, chunk, errs)
                if len(new) > _PIECE_OUTPUT:
                    self._piece = max(1, piece // 2)
                elif len(new) < _PIECE_OUTPUT // 2 and len(chunk) == piece:
                    self._piece = piece * 2
                out.extend(new)
                work += len(new)
            else:
                self._apply(port, chunk, errs, skip_reused=False)
            work += len(chunk)
        self.last_flush_work = work
        return (out or EMPTY), (errs or EMPTY)

    def flush_pending(self) -> bool:
        return bool(self._todo)
