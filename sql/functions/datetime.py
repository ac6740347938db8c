"""Signatures of the date/time functions and operators (and ``mz_timestamp``'s comparisons).

Owns which func id each date/time call resolves to, with PostgreSQL's signatures
(pg_proc/pg_operator): comparisons of every date/time type with itself (the mixed
``date < timestamp`` comparisons resolve through the implicit casts of
``sql.types.datetime``), date/timestamp/time/interval arithmetic, unary ``-``/``+`` on
``interval``, ``extract`` (numeric) and ``date_part`` (float8), ``date_trunc``, ``age``,
Materialize's ``datediff``,
``isfinite``, ``justify_*``, ``make_*``, ``to_char``, ``to_timestamp``, ``date_bin`` and
``now()`` (``NOW_FUNCTIONS``: the binder gives it the read time as its argument).
Invariant: every func id here is implemented in ``expr.functions.datetime`` (comparisons
and unary plus: ``expr.functions.generic``).
Deliberately not here: ``min``/``max``/``sum``/``avg`` (``sql.functions.aggregates``), and
``now()``'s binding to the statement's read time (``planner.bind_expr``).
"""
from __future__ import annotations

from sql.functions.common import CMP, Sig, sigs

_DT = ("date", "time", "timestamp", "timestamptz", "interval")
_TS = ("timestamp", "timestamptz")
_MAKE_INTERVAL = ("int4", "int4", "int4", "int4", "int4", "int4", "float8")
#: the names of the statement's wall clock
NOW_FUNCTIONS = frozenset({"now", "current_timestamp", "transaction_timestamp", "statement_timestamp"})

FUNCTIONS = sigs(
    *(("extract", ("text", t), "numeric", f"extract_{t}") for t in _DT),
    *(("date_part", ("text", t), "float8", f"date_part_{t}") for t in _DT),
    *(("date_trunc", ("text", t), t, f"date_trunc_{t}") for t in _TS + ("interval",)),
    *(("age", (t, t), "interval", "age_timestamp") for t in _TS),
    *(("datediff", ("text", t, t), "int8", "datediff") for t in ("date",) + _TS),
    *(("date_bin", ("interval", t, t), t, "date_bin") for t in _TS),
    *(("to_char", (t, "text"), "text", "to_char_timestamp") for t in _TS + ("interval",)),
    *((n, ("interval",), "interval", n) for n in ("justify_days", "justify_hours", "justify_interval")),
    *(("isfinite", (t,), "bool", "isfinite") for t in ("date", "timestamp", "timestamptz", "interval")),
    ("make_date", ("int4", "int4", "int4"), "date", "make_date"),
    ("make_timestamp", ("int4", "int4", "int4", "int4", "int4", "float8"), "timestamp", "make_timestamp"),
    *(("make_interval", _MAKE_INTERVAL[:k], "interval", "make_interval") for k in range(len(_MAKE_INTERVAL) + 1)),
    ("to_timestamp", ("float8",), "timestamptz", "to_timestamp_float8"),
    # ``ts AT TIME ZONE zone`` is PostgreSQL's timezone(zone, ts)
    ("timezone", ("text", "timestamp"), "timestamptz", "timezone_timestamp"),
    ("timezone", ("text", "timestamptz"), "timestamp", "timezone_timestamptz"),
    *((n, (), "timestamptz", "now") for n in sorted(NOW_FUNCTIONS)))
OPERATORS = sigs(
    *((op, (t, t), "bool", fid) for op, fid in CMP.items() for t in _DT + ("mz_timestamp",)),
    ("+", ("date", "int4"), "date", "add_date_int4"),
    ("+", ("int4", "date"), "date", "add_int4_date"),
    ("-", ("date", "int4"), "date", "sub_date_int4"),
    ("-", ("date", "date"), "int4", "sub_date_date"),
    ("+", ("date", "interval"), "timestamp", "add_date_interval"),
    ("+", ("interval", "date"), "timestamp", "add_interval_date"),
    ("-", ("date", "interval"), "timestamp", "sub_date_interval"),
    ("+", ("date", "time"), "timestamp", "add_date_time"),
    ("+", ("time", "date"), "timestamp", "add_time_date"),
    *(sig for t in _TS for sig in (("+", (t, "interval"), t, "add_timestamp_interval"),
                                   ("+", ("interval", t), t, "add_interval_timestamp"),
                                   ("-", (t, "interval"), t, "sub_timestamp_interval"),
                                   ("-", (t, t), "interval", "sub_timestamp_timestamp"))),
    ("+", ("time", "interval"), "time", "add_time_interval"),
    ("+", ("interval", "time"), "time", "add_interval_time"),
    ("-", ("time", "interval"), "time", "sub_time_interval"),
    ("-", ("time", "time"), "interval", "sub_time_time"),
    ("+", ("interval", "interval"), "interval", "add_interval_interval"),
    ("-", ("interval", "interval"), "interval", "sub_interval_interval"),
    ("*", ("interval", "float8"), "interval", "mul_interval_float8"),
    ("*", ("float8", "interval"), "interval", "mul_float8_interval"),
    ("/", ("interval", "float8"), "interval", "div_interval_float8"))
UNARY = {("-", "interval"): Sig(("interval",), "interval", "neg_interval"),
         ("+", "interval"): Sig(("interval",), "interval", "identity")}
#: func ids the binder writes for syntax rather than resolving a name
FUNC_IDS = {f"typmod_{t}": f"a {t}(p) modifier on a cast or an assignment (sql.types.datetime)"
            for t in ("time", "timestamp", "timestamptz", "interval")}
