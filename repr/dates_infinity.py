"""``infinity`` and ``-infinity`` of ``date``, ``timestamp`` and ``timestamptz``.

Owns the ``DateInfinity`` class and its two singletons ``INFINITY`` and ``NEG_INFINITY``
(one pair shared by the three types: casts between them keep it; the column's SQL type
says which type an infinity is).  Invariant: they are hashable, equal only to themselves
(also after pickling), and ordered above (below) every ``datetime.date``/``datetime``
from either side of a comparison, so a column mixing them with finite values sorts,
groups and compares as PostgreSQL does.  Deliberately not here: text input and output
and the arithmetic on them (``repr.dates``, ``expr.functions.datetime``).
"""
from __future__ import annotations

import datetime as _dt

__all__ = ["DateInfinity", "INFINITY", "NEG_INFINITY", "is_infinite", "keep_infinite", "null_if_infinite"]


class DateInfinity:
    """``infinity`` (``sign`` 1) or ``-infinity`` (``sign`` -1) of the date/timestamp types.
    Python's ``date``/``datetime`` answer ``NotImplemented`` when compared with any other
    type, so the reflected methods here decide both ``d < INFINITY`` and ``INFINITY > d``."""

    __slots__ = ("sign",)

    def __new__(cls, sign: int):
        existing = _INFINITIES.get(sign)
        if existing is not None:
            return existing
        self = object.__new__(cls)
        object.__setattr__(self, "sign", sign)
        _INFINITIES[sign] = self
        return self

    def __setattr__(self, name, value):
        raise AttributeError("DateInfinity is immutable")

    def _cmp(self, other):
        """-1/0/1 against ``other``, or None when ``other`` is not a date/time point."""
        if isinstance(other, DateInfinity):
            return (self.sign > other.sign) - (self.sign < other.sign)
        if isinstance(other, _dt.date):
            return self.sign
        return None

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __lt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c < 0

    def __le__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c <= 0

    def __gt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c > 0

    def __ge__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c >= 0

    def __hash__(self):
        return hash(("DateInfinity", self.sign))

    def __reduce__(self):
        return (DateInfinity, (self.sign,))

    def __str__(self):
        return "infinity" if self.sign > 0 else "-infinity"

    def __repr__(self):
        return "INFINITY" if self.sign > 0 else "NEG_INFINITY"


_INFINITIES: dict = {}
INFINITY = DateInfinity(1)
NEG_INFINITY = DateInfinity(-1)


def is_infinite(v) -> bool:
    return type(v) is DateInfinity


def keep_infinite(fn):
    """``fn`` for finite values; ``infinity``/``-infinity`` pass through unchanged (a cast
    between date, timestamp and timestamptz, ``date + 1``, ``date_trunc``)."""
    def f(v, *rest):
        return v if type(v) is DateInfinity else fn(v, *rest)
    return f


def null_if_infinite(fn):
    """``fn`` for finite values; NULL for an infinite one (PostgreSQL's ``timestamp::time``
    and ``to_char``)."""
    def f(v, *rest):
        return None if type(v) is DateInfinity else fn(v, *rest)
    return f
