"""Timestamps and frontiers over totally ordered time.

Owns: the ``Timestamp`` domain (unsigned 64-bit integers), ``MAX``, stepping, and the
frontier vocabulary.  Over a total order a frontier is either a single time or empty.
We represent a frontier as ``int | None`` where ``None`` is the *empty* frontier
(closed: nothing will ever change again).  Invariant: every timestamp value handled
by this package lies in ``[0, MAX]``.  Deliberately not here: clocks and the oracle
(the coordinator owns those).
"""
from __future__ import annotations

from typing import Optional

MIN: int = 0
MAX: int = 18446744073709551615

#: A frontier over totally ordered time: one time, or ``None`` for the empty frontier.
Frontier = Optional[int]


def step_forward(t: int) -> int:
    """``t + 1``; refuses ``MAX`` (there is no time after the last one)."""
    if t >= MAX:
        raise OverflowError("cannot step forward from Timestamp::MAX")
    return t + 1


def try_step_forward(t: int) -> Optional[int]:
    """``t + 1``, or ``None`` at ``MAX``."""
    return None if t >= MAX else t + 1


def frontier_le(a: Frontier, b: Frontier) -> bool:
    """Frontier order: ``a <= b``; the empty frontier is the greatest."""
    if b is None:
        return True
    if a is None:
        return False
    return a <= b


def frontier_min(a: Frontier, b: Frontier) -> Frontier:
    """The meet of two frontiers (the lesser one)."""
    return b if frontier_le(b, a) else a


def frontier_less_equal_time(frontier: Frontier, t: int) -> bool:
    """Whether ``frontier <= t``, i.e. ``t`` is not yet complete at ``frontier``."""
    return frontier is not None and frontier <= t


def is_readable(since: Frontier, upper: Frontier, as_of: int) -> bool:
    """A read at ``as_of`` is answerable when ``since <= as_of < upper`` (or upper is empty)."""
    if since is None:
        return False
    return since <= as_of and (upper is None or as_of < upper)


def check_timestamp(t: int) -> int:
    if not isinstance(t, int) or t < MIN or t > MAX:
        raise ValueError(f"timestamp out of range: {t!r}")
    return t
