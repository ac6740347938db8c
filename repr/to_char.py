"""``to_char(timestamp|timestamptz|date|interval, text)``: PostgreSQL's date/time template
formatting (the DCH keywords in common use).

Owns the template interpreter: patterns ``YYYY YYY YY Y IYYY CC MM Mon Month MON MONTH DD
DDD D ID Day Dy IW WW Q HH24 HH12 HH MI SS MS US SSSSS AM PM A.M. P.M. TZ J``, the ``FM``
prefix (no padding), ``"quoted text"`` and backslash escapes; anything else is copied.
Invariant: pure function of the value and the template; never raises.  Deliberately not
here: the numeric ``to_char`` forms and ``to_timestamp(text, text)`` parsing.
"""
from __future__ import annotations

import datetime as _dt

from repr.dates import USECS_PER_SEC, UTC, Interval

__all__ = ["to_char"]


def _trunc(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
#: template patterns, longest first (PostgreSQL's DCH keywords, the common ones)
_PATTERNS = ("HH24", "HH12", "HH", "MI", "SS", "MS", "US", "SSSSS", "AM", "PM", "am", "pm", "A.M.", "P.M.",
             "a.m.", "p.m.", "YYYY", "IYYY", "YYY", "YY", "Y", "MONTH", "Month", "month", "MON", "Mon", "mon",
             "MM", "DAY", "Day", "day", "DY", "Dy", "dy", "DDD", "DD", "D", "IW", "ID", "WW", "Q", "TZ", "tz",
             "CC", "J")
_PATTERNS = tuple(sorted(_PATTERNS, key=len, reverse=True))
_CASED = ("MONTH", "MON", "DAY", "DY", "AM", "PM", "A.M.", "P.M.", "TZ")


def _case(word: str, pat: str) -> str:
    if pat.isupper():
        return word.upper()
    if pat.islower():
        return word.lower()
    return word


def _fmt_one(pat: str, v, fm: bool, is_interval: bool) -> str:
    h, mi, s, us = v["hour"], v["minute"], v["second"], v["us"]

    def num(n, width):
        return str(n) if fm else (f"{n:0{width}d}" if n >= 0 else "-" + f"{-n:0{width}d}")
    if pat == "HH24":
        return num(h, 2)
    if pat in ("HH12", "HH"):
        return num(12 if h % 12 == 0 else h % 12, 2)
    if pat == "MI":
        return num(mi, 2)
    if pat == "SS":
        return num(s, 2)
    if pat == "MS":
        return num(us // 1000, 3)
    if pat == "US":
        return num(us, 6)
    if pat == "SSSSS":
        return str((h * 60 + mi) * 60 + s)
    if pat.upper() in ("AM", "PM", "A.M.", "P.M."):
        word = ("PM" if h % 24 >= 12 else "AM") if "." not in pat else ("P.M." if h % 24 >= 12 else "A.M.")
        return word if pat[0].isupper() else word.lower()
    if pat == "TZ":
        return "" if v["tz"] is None else "UTC"
    if pat == "tz":
        return "" if v["tz"] is None else "utc"
    y = v["year"]
    if pat == "YYYY" or pat == "IYYY":
        yy = v["isoyear"] if pat == "IYYY" else y
        return num(yy, 4)
    if pat == "YYY":
        return num(y % 1000, 3)
    if pat == "YY":
        return num(y % 100, 2)
    if pat == "Y":
        return str(y % 10)
    if pat == "CC":
        return num((y + 99) // 100 if y > 0 else y // 100, 2)
    if pat == "MM":
        return num(v["month"], 2)
    if pat == "Q":
        return str((v["month"] - 1) // 3 + 1) if v["month"] else ""
    if pat == "DD":
        return num(v["day"], 2)
    if pat == "DDD":
        return num(v["doy"], 3)
    if pat == "IW":
        return num(v["iw"], 2)
    if pat == "WW":
        return num((v["doy"] - 1) // 7 + 1, 2)
    if pat == "J":
        return str(v["julian"])
    if pat == "D":
        return str(v["dow"] + 1)
    if pat == "ID":
        return str(v["dow"] or 7)
    if pat.upper() in ("MONTH", "MON"):
        if not v["month"]:
            return ""
        name = _MONTHS[v["month"] - 1]
        word = name[:3] if pat.upper() == "MON" else (name if fm else name.ljust(9))
        return _case(word, pat)
    if pat.upper() in ("DAY", "DY"):
        name = _DAYS[v["dow"]]
        word = name[:3] if pat.upper() == "DY" else (name if fm else name.ljust(9))
        return _case(word, pat)
    return pat


def _fields_for(x) -> dict:
    if isinstance(x, Interval):
        years = _trunc(x.months, 12)
        t = x.micros
        hours = _trunc(t, 3_600_000_000)
        rest = t - hours * 3_600_000_000
        return {"year": years, "isoyear": years, "month": x.months - years * 12, "day": x.days, "doy": x.days,
                "iw": 0, "dow": 0, "julian": 0, "hour": hours, "minute": abs(rest) // 60_000_000,
                "second": abs(rest) // USECS_PER_SEC % 60, "us": abs(rest) % USECS_PER_SEC, "tz": None}
    if not isinstance(x, _dt.datetime):
        x = _dt.datetime(x.year, x.month, x.day, tzinfo=UTC)
    iso = x.isocalendar()
    return {"year": x.year, "isoyear": iso[0], "month": x.month, "day": x.day, "doy": x.timetuple().tm_yday,
            "iw": iso[1], "dow": x.isoweekday() % 7, "julian": x.toordinal() + 1721425, "hour": x.hour,
            "minute": x.minute, "second": x.second, "us": x.microsecond, "tz": x.tzinfo}


def to_char(x, template: str) -> str:
    """``to_char(timestamp|timestamptz|date|interval, text)`` with the common template patterns."""
    v = _fields_for(x)
    out = []
    i, n = 0, len(template)
    while i < n:
        c = template[i]
        if c == '"':
            j = i + 1
            while j < n and template[j] != '"':
                if template[j] == "\\" and j + 1 < n:
                    j += 1
                out.append(template[j])
                j += 1
            i = j + 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(template[i + 1])
            i += 2
            continue
        fm = False
        if template.startswith(("FM", "fm", "Fm", "fM"), i):
            fm = True
            i += 2
        hit = next((p for p in _PATTERNS if template.startswith(p, i)), None)
        if hit is None:  # the numeric patterns are case-insensitive (yyyy, hh24, ...)
            up = template[i:i + 5].upper()
            hit = next((p for p in _PATTERNS if p.isupper() and p not in _CASED and up.startswith(p)), None)
        if hit is not None:
            out.append(_fmt_one(hit, v, fm, isinstance(x, Interval)))
            i += len(hit)
        elif i < n:
            out.append(template[i])
            i += 1
    return "".join(out)

