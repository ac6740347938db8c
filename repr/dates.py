"""Date/time values: PostgreSQL's ``interval`` value class, the text input and output of
``date``, ``time``, ``timestamp``, ``timestamptz`` and ``interval``, and their arithmetic.

Owns the vocabulary of the date/time family: ``date`` is ``datetime.date``, ``time`` is
``datetime.time``, ``timestamp`` a naive ``datetime.datetime``, ``timestamptz`` an aware
``datetime.datetime`` in UTC (the only session time zone, as in Materialize), and
``interval`` is ``Interval`` (months, days, microseconds), which compares, orders and
hashes the span with a month as 30 days and a day as 24 hours, as PostgreSQL does
(``'1 mon' = '30 days'``).  Input (``parse_date`` ... ``parse_interval``) accepts the ISO
forms and PostgreSQL's ``postgres`` interval style (plus ISO 8601 ``P...``); output is
DateStyle ISO / IntervalStyle postgres, byte for byte.
Invariant: every function here raises only ``EvalError`` with PostgreSQL's SQLSTATE and
message (22007 bad syntax, 22008 out of range, 22009 bad time zone displacement), never
a bare Python exception; every finite value stays inside Python's
``datetime`` range (years 1..9999; PostgreSQL's wider finite range is not supported).
``infinity`` and ``-infinity`` of ``date``/``timestamp``/``timestamptz`` are the two
``DateInfinity`` singletons ``INFINITY`` and ``NEG_INFINITY`` (one pair for all three types:
casts between them keep it): hashable, equal only to themselves, and ordered above
(below) every ``date``/``datetime`` from either side of the comparison, so mixed columns
sort as PostgreSQL orders them.  Deliberately not here: SQL signatures (``sql.functions.datetime``), the
``FUNCTIONS`` entries and field functions (``expr.functions.datetime``).  ``PARSERS`` is the
input function of each type for both literals (``sql.types.datetime``) and run-time casts
(``expr.functions.datetime``), so the two share one implementation.

Over 600 lines (barely): the input and output functions of the five date/time types share
their field parsers; ``dates_infinity`` and ``dates_typmod`` are already split off.
"""
from __future__ import annotations

import datetime as _dt
import re

from repr.dates_infinity import INFINITY, NEG_INFINITY, DateInfinity, is_infinite
from repr.errors import EvalError

__all__ = ["Interval", "UTC", "parse_date", "parse_time", "parse_timestamp", "parse_timestamptz",
           "parse_interval", "date_out", "time_out", "timestamp_out", "timestamptz_out", "interval_out",
           "add_interval", "sub_dates", "sub_timestamps", "justify_hours", "justify_days", "interval_mul",
           "interval_div",
           "check_interval", "USECS_PER_DAY", "PARSERS", "DateInfinity", "INFINITY", "NEG_INFINITY",
           "is_infinite"]

UTC = _dt.timezone.utc
USECS_PER_SEC = 1_000_000
USECS_PER_MINUTE = 60 * USECS_PER_SEC
USECS_PER_HOUR = 60 * USECS_PER_MINUTE
USECS_PER_DAY = 24 * USECS_PER_HOUR
_SPAN_MONTH = 30 * USECS_PER_DAY
_I32 = (-2**31, 2**31 - 1)
_I64 = (-2**63, 2**63 - 1)
EPOCH = _dt.datetime(1970, 1, 1)
EPOCH_TZ = _dt.datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_DATE = _dt.date(1970, 1, 1)


def _trunc_div(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - _trunc_div(a, b) * b


class Interval:
    """PostgreSQL's interval: months, days and microseconds kept apart (``1 mon`` stays
    ``1 mon``) but compared as the span ``months*30 days + days*24 h + micros``."""

    __slots__ = ("months", "days", "micros", "_span")

    def __init__(self, months: int = 0, days: int = 0, micros: int = 0):
        object.__setattr__(self, "months", months)
        object.__setattr__(self, "days", days)
        object.__setattr__(self, "micros", micros)
        object.__setattr__(self, "_span", months * _SPAN_MONTH + days * USECS_PER_DAY + micros)

    def __setattr__(self, name, value):
        raise AttributeError("Interval is immutable")

    def __eq__(self, other):
        o = _span(other)
        return NotImplemented if o is None else self._span == o

    def __ne__(self, other):
        o = _span(other)
        return NotImplemented if o is None else self._span != o

    def __lt__(self, other):
        o = _span(other)
        return NotImplemented if o is None else self._span < o

    def __le__(self, other):
        o = _span(other)
        return NotImplemented if o is None else self._span <= o

    def __gt__(self, other):
        o = _span(other)
        return NotImplemented if o is None else self._span > o

    def __ge__(self, other):
        o = _span(other)
        return NotImplemented if o is None else self._span >= o

    def __hash__(self):
        return hash(self._span)

    # Arithmetic used by generic code: ``generate_series`` steps a timestamp with ``+``;
    # ``sum``/``avg`` accumulate ``total += value * diff`` from ``0``.  Fieldwise, checked.
    def __radd__(self, other):
        if isinstance(other, _dt.datetime):
            return add_interval(other, self)
        if type(other) is DateInfinity:  # generate_series from -infinity would never end
            raise ts_range()
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented

    def __add__(self, other):
        if isinstance(other, Interval):
            return check_interval(self.months + other.months, self.days + other.days, self.micros + other.micros)
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented

    def __mul__(self, n):
        if isinstance(n, int) and not isinstance(n, bool):
            return check_interval(self.months * n, self.days * n, self.micros * n)
        return NotImplemented

    __rmul__ = __mul__

    def __repr__(self):
        return f"Interval({self.months}, {self.days}, {self.micros})"

    def __str__(self):
        return interval_out(self)

    def __reduce__(self):
        return (Interval, (self.months, self.days, self.micros))

    def to_timedelta(self) -> _dt.timedelta:
        """As psycopg converts: a month is 30 days."""
        return _dt.timedelta(days=self.months * 30 + self.days, microseconds=self.micros)

    @staticmethod
    def from_timedelta(td: _dt.timedelta) -> "Interval":
        """PostgreSQL's reading of a Python timedelta: days and a time part."""
        return Interval(0, td.days, td.seconds * USECS_PER_SEC + td.microseconds)


def _span(other):
    """An interval's span; ``0`` compares as the zero interval (``generate_series`` asks
    ``step == 0`` / ``step > 0`` of whatever step it is given)."""
    if isinstance(other, Interval):
        return other._span
    if isinstance(other, int) and not isinstance(other, bool) and other == 0:
        return 0
    return None


def interval_range() -> EvalError:
    return EvalError("22008", "interval out of range")


def check_interval(months: int, days: int, micros: int) -> Interval:
    if not (_I32[0] <= months <= _I32[1] and _I32[0] <= days <= _I32[1] and _I64[0] <= micros <= _I64[1]):
        raise interval_range()
    return Interval(months, days, micros)


# ------------------------------------------------------------------------------ output

def _frac(us: int) -> str:
    return ("." + f"{us:06d}".rstrip("0")) if us else ""


def date_out(d: _dt.date) -> str:
    if type(d) is DateInfinity:
        return str(d)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def time_out(t: _dt.time) -> str:
    return f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}{_frac(t.microsecond)}"


def timestamp_out(ts: _dt.datetime) -> str:
    if type(ts) is DateInfinity:
        return str(ts)
    if ts.tzinfo is not None:
        return timestamptz_out(ts)
    return f"{date_out(ts)} {time_out(ts)}"


def timestamptz_out(ts: _dt.datetime) -> str:
    if type(ts) is DateInfinity:
        return str(ts)
    return f"{date_out(ts)} {time_out(ts)}+00"


def interval_out(iv: Interval) -> str:
    """IntervalStyle postgres (PostgreSQL's EncodeInterval)."""
    parts = []
    is_zero, is_before = True, False
    year, mon = _trunc_div(iv.months, 12), _c_mod(iv.months, 12)
    for value, unit in ((year, "year"), (mon, "mon"), (iv.days, "day")):
        if value == 0:
            continue
        parts.append(f"{'' if is_zero else ' '}{'+' if is_before and value > 0 else ''}{value} {unit}"
                     f"{'s' if value != 1 else ''}")
        is_before, is_zero = value < 0, False
    t = iv.micros
    if is_zero or t != 0:
        a = abs(t)
        hour, rem = divmod(a, USECS_PER_HOUR)
        minute, rem = divmod(rem, USECS_PER_MINUTE)
        sec, us = divmod(rem, USECS_PER_SEC)
        sign = "-" if t < 0 else ("+" if is_before else "")
        parts.append(f"{'' if is_zero else ' '}{sign}{hour:02d}:{minute:02d}:{sec:02d}{_frac(us)}")
    return "".join(parts)


# ------------------------------------------------------------------------------ input

_WS = " \t\n\r\f\v"
_DATE_RE = re.compile(r"(\d{1,9})-(\d{1,2})-(\d{1,2})")
_TIME_RE = re.compile(r"(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?")
_TZ_RE = re.compile(r"(?:(z|utc|gmt)|([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?)\Z", re.I)
_TS_RE = re.compile(
    r"(?P<date>\d{1,9}-\d{1,2}-\d{1,2})(?:(?:[Tt]|\s+)(?P<time>\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d*)?)?))?"
    r"\s*(?P<tz>[zZ]|(?i:utc|gmt)|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)?\Z")
_TIME_ONLY_RE = re.compile(
    r"(?P<time>\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d*)?)?)\s*(?P<tz>[zZ]|(?i:utc|gmt)|[+-]\d{1,2}(?::?\d{2})?)?\Z")


def _syntax(type_name: str, s: str) -> EvalError:
    return EvalError("22007", f'invalid input syntax for type {type_name}: "{s}"')


def _field_range(s: str) -> EvalError:
    return EvalError("22008", f'date/time field value out of range: "{s}"')


def _parse_date_part(text: str, part: str, type_name: str) -> _dt.date:
    m = _DATE_RE.fullmatch(part)
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not (1 <= mo <= 12 and 1 <= d <= 31) or y == 0:
        raise _field_range(text)
    if y > 9999:
        raise EvalError("22008", f'{"date" if type_name == "date" else "timestamp"} out of range: "{text}"')
    try:
        return _dt.date(y, mo, d)
    except ValueError:
        raise _field_range(text) from None


def _parse_time_part(text: str, part: str) -> tuple[int, int]:
    """(microseconds since midnight, extra days from rounding/leap seconds)."""
    m = _TIME_RE.fullmatch(part)
    h, mi = int(m.group(1)), int(m.group(2))
    s = int(m.group(3) or 0)
    frac = m.group(4) or ""
    us = int(round(float("0." + frac) * USECS_PER_SEC)) if frac else 0
    if h > 24 or mi > 59 or s > 60 or (h == 24 and (mi or s or us)):
        raise _field_range(text)
    total = h * USECS_PER_HOUR + mi * USECS_PER_MINUTE + s * USECS_PER_SEC + us
    return total % USECS_PER_DAY, total // USECS_PER_DAY


def _tz_offset(text: str, tz: str | None) -> int:
    """The offset in microseconds east of UTC."""
    if tz is None or tz.lower() in ("z", "utc", "gmt"):
        return 0
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    if len(digits) <= 2:
        h, m, s = int(digits), 0, 0
    else:
        h = int(digits[:-2]) if len(digits) in (3, 4) else int(digits[:-4])
        m = int(digits[-2:]) if len(digits) in (3, 4) else int(digits[-4:-2])
        s = 0 if len(digits) in (3, 4) else int(digits[-2:])
    if h > 15 or m > 59 or s > 59:
        raise EvalError("22009", f'time zone displacement out of range: "{text}"')
    return sign * (h * USECS_PER_HOUR + m * USECS_PER_MINUTE + s * USECS_PER_SEC)


_SPECIAL_INPUT = {"infinity": INFINITY, "-infinity": NEG_INFINITY}


def _match_input(text: str, type_name: str):
    """``('infinity' | '-infinity' value, None)`` or ``(None, match of the date[/time] shape)``."""
    t = text.strip(_WS)
    special = _SPECIAL_INPUT.get(t.lower())
    if special is not None:
        return special, None
    m = _TS_RE.match(t)
    if m is None:
        raise _syntax(type_name, text)
    return None, m


def _parse_ts(text: str, type_name: str, with_tz: bool) -> _dt.datetime:
    special, m = _match_input(text, type_name)
    if special is not None:
        return special
    d = _parse_date_part(text, m.group("date"), type_name)
    us, extra = _parse_time_part(text, m.group("time")) if m.group("time") else (0, 0)
    off = _tz_offset(text, m.group("tz")) if with_tz else 0
    try:
        out = _dt.datetime(d.year, d.month, d.day) + _dt.timedelta(days=extra, microseconds=us - off)
    except OverflowError:
        raise EvalError("22008", f'timestamp out of range: "{text}"') from None
    return out.replace(tzinfo=UTC) if with_tz else out


#: the canonical ISO forms (``YYYY-MM-DD HH:MM:SS[.ffffff]``, ``YYYY-MM-DD``), read by the C
#: ``fromisoformat`` when it accepts them (a value it refuses, such as second 60 or year 0,
#: takes the general path, which also gives the errors): text parameters and COPY's common
#: case (100,000 timestamps: 2.5 s -> 0.2 s)
_ISO_TS = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_timestamp(text: str) -> _dt.datetime:
    """``timestamp`` input: ``YYYY-MM-DD[( |T)HH:MM[:SS[.f]]]``; a zone is ignored, as in PostgreSQL."""
    if _ISO_TS.fullmatch(text) is not None:
        try:
            return _dt.datetime.fromisoformat(text)
        except ValueError:
            pass
    return _parse_ts(text, "timestamp", False)


def parse_timestamptz(text: str) -> _dt.datetime:
    """``timestamptz`` input; no zone means UTC (the session time zone)."""
    if _ISO_TS.fullmatch(text) is not None:
        try:
            return _dt.datetime.fromisoformat(text).replace(tzinfo=UTC)
        except ValueError:
            pass
    return _parse_ts(text, "timestamp with time zone", True)


def parse_date(text: str) -> _dt.date:
    """``date`` input: ``YYYY-MM-DD``, a time after it is ignored as in PostgreSQL."""
    if _ISO_DATE.fullmatch(text) is not None:
        try:
            return _dt.date.fromisoformat(text)
        except ValueError:
            pass
    special, m = _match_input(text, "date")
    if special is not None:
        return special
    d = _parse_date_part(text, m.group("date"), "date")
    if m.group("time"):
        _parse_time_part(text, m.group("time"))
    return d


def parse_time(text: str) -> _dt.time:
    """``time`` input: ``HH:MM[:SS[.f]]``, optionally after a date; a zone is ignored."""
    t = text.strip(_WS)
    m = _TIME_ONLY_RE.match(t)
    if m is None:
        m = _TS_RE.match(t)
        if m is None or not m.group("time"):
            raise _syntax("time", text)
        _parse_date_part(text, m.group("date"), "time")
    us, extra = _parse_time_part(text, m.group("time"))
    if extra:
        raise _field_range(text)  # 24:00:00 is PostgreSQL's end of day; Python's time has no such value
    h, rem = divmod(us, USECS_PER_HOUR)
    mi, rem = divmod(rem, USECS_PER_MINUTE)
    s, u = divmod(rem, USECS_PER_SEC)
    return _dt.time(h, mi, s, u)


# ---- interval input (PostgreSQL's DecodeInterval, postgres and ISO 8601 styles)

_UNITS = {}
for _names, _unit in ((("microsecond", "microseconds", "us", "usec", "usecs", "useconds"), "us"),
                      (("millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds"), "ms"),
                      (("second", "seconds", "s", "sec", "secs"), "s"),
                      (("minute", "minutes", "m", "min", "mins"), "min"),
                      (("hour", "hours", "h", "hr", "hrs"), "h"),
                      (("day", "days", "d"), "d"),
                      (("week", "weeks", "w"), "w"),
                      (("month", "months", "mon", "mons"), "mon"),
                      (("year", "years", "y", "yr", "yrs"), "y"),
                      (("decade", "decades", "dec", "decs"), "dec"),
                      (("century", "centuries", "c", "cent"), "c"),
                      (("millennium", "millennia", "mil", "mils", "millenniums"), "mil")):
    for _n in _names:
        _UNITS[_n] = _unit
_TOKEN = re.compile(r"\s*(?:(?P<time>[+-]?\d+:\d+(?::\d+(?:\.\d*)?)?)|(?P<num>[+-]?(?:\d+\.?\d*|\.\d+))"
                    r"|(?P<word>[A-Za-z]+)|(?P<at>@))")
_ISO = re.compile(r"P(?:(?P<y>[+-]?\d+(?:\.\d+)?)Y)?(?:(?P<mo>[+-]?\d+(?:\.\d+)?)M)?(?:(?P<w>[+-]?\d+(?:\.\d+)?)W)?"
                  r"(?:(?P<d>[+-]?\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>[+-]?\d+(?:\.\d+)?)H)?(?:(?P<mi>[+-]?\d+(?:\.\d+)?)M)?"
                  r"(?:(?P<s>[+-]?\d+(?:\.\d+)?)S)?)?\Z", re.I)


class _Acc:
    """Interval fields accumulated as PostgreSQL's pg_itm_in (fractions spill downwards)."""

    def __init__(self):
        self.months = 0
        self.days = 0
        self.micros = 0

    def add(self, value: float, whole: int, unit: str) -> None:
        frac = value - whole
        if unit == "us":
            self.micros += int(round(value))
        elif unit == "ms":
            self.micros += int(round(value * 1000))
        elif unit == "s":
            self.micros += whole * USECS_PER_SEC + int(round(frac * USECS_PER_SEC))
        elif unit == "min":
            self.micros += whole * USECS_PER_MINUTE + int(round(frac * USECS_PER_MINUTE))
        elif unit == "h":
            self.micros += whole * USECS_PER_HOUR + int(round(frac * USECS_PER_HOUR))
        elif unit == "d":
            self.days += whole
            self.micros += int(round(frac * USECS_PER_DAY))
        elif unit == "w":
            self._frac_days(whole * 7, frac * 7)
        elif unit == "mon":
            self.months += whole
            self._frac_days(0, frac * 30)
        else:
            scale = {"y": 1, "dec": 10, "c": 100, "mil": 1000}[unit]
            self.months += whole * 12 * scale + int(round(frac * scale * 12))

    def _frac_days(self, whole_days: int, frac_days: float) -> None:
        extra = int(frac_days)
        self.days += whole_days + extra
        self.micros += int(round((frac_days - extra) * USECS_PER_DAY))


def _num(text: str, s: str) -> tuple[float, int]:
    v = float(s)
    return v, int(v)


def parse_interval(text: str, unit_hint: str | None = None) -> Interval:
    """``interval`` input.  ``unit_hint`` is the unit a bare number means (``interval '1'
    day``); without it a bare number is seconds."""
    t = text.strip(_WS)
    bad = EvalError("22007", f'invalid input syntax for type interval: "{text}"')
    if not t:
        raise bad
    acc = _Acc()
    m = _ISO.match(t)
    if m and t.upper() != "P":
        for key, unit in (("y", "y"), ("mo", "mon"), ("w", "w"), ("d", "d"), ("h", "h"), ("mi", "min"), ("s", "s")):
            if m.group(key) is not None:
                acc.add(*_num(text, m.group(key)), unit)
        return check_interval(acc.months, acc.days, acc.micros)
    pos, n = 0, len(t)
    pending = None  # a number waiting for its unit
    seen_time = False
    ago = False
    while pos < n:
        mt = _TOKEN.match(t, pos)
        if mt is None:
            raise bad
        pos = mt.end()
        if mt.group("at"):
            continue
        if mt.group("time"):
            if pending is not None or seen_time:
                raise bad
            seen_time = True
            tm = mt.group("time")
            neg = tm.startswith("-")
            pieces = tm.lstrip("+-").split(":")
            h, mi = int(pieces[0]), int(pieces[1])
            sec = float(pieces[2]) if len(pieces) > 2 else 0.0
            if mi > 59 or sec >= 60:
                raise EvalError("22008", f'interval field value out of range: "{text}"')
            us = h * USECS_PER_HOUR + mi * USECS_PER_MINUTE + int(round(sec * USECS_PER_SEC))
            acc.micros += -us if neg else us
        elif mt.group("num"):
            if pending is not None:
                raise bad
            pending = mt.group("num")
        else:
            word = mt.group("word").lower()
            if word == "ago" and pending is None:
                ago = True
                continue
            unit = _UNITS.get(word)
            if unit is None or pending is None:
                raise bad
            acc.add(*_num(text, pending), unit)
            pending = None
    if pending is not None:
        acc.add(*_num(text, pending), unit_hint or "s")
    if ago:
        acc.months, acc.days, acc.micros = -acc.months, -acc.days, -acc.micros
    return check_interval(acc.months, acc.days, acc.micros)


#: type name -> input function (text -> value), for ``sql.types`` literal parsing and casts
PARSERS = {"date": parse_date, "time": parse_time, "timestamp": parse_timestamp,
           "timestamptz": parse_timestamptz, "interval": parse_interval}


# ------------------------------------------------------------------------------ arithmetic

def ts_range(kind: str = "timestamp") -> EvalError:
    return EvalError("22008", f"{kind} out of range")


def add_months(ts, months: int):
    """Add calendar months, clamping the day to the month's end (PostgreSQL)."""
    if not months:
        return ts
    total = ts.year * 12 + (ts.month - 1) + months
    y, m = divmod(total, 12)
    if not 1 <= y <= 9999:
        raise ts_range()
    last = 31 if m == 11 else (_dt.date(y, m + 2, 1) - _dt.timedelta(days=1)).day
    return ts.replace(year=y, month=m + 1, day=min(ts.day, last))


def add_interval(ts: _dt.datetime, iv: Interval, sign: int = 1) -> _dt.datetime:
    """``timestamp[tz] + interval``: months first (day clamped), then days and time;
    an infinite timestamp stays infinite."""
    if type(ts) is DateInfinity:
        return ts
    try:
        out = add_months(ts, sign * iv.months)
        return out + _dt.timedelta(days=sign * iv.days, microseconds=sign * iv.micros)
    except (OverflowError, ValueError):
        raise ts_range() from None


def justify_hours(months: int, days: int, micros: int) -> tuple[int, int, int]:
    days += _trunc_div(micros, USECS_PER_DAY)
    micros = _c_mod(micros, USECS_PER_DAY)
    if days > 0 and micros < 0:
        micros += USECS_PER_DAY
        days -= 1
    elif days < 0 and micros > 0:
        micros -= USECS_PER_DAY
        days += 1
    return months, days, micros


def justify_days(months: int, days: int, micros: int) -> tuple[int, int, int]:
    months += _trunc_div(days, 30)
    days = _c_mod(days, 30)
    if months > 0 and days < 0:
        days += 30
        months -= 1
    elif months < 0 and days > 0:
        days -= 30
        months += 1
    return months, days, micros


def sub_dates(a: _dt.date, b: _dt.date) -> int:
    """``date - date``: days; 22008 when either is infinite."""
    if type(a) is DateInfinity or type(b) is DateInfinity:
        raise EvalError("22008", "cannot subtract infinite dates")
    return (a - b).days


def sub_timestamps(a: _dt.datetime, b: _dt.datetime) -> Interval:
    """``timestamp - timestamp``: days and time, justified as PostgreSQL's timestamp_mi."""
    if type(a) is DateInfinity or type(b) is DateInfinity:
        raise EvalError("22008", "cannot subtract infinite timestamps")
    d = a - b
    us = (d.days * 86400 + d.seconds) * USECS_PER_SEC + d.microseconds
    return check_interval(*justify_hours(0, 0, us))


def _tsround(x: float) -> float:
    return round(x * 1e6) / 1e6


def _spill(months_f: float, days_f: float, micros_f: float) -> Interval:
    """PostgreSQL's interval_mul/interval_div: fractional months spill into days and
    fractional days into time (at microsecond precision)."""
    for v in (months_f, days_f):
        if v != v or not _I32[0] <= v <= _I32[1]:
            raise interval_range()
    months = int(months_f)
    days = int(days_f)
    month_rem_days = _tsround((months_f - months) * 30)
    sec_rem = _tsround((days_f - days + month_rem_days - int(month_rem_days)) * 86400)
    if abs(sec_rem) >= 86400:
        days += int(sec_rem / 86400)
        sec_rem -= int(sec_rem / 86400) * 86400
    days += int(month_rem_days)
    t = micros_f + sec_rem * USECS_PER_SEC
    if t != t or not -9.223372036854776e18 <= t < 9.223372036854776e18:
        raise interval_range()
    return check_interval(months, days, int(round(t)))


def interval_mul(iv: Interval, f: float) -> Interval:
    return _spill(iv.months * f, iv.days * f, iv.micros * f)


def interval_div(iv: Interval, f: float) -> Interval:
    if f == 0.0:
        raise EvalError("22012", "division by zero")
    return _spill(iv.months / f, iv.days / f, iv.micros / f)
