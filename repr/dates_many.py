"""The list forms of the text input parsers of dates and timestamps (``parse_X_many``).

Owns the column-at-a-time reading of ``date``, ``timestamp`` and ``timestamptz`` text: a
column whose every value has the canonical ISO form is checked in C-level passes and read by
the C ``fromisoformat``.  Invariant: each function gives the same values, and raises the same
first error in list order, as ``repr.dates``' per-value parser over the list; anything not
proven canonical goes to that parser.  Deliberately not here: the parsing rules themselves
(``repr.dates``), and the choice of when a column is read this way (``mzlite.bulk``).
"""
from __future__ import annotations

import datetime as _dt
import re

from repr import dates

__all__ = ["PARSERS_MANY", "parse_date_many", "parse_timestamp_many", "parse_timestamptz_many"]

_ISO_CHARS = re.compile(r"[0-9 T:.-]*")


def _canonical(values: list, seps: dict) -> bool:
    """Whether every value is ``YYYY-MM-DD`` followed by the separators ``seps`` (offset ->
    allowed characters) at fixed offsets and digits everywhere else, all values one length:
    C-level passes only (a regex over the values joined, strided slices of the joined string
    for the separators, and counts proving no separator stands anywhere else)."""
    n = len(values)
    lengths = set(map(len, values))
    if len(lengths) != 1:
        return False
    width = lengths.pop()
    joined = "".join(values)
    if _ISO_CHARS.fullmatch(joined) is None:
        return False
    for offset, chars in seps.items():
        if offset >= width or sum(joined[offset::width].count(c) for c in chars) != n:
            return False
    found = {c: joined.count(c) for c in " T:.-"}
    wanted = {c: 0 for c in " T:.-"}
    for offset, chars in seps.items():
        wanted[chars[0]] += n
    return found[" "] + found["T"] == wanted[" "] and all(found[c] == wanted[c] for c in ":.-")


_DATE_SEPS = {4: "-", 7: "-"}
_TS_SEPS = {4: "-", 7: "-", 10: " T", 13: ":", 16: ":"}


def _iso_many(values: list, fromiso, one, seps: dict) -> list:
    """``[one(v) for v in values]`` for a list of str, raising the first error in order.  The
    common case is mapped in C: when every value has the canonical form ``one`` itself hands
    to ``fromiso`` (``_canonical``) and ``fromiso`` accepts them all; anything else takes the
    per-value path (and its errors)."""
    try:
        if values and _canonical(values, seps):
            return list(map(fromiso, values))
    except (ValueError, TypeError):
        pass
    return [one(v) for v in values]


def _ts_seps(values: list) -> dict:
    """The separators of the canonical timestamp form of ``values[0]``'s length (a fraction of
    1 to 6 digits after a point at offset 19)."""
    return {**_TS_SEPS, 19: "."} if values and 21 <= len(values[0]) <= 26 else _TS_SEPS


def parse_timestamp_many(values: list) -> list:
    """``parse_timestamp`` over a list of str (``_iso_many``)."""
    return _iso_many(values, _dt.datetime.fromisoformat, dates.parse_timestamp, _ts_seps(values))


def parse_timestamptz_many(values: list) -> list:
    """``parse_timestamptz`` over a list of str (``_iso_many``; the canonical form has no
    zone, which means UTC)."""
    return _iso_many(values, _fromiso_utc, dates.parse_timestamptz, _ts_seps(values))


def _fromiso_utc(text: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(text).replace(tzinfo=dates.UTC)


def parse_date_many(values: list) -> list:
    """``parse_date`` over a list of str (``_iso_many``)."""
    return _iso_many(values, _dt.date.fromisoformat, dates.parse_date, _DATE_SEPS)


#: the list forms of ``repr.dates.PARSERS`` that have one
PARSERS_MANY = {"date": parse_date_many, "timestamp": parse_timestamp_many, "timestamptz": parse_timestamptz_many}
