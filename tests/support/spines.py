"""Spines for tests: random update logs written into a ``Spine``, and what reading them must
give, computed from scratch over the log.

Owns ``expected_at`` (the collection a log of ``(row, time, diff)`` updates holds at a time),
``random_spine`` and ``expected_lookup``, used by the arrangement, read-handle and raw-key
tests.  Deliberately not here: the tests themselves.
"""
from __future__ import annotations

from compute.arrangement.spine import Spine


def expected_at(updates, t) -> dict:
    """From scratch: ``row -> count`` of the updates at times ``<= t``, zeros dropped."""
    out = {}
    for row, time, d in updates:
        if time <= t:
            out[row] = out.get(row, 0) + d
    return {r: c for r, c in out.items() if c}


def random_spine(rng, key_fn=lambda r: (r[0],), steps: int = 120, compact: bool = False):
    """``(spine, log, last time)``: random +1/-1 updates of rows ``(0..15, 0..3)`` keyed by
    their first column, one batch per time, merged now and then (and compacted a few times
    behind, with ``compact``); ``log`` holds every update as ``(row, time, diff)``."""
    spine = Spine(key_fn, 2)
    log = []
    t = 0
    for _ in range(steps):
        t += 1
        ups = {}
        for _ in range(rng.randint(1, 8)):
            row = (rng.randint(0, 15), rng.randint(0, 3))
            ups[row] = ups.get(row, 0) + rng.choice([-1, 1, 1])
        ups = [(r, d) for r, d in ups.items() if d]
        spine.insert_at(t, ups, t + 1)
        log.extend((r, t, d) for r, d in ups)
        if rng.random() < 0.2:
            if compact:
                spine.set_logical_compaction(t - rng.randint(2, 20))
            spine.maintain(None)
    return spine, log, t


def expected_lookup(log, keys, as_of) -> dict:
    """From scratch: ``row -> count`` over the rows of every key in ``keys`` (a key given
    twice counts twice) at ``as_of``, zeros dropped."""
    out = {}
    for k in keys:
        for row, c in expected_at([u for u in log if u[0][0] == k[0]], as_of).items():
            out[row] = out.get(row, 0) + c
    return {r: c for r, c in out.items() if c}
