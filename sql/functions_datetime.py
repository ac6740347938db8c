"""Signatures of the date/time functions, operators and aggregates (pure tables).

Owns which func id each date/time call resolves to, with PostgreSQL's signatures
(pg_proc/pg_operator): comparisons of every date/time type with itself (the mixed
``date < timestamp`` comparisons resolve through the implicit casts of
``sql.types_datetime``), date/timestamp/time/interval arithmetic, ``extract`` (numeric) and
``date_part`` (float8), ``date_trunc``, ``age``, ``isfinite``, ``justify_*``, ``make_*``, ``to_char``,
``to_timestamp``, ``date_bin``, ``now()``, and ``min``/``max``/``sum``/``avg`` over them.
Invariant: every func id here is implemented in ``expr.functions.datetime`` (the
registry-coverage test checks it).  Deliberately not here: evaluation (``compute``), and
``now()``'s binding to the statement's read time (``planner.bind_expr``).
"""
from __future__ import annotations

from sql import functions as F
from sql.functions import _AGGS, _OPS, _add, _Sig

_CMP = {"=": "eq", "<>": "neq", "!=": "neq", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}
_DT = ("date", "time", "timestamp", "timestamptz", "interval")


def _op(op: str, left: str, right: str, ret: str, func_id: str) -> None:
    _OPS.setdefault(op, []).append(_Sig((left, right), ret, func_id))


for _op_name, _fid in _CMP.items():
    for _t in _DT:
        _op(_op_name, _t, _t, "bool", _fid)

_op("+", "date", "int4", "date", "add_date_int4")
_op("+", "int4", "date", "date", "add_int4_date")
_op("-", "date", "int4", "date", "sub_date_int4")
_op("-", "date", "date", "int4", "sub_date_date")
_op("+", "date", "interval", "timestamp", "add_date_interval")
_op("+", "interval", "date", "timestamp", "add_interval_date")
_op("-", "date", "interval", "timestamp", "sub_date_interval")
_op("+", "date", "time", "timestamp", "add_date_time")
_op("+", "time", "date", "timestamp", "add_time_date")
for _t in ("timestamp", "timestamptz"):
    _op("+", _t, "interval", _t, "add_timestamp_interval")
    _op("+", "interval", _t, _t, "add_interval_timestamp")
    _op("-", _t, "interval", _t, "sub_timestamp_interval")
    _op("-", _t, _t, "interval", "sub_timestamp_timestamp")
_op("+", "time", "interval", "time", "add_time_interval")
_op("+", "interval", "time", "time", "add_interval_time")
_op("-", "time", "interval", "time", "sub_time_interval")
_op("-", "time", "time", "interval", "sub_time_time")
_op("+", "interval", "interval", "interval", "add_interval_interval")
_op("-", "interval", "interval", "interval", "sub_interval_interval")
_op("*", "interval", "float8", "interval", "mul_interval_float8")
_op("*", "float8", "interval", "interval", "mul_float8_interval")
_op("/", "interval", "float8", "interval", "div_interval_float8")

#: unary minus (``sql.functions.resolve_operator`` asks here for non-numeric operands)
UNARY_MINUS = {"interval": "neg_interval"}

for _t in _DT:
    _add("extract", ("text", _t), "numeric", f"extract_{_t}")
    _add("date_part", ("text", _t), "float8", f"date_part_{_t}")
for _t in ("timestamp", "timestamptz", "interval"):
    _add("date_trunc", ("text", _t), _t, f"date_trunc_{_t}")
for _t in ("timestamp", "timestamptz"):
    _add("age", (_t, _t), "interval", "age_timestamp")
    _add("date_bin", ("interval", _t, _t), _t, "date_bin")
for _t in ("timestamp", "timestamptz", "interval"):
    _add("to_char", (_t, "text"), "text", "to_char_timestamp")
for _n in ("justify_days", "justify_hours", "justify_interval"):
    _add(_n, ("interval",), "interval", _n)
for _t in ("date", "timestamp", "timestamptz", "interval"):
    _add("isfinite", (_t,), "bool", "isfinite")
_add("make_date", ("int4", "int4", "int4"), "date", "make_date")
_add("make_timestamp", ("int4", "int4", "int4", "int4", "int4", "float8"), "timestamp", "make_timestamp")
_MAKE_INTERVAL = ("int4", "int4", "int4", "int4", "int4", "int4", "float8")
for _k in range(len(_MAKE_INTERVAL) + 1):
    _add("make_interval", _MAKE_INTERVAL[:_k], "interval", "make_interval")
_add("to_timestamp", ("float8",), "timestamptz", "to_timestamp_float8")
#: the statement's wall clock; the binder gives ``now`` the read time as its argument
for _n in ("now", "current_timestamp", "transaction_timestamp", "statement_timestamp"):
    _add(_n, (), "timestamptz", "now")
NOW_FUNCTIONS = frozenset({"now", "current_timestamp", "transaction_timestamp", "statement_timestamp"})

for _t in _DT:
    _AGGS["min"].append(_Sig((_t,), _t, "min"))
    _AGGS["max"].append(_Sig((_t,), _t, "max"))
_AGGS["sum"].append(_Sig(("interval",), "interval", "sum"))
_AGGS["avg"].append(_Sig(("interval",), "interval", "avg"))

__all__ = ["UNARY_MINUS", "NOW_FUNCTIONS", "F"]
