"""SQL types ``bytea``, ``uuid``, ``jsonb`` and arrays (``int4[]``, ``text[]``, ...).

Owns their registration in ``sql.types`` (names, display names, categories, spellings),
their casts (``EXTRA_CASTS`` and ``array_cast_context``), and which types take their
literal input from compute at plan time (``runtime_input``: the binder folds
``cast_text_to_<type>`` over an unknown literal instead of calling ``parse_literal``,
because the values are compute classes ``sql`` may not import).
An array type is the element type's short name followed by ``[]`` (``int4[]``); array
types are not keys of ``TYPES`` (there is one per element type): ``sql.types`` asks
``is_array``/``element_type`` here for their display name (``integer[]``), category
(``A``) and casts (an array converts to another array when its elements convert, in the
same context, as PostgreSQL's array coercion; to and from text as any type).
Invariant: ``element_type(array_of(t)) == t``; one array type covers every number of
dimensions, as in PostgreSQL (``int4[][]`` is ``int4[]``; the shape is the value's,
``repr.arrays.MdArray``).
Deliberately not here: values and evaluation (``repr.arrays``, ``repr.jsonb``,
``expr.functions.document``) and signatures (``sql.functions_document``).
"""
from __future__ import annotations

from sql import types as T

T.register_type("bytea", "bytea", "U", False)
T.register_type("uuid", "uuid", "U", False)
T.register_type("jsonb", "jsonb", "U", False, spellings=("json",))

#: jsonb to scalar casts (PostgreSQL 11+: explicit only)
for _t in ("bool", "numeric", "int2", "int4", "int8", "float8"):
    T.EXTRA_CASTS[("jsonb", _t)] = "explicit"

_RUNTIME = {"bytea", "uuid", "jsonb"}


def is_array(t: str) -> bool:
    return t.endswith("[]")


def element_type(t: str) -> str:
    return t[:-2]


def array_of(t: str) -> str:
    return t + "[]"


def runtime_input(t: str) -> bool:
    """Whether an unknown literal of type ``t`` is parsed by compute's input function."""
    return t in _RUNTIME or is_array(t) or t.endswith(" list")  # lists: sql.types_lists


def array_cast_context(from_: str, to: str):
    """The least context converting ``from_`` to ``to`` when either is an array type
    (None: no such cast, or neither is an array)."""
    fa, ta = is_array(from_), is_array(to)
    if fa and ta:
        return T.cast_context(element_type(from_), element_type(to))
    if fa and to == "text":
        return "assignment"
    if ta and from_ == "text":
        return "explicit"
    return None


def array_valid(t: str) -> bool:
    """Whether ``t`` names an array of a known, non-array element type."""
    return is_array(t) and element_type(t) in T.TYPES and element_type(t) != "unknown"
