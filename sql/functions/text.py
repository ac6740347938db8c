"""Signatures of the functions and operators over ``text``.

Owns PostgreSQL's string entries (``upper`` ... ``translate``, ``regexp_replace``,
``regexp_match``/``regexp_split_to_array``/``string_to_array`` returning ``text[]``), the
regular-expression operators, the comparisons, and the forms ``sql.functions`` asks this
module to resolve (``resolve_function``: ``concat``/``concat_ws``, any argument types;
``resolve_operator``: ``||``, where a non-text operand converts to text, and
``LIKE``/``ILIKE``/``~~``..., where ``char(n)`` keeps its blanks, as bpcharlike does).
Invariant: every func id here is implemented in ``expr.functions.text`` (comparisons:
``expr.functions.generic``); a hook returns None for every name and operand it does not own.
Deliberately not here: ``string_agg`` (``sql.functions.aggregates``).
"""
from __future__ import annotations

from sql.functions.common import CMP, Resolution, err, sigs, type_list
from sql.types import TYPES, can_cast, display_name

_T, _TT, _TTT = ("text",), ("text", "text"), ("text", "text", "text")

FUNCTIONS = sigs(
    *((n, _T, "text", n) for n in ("upper", "lower", "initcap", "reverse")),
    *((n, _T, "int4", "char_length") for n in ("length", "char_length", "character_length")),
    ("octet_length", _T, "int4", "octet_length"),
    *((n, p, "text", "substr") for n in ("substr", "substring") for p in (("text", "int4"), ("text", "int4", "int4"))),
    ("replace", _TTT, "text", "replace"),
    *(("overlay", p, "text", "overlay") for p in (("text", "text", "int4"), ("text", "text", "int4", "int4"))),
    *((n, p, "text", fid) for n, fid in (("btrim", "btrim"), ("trim", "btrim"), ("ltrim", "ltrim"), ("rtrim", "rtrim"))
      for p in (_T, _TT)),
    *((n, _TT, "int4", "strpos") for n in ("position", "strpos")),
    *((n, p, "text", n) for n in ("lpad", "rpad") for p in (("text", "int4"), ("text", "int4", "text"))),
    *((n, ("text", "int4"), "text", n) for n in ("left", "right", "repeat")),
    ("split_part", ("text", "text", "int4"), "text", "split_part"),
    ("starts_with", _TT, "bool", "starts_with"),
    ("regexp_replace", _TTT, "text", "regexp_replace"), ("regexp_replace", _TTT + _T, "text", "regexp_replace"),
    ("ascii", _T, "int4", "ascii"),
    ("chr", ("int4",), "text", "chr"),
    ("md5", _T, "text", "md5"),
    ("translate", _TTT, "text", "translate"),
    *((n, p, "text[]", n) for n in ("regexp_match", "regexp_split_to_array", "string_to_array") for p in (_TT, _TTT)),
    # the session's database and the server's version, constants in mzlite (one database)
    *((n, (), "text", n) for n in ("version", "mz_version", "current_database", "current_schema")),
    ("mz_version_num", (), "int4", "mz_version_num"),
    # system information, as the pg_catalog queries of psql and drivers call them (one owner)
    *(("pg_get_userbyid", (t,), "text", "pg_get_userbyid") for t in ("int4", "int8")),
    *(("pg_table_is_visible", (t,), "bool", "pg_table_is_visible") for t in ("int4", "int8")),
    ("pg_encoding_to_char", ("int4",), "text", "pg_encoding_to_char"))
OPERATORS = sigs(*((op, _TT, "bool", fid) for op, fid in (("~", "regex_match"), ("~*", "regex_imatch"),
                                                           ("!~", "regex_not_match"), ("!~*", "regex_not_imatch"))),
                 *((op, _TT, "bool", fid) for op, fid in CMP.items()))
LIKE = {"~~": "like", "like": "like", "!~~": "not_like", "not like": "not_like",
        "~~*": "ilike", "ilike": "ilike", "!~~*": "not_ilike", "not ilike": "not_ilike"}
#: func ids the resolution produces beyond the tables above
FUNC_IDS = {"concat": "resolve_function", "concat_ws": "resolve_function", "textcat": "resolve_operator ||",
            "cast_unknown_to_text": "an untyped literal read as text (sql.functions.resolve_cast)"}


def resolve_table_function(name: str, args: tuple):
    """``regexp_split_to_table(text, text [, text])``; None for other names."""
    if name != "regexp_split_to_table":
        return None
    if len(args) not in (2, 3) or not all(can_cast(a, "text", "implicit") for a in args):
        raise err(f"function regexp_split_to_table({type_list(args)}) does not exist", "42883")
    return name, ("text",) * len(args), ("regexp_split_to_table",), ("text",)


def resolve_function(name: str, args: tuple):
    """``concat``/``concat_ws`` (any argument types, unknown read as text); None otherwise."""
    if name == "concat":
        return Resolution("concat", tuple("text" if a == "unknown" else a for a in args), "text")
    if name == "concat_ws":
        if not args or not can_cast(args[0], "text", "implicit"):
            raise err(f"function concat_ws({type_list(args)}) does not exist", "42883")
        return Resolution("concat_ws", ("text",) + tuple("text" if a == "unknown" else a for a in args[1:]), "text")
    return None


def resolve_operator(o: str, left: str, right):
    """``||`` with a text operand and the LIKE family; None for other operators."""
    if right is None:
        return None
    if o == "||":
        lt, rt = left, right
        # char(n) concatenates as text (its trailing blanks dropped), as in PostgreSQL
        lt, rt = ("text" if lt == "bpchar" else lt), ("text" if rt == "bpchar" else rt)
        if lt in ("text", "unknown") and rt in ("text", "unknown"):
            return Resolution("textcat", ("text", "text"), "text")
        if lt in ("text", "unknown") and rt in TYPES:
            return Resolution("textcat", ("text", rt), "text")
        if rt in ("text", "unknown") and lt in TYPES:
            return Resolution("textcat", (lt, "text"), "text")
        raise err(f"operator does not exist: {display_name(lt)} || {display_name(rt)}", "42883")
    if o in LIKE:
        if all(t in ("text", "unknown") for t in (left, right)):
            return Resolution(LIKE[o], ("text", "text"), "bool")
        if left == "bpchar" and right in ("text", "unknown", "bpchar"):  # bpcharlike sees the blanks
            return Resolution(LIKE[o], ("bpchar", "text"), "bool")
        shown = {"like": "~~", "not like": "!~~", "ilike": "~~*", "not ilike": "!~~*"}.get(o, o)
        raise err(f"operator does not exist: {display_name(left)} {shown} {display_name(right)}", "42883")
    return None
