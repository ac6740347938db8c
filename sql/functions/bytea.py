"""Signatures of the functions and operators over ``bytea``.

Owns ``length``/``octet_length``, ``bit_length`` (of bytea and of text), ``length(bytea,
encoding)`` and ``convert_from(bytea, encoding)``, ``substr``/``substring``, ``encode``,
``decode``, ``md5``, ``get_byte``, Materialize's ``digest``, ``hmac`` and ``constant_time_eq``
(of text and of bytea), the comparisons, and ``||`` (``resolve_operator``: ``bytea || bytea``, an
unknown operand read as bytea).
Invariant: every func id here is implemented in ``expr.functions.bytea`` (comparisons:
``expr.functions.generic``); the hook returns None for every operand it does not own.
"""
from __future__ import annotations

from sql.functions.common import CMP, Resolution, sigs

FUNCTIONS = sigs(
    *((n, ("bytea",), "int4", "bytea_length") for n in ("length", "octet_length")),
    *((n, p, "bytea", "bytea_substr") for n in ("substr", "substring")
      for p in (("bytea", "int4"), ("bytea", "int4", "int4"))),
    ("bit_length", ("bytea",), "int4", "bytea_bit_length"),
    ("bit_length", ("text",), "int4", "text_bit_length"),
    ("length", ("bytea", "text"), "int4", "bytea_length_in"),
    ("convert_from", ("bytea", "text"), "text", "bytea_convert_from"),
    ("encode", ("bytea", "text"), "text", "bytea_encode"),
    ("decode", ("text", "text"), "bytea", "bytea_decode"),
    ("md5", ("bytea",), "text", "bytea_md5"),
    ("get_byte", ("bytea", "int4"), "int4", "bytea_get_byte"),
    *(("digest", (t, "text"), "bytea", "digest") for t in ("text", "bytea")),
    *(("hmac", (t, t, "text"), "bytea", "hmac") for t in ("text", "bytea")),
    *(("constant_time_eq", (t, t), "bool", "constant_time_eq") for t in ("text", "bytea")))
OPERATORS = sigs(*((op, ("bytea", "bytea"), "bool", fid) for op, fid in CMP.items()))
#: func ids the resolution produces beyond the tables above
FUNC_IDS = {"bytea_concat": "resolve_operator ||"}


def resolve_operator(o: str, left: str, right):
    if o == "||" and right is not None and (left == "bytea" and right in ("bytea", "unknown")
                                            or right == "bytea" and left == "unknown"):
        return Resolution("bytea_concat", ("bytea", "bytea"), "bytea")
    return None
