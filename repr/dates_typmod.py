"""Type modifiers of the date/time types: ``timestamp(p)``, ``timestamptz(p)``, ``time(p)``
and ``interval`` with fields and/or precision (``interval(p)``, ``interval day to second(p)``,
``interval hour``), applied on casts and assignments as PostgreSQL's AdjustTimestampForTypmod,
AdjustTimeForTypmod and AdjustIntervalForTypmod do.

Owns ``typmod_timestamp`` / ``typmod_timestamptz`` / ``typmod_time`` / ``typmod_interval``
(``value, typmod, explicit``; the binder inserts them, see ``sql.types.datetime``).  Rounding
is PostgreSQL's, not Python's: half away from zero on the microseconds counted from
PostgreSQL's epoch 2000-01-01 (so a timestamp before 2000 rounds its halves down), half up
for a time of day, half away from zero on an interval's time part.
Invariant: infinite timestamps pass unchanged; an out-of-range result is ``EvalError`` 22008.
Deliberately not here: parsing the modifier (``sql.types.datetime.typmod_for_datetime``) and
the cast itself (``expr.functions.datetime``).
"""
from __future__ import annotations

import datetime as _dt

from repr.dates import USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, Interval, check_interval
from repr.dates_infinity import DateInfinity
from repr.errors import EvalError

__all__ = ["typmod_timestamp", "typmod_time", "typmod_interval"]

_PG_EPOCH_YEAR = 2000
_MASK_YEAR, _MASK_MONTH, _MASK_DAY = 1 << 2, 1 << 1, 1 << 3
_MASK_HOUR, _MASK_MINUTE, _MASK_SECOND = 1 << 10, 1 << 11, 1 << 12
_FULL_RANGE, _FULL_PRECISION = 0x7FFF, 0xFFFF


def _scale(p: int) -> int:
    return 10 ** (6 - p)


def _round_away(us: int, scale: int) -> int:
    """PostgreSQL's ``((t + scale/2) / scale) * scale`` for t >= 0, mirrored below zero."""
    half = scale // 2
    if us >= 0:
        return (us + half) // scale * scale
    return -((-us + half) // scale * scale)


def typmod_timestamp(ts, p: int, explicit: bool = True):
    """``ts`` rounded to ``p`` fractional digits (``timestamp(p)``, ``timestamptz(p)``)."""
    if type(ts) is DateInfinity or p >= 6:
        return ts
    scale = _scale(p)
    r = ts.microsecond % scale
    if r == 0:
        return ts
    half = scale // 2
    before_epoch = ts.year < _PG_EPOCH_YEAR  # PostgreSQL counts from 2000-01-01 and rounds away from it
    delta = -r if (r < half or (r == half and before_epoch)) else scale - r
    try:
        return ts + _dt.timedelta(microseconds=delta)
    except OverflowError:
        raise EvalError("22008", "timestamp out of range") from None


def typmod_time(t: _dt.time, p: int, explicit: bool = True) -> _dt.time:
    """``t`` rounded (half up) to ``p`` fractional digits (``time(p)``).  PostgreSQL may round
    23:59:59.9 up to 24:00:00, which Python's ``time`` cannot hold: 22008 here."""
    if p >= 6:
        return t
    scale = _scale(p)
    r = t.microsecond % scale
    if r == 0:
        return t
    us = ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond
    us = (us + scale // 2) // scale * scale
    if us >= USECS_PER_DAY:
        raise EvalError("22008", "time out of range")
    s, u = divmod(us, 1_000_000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return _dt.time(h, m, s, u)


def _trunc_to(us: int, unit: int) -> int:
    q = abs(us) // unit * unit
    return q if us >= 0 else -q


def typmod_interval(iv: Interval, typmod: int, explicit: bool = True) -> Interval:
    """``iv`` restricted to the fields of the packed typmod ``range << 16 | precision`` and
    its time part rounded to the precision (PostgreSQL's AdjustIntervalForTypmod)."""
    rng, prec = typmod >> 16, typmod & 0xFFFF
    months, days, us = iv.months, iv.days, iv.micros
    if rng != _FULL_RANGE:
        if rng == _MASK_YEAR:
            months, days, us = _trunc_to(months, 12), 0, 0
        elif rng in (_MASK_MONTH, _MASK_YEAR | _MASK_MONTH):
            days, us = 0, 0
        elif rng == _MASK_DAY:
            us = 0
        elif rng in (_MASK_HOUR, _MASK_DAY | _MASK_HOUR):
            us = _trunc_to(us, USECS_PER_HOUR)
        elif rng in (_MASK_MINUTE, _MASK_DAY | _MASK_HOUR | _MASK_MINUTE, _MASK_HOUR | _MASK_MINUTE):
            us = _trunc_to(us, USECS_PER_MINUTE)
    if prec != _FULL_PRECISION and prec < 6:
        us = _round_away(us, _scale(prec))
    if (months, days, us) == (iv.months, iv.days, iv.micros):
        return iv
    return check_interval(months, days, us)

