"""The functions over the date/time types and Materialize's ``mz_timestamp``.

Owns the func ids ``sql.functions.datetime`` names, with PostgreSQL's results and errors:
casts (among the date/time types, to and from ``text`` and ``mz_timestamp``), operators,
extract/date_part, date_trunc, age, isfinite, justify_*, make_*, to_char, to_timestamp,
date_bin, now, and the ``typmod_*`` precision checks of ``repr.dates_typmod`` the binder
inserts.  ``infinity`` (``repr.dates_infinity``) is kept by casts, ``+ interval``/days and
date_trunc; extract gives +-Infinity (year, epoch, ...) or NULL; ``::time``/``to_char``
NULL; subtraction, ``age`` (PostgreSQL 15's answer is meaningless) and ``::mz_timestamp``
raise 22008.  ``mz_timestamp`` is a uint64 (milliseconds since the epoch when it comes from
a timestamp); it converts from the integers and ``numeric`` and back to ``numeric``.
Invariant: bad data raises ``EvalError`` only; ``timestamptz`` values stay aware
datetimes in UTC and ``timestamp`` values naive ones.  ``now`` takes the read time
(``mz_now()``) as its argument so that it is never folded at plan time and reads one
wall clock per read time: a statement sees one ``now()`` (the planner binds it so; a
maintained dataflow refuses it, ``mzlite.temporal``).
Deliberately not here: parsing and output (``repr.dates``), table functions
(``generate_series`` steps through ``Interval``'s arithmetic in ``compute.render.flat_map``).

Over 600 lines: the date/time type family is one module on purpose, paired one to one with
``sql/functions/datetime.py`` (``tests/test_registries.py``); splitting it would split the pair.
"""
from __future__ import annotations

import datetime as _dt
from decimal import Decimal
import functools
import math

from expr.functions.common import add
from expr.functions.numeric import numeric_div
from repr import dates as D
from repr.dates import USECS_PER_DAY, USECS_PER_SEC, UTC, DateInfinity, Interval, check_interval
from repr.dates_infinity import keep_infinite as _keep_inf, null_if_infinite as _null_inf
from repr.dates_many import PARSERS_MANY
from repr.dates_typmod import typmod_interval, typmod_time, typmod_timestamp
from repr.errors import EvalError
from repr.strconv import parse_mz_timestamp
from repr.timestamp import MAX as _MZ_TS_MAX
from repr.to_char import to_char

FUNCTIONS: dict = {}
_reg = functools.partial(add, FUNCTIONS)


_DISPLAY = {"date": "date", "time": "time without time zone", "timestamp": "timestamp without time zone",
            "timestamptz": "timestamp with time zone", "interval": "interval"}

# ------------------------------------------------------------------------------ casts

for _t, _parse in D.PARSERS.items():
    _reg(f"cast_text_to_{_t}", _parse, many=PARSERS_MANY.get(_t))
_reg("cast_date_to_text", D.date_out)
_reg("cast_time_to_text", D.time_out)
_reg("cast_timestamp_to_text", D.timestamp_out)
_reg("cast_timestamptz_to_text", D.timestamptz_out)
_reg("cast_interval_to_text", D.interval_out)
_reg("cast_date_to_timestamp", _keep_inf(lambda d: _dt.datetime(d.year, d.month, d.day)))
_reg("cast_date_to_timestamptz", _keep_inf(lambda d: _dt.datetime(d.year, d.month, d.day, tzinfo=UTC)))
_reg("cast_timestamp_to_timestamptz", _keep_inf(lambda ts: ts.replace(tzinfo=UTC)))
_reg("cast_timestamptz_to_timestamp", _keep_inf(lambda ts: ts.replace(tzinfo=None)))
_reg("cast_timestamp_to_date", _keep_inf(lambda ts: ts.date()))
_reg("cast_timestamptz_to_date", _keep_inf(lambda ts: ts.date()))
_reg("cast_timestamp_to_time", _null_inf(lambda ts: ts.time()))
_reg("cast_timestamptz_to_time", _null_inf(lambda ts: ts.time()))
_reg("cast_time_to_interval", lambda t: Interval(0, 0, _time_us(t)))


# ------------------------------------------------------------------------------ AT TIME ZONE
_ZONES: dict = {}


def _zone(name: str):
    """A time zone by IANA name (``America/New_York``, ``UTC``), from the system's tz data;
    numeric offsets are refused rather than read with a sign convention the user may not mean."""
    z = _ZONES.get(name)
    if z is None:
        import zoneinfo
        key = name.strip()
        if key.upper() in ("UTC", "GMT", "Z", "ZULU", "UCT"):
            z = UTC
        else:
            try:
                z = zoneinfo.ZoneInfo(key)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
                raise EvalError("22023", f"invalid time zone '{name}'") from None
        _ZONES[name] = z
    return z


def _timezone_timestamp(zone, ts):
    """A local time in ``zone`` -> the instant (timestamptz); infinities pass through."""
    z = _zone(zone)
    return ts if type(ts) is DateInfinity else ts.replace(tzinfo=z).astimezone(UTC)


def _timezone_timestamptz(zone, ts):
    """An instant -> its local time in ``zone`` (timestamp); infinities pass through."""
    z = _zone(zone)
    return ts if type(ts) is DateInfinity else ts.astimezone(z).replace(tzinfo=None)


_reg("timezone_timestamp", _timezone_timestamp)
_reg("timezone_timestamptz", _timezone_timestamptz)


def _interval_to_time(iv: Interval) -> _dt.time:
    us = iv.micros % USECS_PER_DAY
    return _us_time(us)


def _time_us(t: _dt.time) -> int:
    return ((t.hour * 60 + t.minute) * 60 + t.second) * USECS_PER_SEC + t.microsecond


def _us_time(us: int) -> _dt.time:
    s, u = divmod(us, USECS_PER_SEC)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return _dt.time(h, m, s, u)


_reg("cast_interval_to_time", _interval_to_time)


def _to_mz_ts(ts: _dt.datetime) -> int:
    """Milliseconds since the Unix epoch, as Materialize converts timestamps to mz_timestamp."""
    if type(ts) is DateInfinity:
        raise EvalError("22008", "out of range for mz_timestamp")
    base = D.EPOCH_TZ if ts.tzinfo is not None else D.EPOCH
    d = ts - base
    ms = (d.days * 86400 + d.seconds) * 1000 + d.microseconds // 1000
    if ms < 0:
        raise EvalError("22008", "out of range for mz_timestamp")
    return ms


def _from_mz_ts(ms: int, tz=None) -> _dt.datetime:
    try:
        return (D.EPOCH_TZ if tz else D.EPOCH) + _dt.timedelta(milliseconds=ms)
    except OverflowError:
        raise EvalError("22008", "timestamp out of range") from None


_reg("cast_timestamp_to_mz_timestamp", _to_mz_ts)
_reg("cast_timestamptz_to_mz_timestamp", _to_mz_ts)
_reg("cast_date_to_mz_timestamp", lambda d: _to_mz_ts(_date_ts(d)))
_reg("cast_mz_timestamp_to_timestamp", lambda ms: _from_mz_ts(ms))
_reg("cast_mz_timestamp_to_timestamptz", lambda ms: _from_mz_ts(ms, UTC))

# ------------------------------------------------------------------------------ operators


def _date_range():
    return EvalError("22008", "date out of range")


def _add_date_days(d: _dt.date, n: int) -> _dt.date:
    if type(d) is DateInfinity:
        return d
    try:
        return d + _dt.timedelta(days=n)
    except OverflowError:
        raise _date_range() from None


def _date_ts(d: _dt.date) -> _dt.datetime:
    if type(d) is DateInfinity:
        return d
    return _dt.datetime(d.year, d.month, d.day)


def _add_ts_time(d: _dt.date, t: _dt.time) -> _dt.datetime:
    if type(d) is DateInfinity:
        return d
    return _dt.datetime.combine(d, t)


def _time_add(t: _dt.time, iv: Interval, sign: int = 1) -> _dt.time:
    return _us_time((_time_us(t) + sign * iv.micros) % USECS_PER_DAY)


def _iv_add(a: Interval, b: Interval, sign: int = 1) -> Interval:
    return check_interval(a.months + sign * b.months, a.days + sign * b.days, a.micros + sign * b.micros)


_reg("add_date_int4", _add_date_days)
_reg("add_int4_date", lambda n, d: _add_date_days(d, n))
_reg("sub_date_int4", lambda d, n: _add_date_days(d, -n))
_reg("sub_date_date", D.sub_dates)
_reg("isfinite", lambda v: type(v) is not DateInfinity)
_reg("add_date_interval", lambda d, iv: D.add_interval(_date_ts(d), iv))
_reg("add_interval_date", lambda iv, d: D.add_interval(_date_ts(d), iv))
_reg("sub_date_interval", lambda d, iv: D.add_interval(_date_ts(d), iv, -1))
_reg("add_date_time", _add_ts_time)
_reg("add_time_date", lambda t, d: _add_ts_time(d, t))
_reg("add_timestamp_interval", D.add_interval)
_reg("add_interval_timestamp", lambda iv, ts: D.add_interval(ts, iv))
_reg("sub_timestamp_interval", lambda ts, iv: D.add_interval(ts, iv, -1))
_reg("sub_timestamp_timestamp", D.sub_timestamps)
_reg("add_time_interval", _time_add)
_reg("add_interval_time", lambda iv, t: _time_add(t, iv))
_reg("sub_time_interval", lambda t, iv: _time_add(t, iv, -1))
_reg("sub_time_time", lambda a, b: Interval(0, 0, _time_us(a) - _time_us(b)))
_reg("add_interval_interval", _iv_add)
_reg("sub_interval_interval", lambda a, b: _iv_add(a, b, -1))
_reg("neg_interval", lambda a: check_interval(-a.months, -a.days, -a.micros))
_reg("mul_interval_float8", D.interval_mul)
_reg("mul_float8_interval", lambda f, iv: D.interval_mul(iv, f))
_reg("div_interval_float8", D.interval_div)

# ------------------------------------------------------------------------------ now()

_NOW = {"t": None, "v": None}


def _now(t=None):
    """The wall clock, read once per read time ``t`` (one value per statement)."""
    cache = _NOW
    if cache["t"] != t or t is None:
        v = _dt.datetime.now(UTC)
        cache["v"], cache["t"] = v, t
    return cache["v"]


_reg("now", _now)
_reg("to_timestamp_float8", lambda f: _to_timestamp(f))


def _to_timestamp(f: float) -> _dt.datetime:
    if f != f:
        raise EvalError("22008", "timestamp cannot be NaN")
    if f in (math.inf, -math.inf):
        return D.INFINITY if f > 0 else D.NEG_INFINITY
    try:
        return D.EPOCH_TZ + _dt.timedelta(microseconds=round(f * 1e6))
    except OverflowError:
        raise EvalError("22008", f'timestamp out of range: "{f:g}"') from None


# ------------------------------------------------------------------------------ extract / date_part

_TS_FIELDS = ("microseconds", "milliseconds", "second", "minute", "hour", "day", "month", "quarter", "week",
              "year", "decade", "century", "millennium", "dow", "isodow", "doy", "isoyear", "epoch", "julian",
              "timezone", "timezone_hour", "timezone_minute")
_FIELD_ALIASES = {"microsecond": "microseconds", "us": "microseconds", "usec": "microseconds",
                  "usecs": "microseconds", "useconds": "microseconds",
                  "millisecond": "milliseconds", "ms": "milliseconds", "msec": "milliseconds",
                  "msecs": "milliseconds", "mseconds": "milliseconds",
                  "seconds": "second", "s": "second", "sec": "second", "secs": "second",
                  "minutes": "minute", "m": "minute", "min": "minute", "mins": "minute",
                  "hours": "hour", "h": "hour", "hr": "hour", "hrs": "hour",
                  "days": "day", "d": "day", "months": "month", "mon": "month", "mons": "month",
                  "years": "year", "y": "year", "yr": "year", "yrs": "year", "weeks": "week", "w": "week",
                  "decades": "decade", "dec": "decade", "centuries": "century", "c": "century",
                  "millennia": "millennium", "mil": "millennium", "millenniums": "millennium",
                  "qtr": "quarter", "j": "julian", "epoch": "epoch"}


def _field(name: str) -> str:
    n = name.strip().lower()
    return _FIELD_ALIASES.get(n, n)


def _unit_error(name: str, type_: str, known: bool) -> EvalError:
    if known:
        return EvalError("0A000", f'unit "{name}" not supported for type {_DISPLAY[type_]}')
    return EvalError("22023", f'unit "{name}" not recognized for type {_DISPLAY[type_]}')


def _dec(n: int, scale: int) -> Decimal:
    """``n * 10**-scale`` as a numeric of that scale (PostgreSQL's int64_div_fast_to_numeric)."""
    return Decimal(n).scaleb(-scale)


def _date_fields(d: _dt.date, f: str):
    y = d.year
    if f == "day":
        return d.day
    if f == "month":
        return d.month
    if f == "year":
        return y
    if f == "quarter":
        return (d.month - 1) // 3 + 1
    if f == "week":
        return d.isocalendar()[1]
    if f == "isoyear":
        return d.isocalendar()[0]
    if f == "decade":
        return y // 10
    if f == "century":
        return (y + 99) // 100
    if f == "millennium":
        return (y + 999) // 1000
    if f == "dow":
        return d.isoweekday() % 7
    if f == "isodow":
        return d.isoweekday()
    if f == "doy":
        return d.timetuple().tm_yday
    if f == "julian":
        return d.toordinal() + 1721425
    return None


def _extract(field: str, v, type_: str):
    """(integer micro-units, scale): the field's value is ``n / 10**6`` shown with ``scale``
    digits, or (int, 0) for integer fields."""
    f = _field(field)
    if type_ == "interval":
        return _extract_interval(field, f, v)
    if type(v) is DateInfinity:
        return _extract_infinite(field, f, v, type_)
    if type_ == "date":
        if f == "epoch":
            return (v - D.EPOCH_DATE).days * 86400, 0
        r = _date_fields(v, f)
        if r is None:
            raise _unit_error(field, type_, f in _TS_FIELDS)
        return r, 0
    if type_ == "time":
        us = _time_us(v)
        if f in ("microseconds", "milliseconds", "second", "epoch"):
            return _sec_field(f, us % 60_000_000 if f != "epoch" else us)
        if f == "minute":
            return v.minute, 0
        if f == "hour":
            return v.hour, 0
        raise _unit_error(field, type_, f in _TS_FIELDS)
    # timestamp / timestamptz
    if f in ("microseconds", "milliseconds", "second"):
        return _sec_field(f, v.second * USECS_PER_SEC + v.microsecond)
    if f == "minute":
        return v.minute, 0
    if f == "hour":
        return v.hour, 0
    if f == "epoch":
        d = v - (D.EPOCH_TZ if v.tzinfo is not None else D.EPOCH)
        return (d.days * 86400 + d.seconds) * USECS_PER_SEC + d.microseconds, 6
    if f in ("timezone", "timezone_hour", "timezone_minute"):
        if type_ == "timestamptz":
            return 0, 0
        raise _unit_error(field, type_, True)
    if f == "julian":  # the day number plus the fraction of the day, at numeric division's scale
        frac = numeric_div(Decimal(_time_us(v.time())), Decimal(USECS_PER_DAY))
        return Decimal(v.toordinal() + 1721425) + frac, 0
    r = _date_fields(v, f)
    if r is None:
        raise _unit_error(field, type_, False)
    return r, 0


#: the fields that grow with the timestamp: +-Infinity for an infinite one (the others are NULL)
_DATE_FIELDS = frozenset({"day", "month", "year", "quarter", "week", "isoyear", "decade", "century", "millennium",
                          "dow", "isodow", "doy", "julian", "epoch"})
_MONOTONE_FIELDS = frozenset({"year", "decade", "century", "millennium", "julian", "isoyear", "epoch"})


def _extract_infinite(field: str, f: str, v, type_: str):
    """PostgreSQL's NonFiniteTimestampPart: +-Infinity, NULL, or the unit's error."""
    if f in _MONOTONE_FIELDS:
        return (Decimal("Infinity") if v.sign > 0 else Decimal("-Infinity")), 0
    if f not in _TS_FIELDS:
        raise _unit_error(field, type_, False)
    if type_ == "date" and f not in _DATE_FIELDS:
        raise _unit_error(field, type_, True)
    return None


def _sec_field(f: str, us: int):
    if f == "microseconds":
        return us, 0
    if f == "milliseconds":
        return us, 6 - 3  # thousandths of a millisecond
    return us, 6


def _trunc(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


def _extract_interval(field: str, f: str, iv: Interval):
    t = iv.micros
    if f in ("microseconds", "milliseconds", "second"):
        return _sec_field(f, t - _trunc(t, 60_000_000) * 60_000_000)
    if f == "minute":
        return _trunc(t, 60_000_000) - _trunc(t, 3_600_000_000) * 60, 0
    if f == "hour":
        return _trunc(t, 3_600_000_000), 0
    if f == "day":
        return iv.days, 0
    years = _trunc(iv.months, 12)
    mon = iv.months - years * 12
    if f == "month":
        return mon, 0
    if f == "quarter":
        return _trunc(mon, 3) + 1, 0
    if f == "year":
        return years, 0
    if f == "decade":
        return _trunc(years, 10), 0
    if f == "century":
        return _trunc(years, 100), 0
    if f == "millennium":
        return _trunc(years, 1000), 0
    if f == "epoch":
        secs_us = (years * 36525 * 864 * USECS_PER_SEC + mon * 30 * USECS_PER_DAY + iv.days * USECS_PER_DAY + t)
        return secs_us, 6
    raise _unit_error(field, "interval", f in _TS_FIELDS)


def _as_numeric(r) -> Decimal:
    if r is None:
        return None
    n, scale = r
    return Decimal(n) if scale == 0 else _dec(n, scale)


def _as_float(r) -> float:
    if r is None:
        return None
    n, scale = r
    return float(n) if scale == 0 else n / 10.0 ** scale


for _t in ("date", "time", "timestamp", "timestamptz", "interval"):
    _reg(f"extract_{_t}", (lambda t: lambda f, v: _as_numeric(_extract(f, v, t)))(_t))
    if _t != "date":
        _reg(f"date_part_{_t}", (lambda t: lambda f, v: _as_float(_extract(f, v, t)))(_t))
# PostgreSQL's date_part(text, date) is date_part(text, $2::timestamp)
_reg("date_part_date", lambda f, d: _as_float(_extract(f, _date_ts(d), "timestamp")))

# ------------------------------------------------------------------------------ date_trunc


def _date_trunc(field: str, ts: _dt.datetime, type_: str) -> _dt.datetime:
    if type(ts) is DateInfinity:
        return ts
    f = _field(field)
    if f == "microseconds":
        return ts
    if f == "milliseconds":
        return ts.replace(microsecond=ts.microsecond // 1000 * 1000)
    if f == "second":
        return ts.replace(microsecond=0)
    if f == "minute":
        return ts.replace(second=0, microsecond=0)
    if f == "hour":
        return ts.replace(minute=0, second=0, microsecond=0)
    day = ts.replace(hour=0, minute=0, second=0, microsecond=0)
    if f == "day":
        return day
    if f == "week":
        try:
            return day - _dt.timedelta(days=day.weekday())
        except OverflowError:
            raise D.ts_range() from None
    if f == "month":
        return day.replace(day=1)
    if f == "quarter":
        return day.replace(month=(ts.month - 1) // 3 * 3 + 1, day=1)
    y = ts.year
    if f == "year":
        return day.replace(month=1, day=1)
    if f in ("decade", "century", "millennium"):
        if f == "decade":
            y = y // 10 * 10
        elif f == "century":
            y = (y + 99) // 100 * 100 - 99
        else:
            y = (y + 999) // 1000 * 1000 - 999
        if y < 1:
            raise D.ts_range()
        return day.replace(year=y, month=1, day=1)
    raise _unit_error(field, type_, f in _TS_FIELDS)


def _interval_trunc(field: str, iv: Interval) -> Interval:
    f = _field(field)
    t = iv.micros
    years = _trunc(iv.months, 12)
    mon = iv.months - years * 12
    if f == "microseconds":
        return iv
    if f == "milliseconds":
        return Interval(iv.months, iv.days, _trunc(t, 1000) * 1000)
    if f == "second":
        return Interval(iv.months, iv.days, _trunc(t, USECS_PER_SEC) * USECS_PER_SEC)
    if f == "minute":
        return Interval(iv.months, iv.days, _trunc(t, 60_000_000) * 60_000_000)
    if f == "hour":
        return Interval(iv.months, iv.days, _trunc(t, 3_600_000_000) * 3_600_000_000)
    if f == "day":
        return Interval(iv.months, iv.days, 0)
    if f == "month":
        return Interval(iv.months, 0, 0)
    if f == "quarter":
        return Interval(years * 12 + _trunc(mon, 3) * 3, 0, 0)
    if f == "year":
        return Interval(years * 12, 0, 0)
    for name, n in (("decade", 10), ("century", 100), ("millennium", 1000)):
        if f == name:
            return Interval(_trunc(years, n) * n * 12, 0, 0)
    if f == "week":
        raise EvalError("0A000", 'unit "week" not supported for type interval')
    raise _unit_error(field, "interval", f in _TS_FIELDS)


_reg("date_trunc_timestamp", lambda f, ts: _date_trunc(f, ts, "timestamp"))
_reg("date_trunc_timestamptz", lambda f, ts: _date_trunc(f, ts, "timestamptz"))
_reg("date_trunc_interval", _interval_trunc)

# ------------------------------------------------------------------------------ age, justify, make_*

_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _mdays(y: int, m: int) -> int:
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    return 29 if m == 2 and leap else _DAYS_IN_MONTH[m - 1]


def _age(a: _dt.datetime, b: _dt.datetime) -> Interval:
    """PostgreSQL's timestamp_age: a symbolic difference in years, months and days."""
    if type(a) is DateInfinity or type(b) is DateInfinity:
        raise EvalError("22008", "interval out of range")
    f = [a.microsecond - b.microsecond, a.second - b.second, a.minute - b.minute, a.hour - b.hour,
         a.day - b.day, a.month - b.month, a.year - b.year]
    neg = a < b
    if neg:
        f = [-x for x in f]
    for i, (lim) in enumerate((USECS_PER_SEC, 60, 60, 24)):
        while f[i] < 0:
            f[i] += lim
            f[i + 1] -= 1
    while f[4] < 0:
        ref = a if neg else b
        f[4] += _mdays(ref.year, ref.month)
        f[5] -= 1
    while f[5] < 0:
        f[5] += 12
        f[6] -= 1
    if neg:
        f = [-x for x in f]
    us, s, mi, h, d, mo, y = f
    return check_interval(y * 12 + mo, d, ((h * 60 + mi) * 60 + s) * USECS_PER_SEC + us)


def _justify_interval(iv: Interval) -> Interval:
    months, days, t = iv.months, iv.days, iv.micros
    whole = _trunc(t, USECS_PER_DAY)
    t -= whole * USECS_PER_DAY
    days += whole
    wm = _trunc(days, 30)
    days -= wm * 30
    months += wm
    if months > 0 and (days < 0 or (days == 0 and t < 0)):
        days += 30
        months -= 1
    elif months < 0 and (days > 0 or (days == 0 and t > 0)):
        days -= 30
        months += 1
    return check_interval(*D.justify_hours(months, days, t))  # |t| < a day: only the sign fix


def _make_date(y: int, m: int, d: int) -> _dt.date:
    try:
        return _dt.date(y, m, d)
    except (ValueError, OverflowError):
        raise EvalError("22008", f"date field value out of range: {y}-{m:02d}-{d:02d}") from None


def _make_timestamp(y, mo, d, h, mi, sec: float) -> _dt.datetime:
    if not (0 <= h <= 23 and 0 <= mi <= 59 and 0 <= sec < 60) or sec != sec:
        raise EvalError("22008", f"time field value out of range: {h}:{mi:02d}:{sec:02g}")
    day = _make_date(y, mo, d)
    return _dt.datetime(day.year, day.month, day.day, h, mi) + _dt.timedelta(microseconds=round(sec * 1e6))


def _make_interval(years=0, months=0, weeks=0, days=0, hours=0, mins=0, secs=0.0) -> Interval:
    if secs != secs or secs in (math.inf, -math.inf):
        raise D.interval_range()
    return check_interval(years * 12 + months, weeks * 7 + days,
                          (hours * 60 + mins) * 60 * USECS_PER_SEC + round(secs * 1e6))


_reg("age_timestamp", _age)
_reg("justify_hours", lambda iv: check_interval(*D.justify_hours(iv.months, iv.days, iv.micros)))
_reg("justify_days", lambda iv: check_interval(*D.justify_days(iv.months, iv.days, iv.micros)))
_reg("justify_interval", _justify_interval)
_reg("make_date", _make_date)
_reg("make_timestamp", _make_timestamp)
_reg("make_interval", _make_interval)


def _date_bin(stride: Interval, ts: _dt.datetime, origin: _dt.datetime) -> _dt.datetime:
    if type(ts) is DateInfinity:
        return ts
    if type(origin) is DateInfinity:
        raise EvalError("22008", "origin out of range")
    if stride.months:
        raise EvalError("0A000", "timestamps cannot be binned into intervals containing months or years")
    step = stride.days * USECS_PER_DAY + stride.micros
    if step <= 0:
        raise EvalError("22008", "stride must be greater than zero")
    d = ts - origin
    delta = (d.days * 86400 + d.seconds) * USECS_PER_SEC + d.microseconds
    tm = _trunc(delta, step) * step
    if delta < 0 and tm != delta:
        tm -= step
    try:
        return origin + _dt.timedelta(microseconds=tm)
    except OverflowError:
        raise D.ts_range() from None


_reg("date_bin", _date_bin)

_reg("to_char_timestamp", _null_inf(to_char))
_reg("typmod_timestamp", typmod_timestamp)
_reg("typmod_timestamptz", typmod_timestamp)
_reg("typmod_time", typmod_time)
_reg("typmod_interval", typmod_interval)

# ------------------------------------------------------------------------------ mz_timestamp


def _mz_ts_range(v):
    raise EvalError("22003", f"mz_timestamp out of range: {v} (an mz_timestamp is 0 to {_MZ_TS_MAX})")


def _numeric_to_mz_ts(d):
    if not d.is_finite() or d < 0 or d != d.to_integral_value() or d > _MZ_TS_MAX:
        _mz_ts_range(d)
    return int(d)


for _t in ("int2", "int4", "int8"):
    _reg(f"cast_{_t}_to_mz_timestamp", lambda v: v if v >= 0 else _mz_ts_range(v))
_reg("cast_numeric_to_mz_timestamp", _numeric_to_mz_ts)
_reg("cast_text_to_mz_timestamp", parse_mz_timestamp)
_reg("cast_mz_timestamp_to_text", str, inline="str({0})")
_reg("cast_mz_timestamp_to_numeric", Decimal)
