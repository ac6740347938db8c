"""SQL types: every type family's names, categories, casts and literal input, assembled once.

Owns the set of type names mzlite knows (PostgreSQL's short names: ``bool int2 int4 int8
numeric float4 float8 text bpchar date ... jsonb``, Materialize's ``mz_timestamp``, and
``unknown`` for an untyped literal; plus the parametric array, list and map types, one per
element or value type), built here from ``FAMILIES`` (one module per type family, paired with the
same-named ``sql.functions`` and ``expr.functions`` modules, each exporting plain tables:
``TYPES`` name -> (display name, PostgreSQL typcategory, preferred in its category),
``SPELLINGS``, ``CASTS`` (from, to) -> least context, ``PARSERS`` type -> input function,
and optionally ``MODIFIERS``/``FORMATS`` for type modifiers).  On them: the mapping from user
spellings (``integer``, ``varchar(10)``, ``double precision``, ...) to names, which casts
exist in which context (``implicit`` / ``assignment`` / ``explicit``, PostgreSQL's pg_cast),
``common_type`` (PostgreSQL's select_common_type for UNION/CASE/COALESCE/VALUES),
``parse_literal`` (the families' input functions, ``repr``'s, the same the run-time casts
call), type modifiers (``typmod_for``, ``format_type``) and ``column_facts``
(information_schema).
Invariant: every name this module returns is a key of ``TYPES`` or a parametric type of
known elements; ``can_cast`` is monotone in context (implicit => assignment => explicit);
no two families declare the same type, spelling, cast or parser (assembly raises); the
result of every function here depends on nothing but its arguments (no import installs
anything).
Deliberately not here: function/operator signatures (``sql.functions``) and evaluation
(``expr.functions``).
"""
from __future__ import annotations

import re
from typing import Optional

from repr.errors import EvalError
from sql.errors import DataError, ProgrammingError
from sql.types import (arrays, boolean, bytea, char, datetime, floats, integer, jsonb, lists, maps, numeric,
                       text, uuid)
from sql.types.common import merged

__all__ = ["FAMILIES", "TYPES", "SPELLINGS", "CASTS", "PARSERS", "INTEGER_TYPES", "NUMERIC_TYPES",
           "normalize_type_name", "display_name", "category", "is_preferred", "cast_context", "can_cast",
           "common_type", "parse_literal", "runtime_input", "typmod_for", "format_type", "column_facts"]

#: family name -> its module (the scalar families; ``arrays`` and ``lists`` are parametric)
FAMILIES = {"boolean": boolean, "integer": integer, "numeric": numeric, "floats": floats, "text": text,
            "char": char, "bytea": bytea, "uuid": uuid, "datetime": datetime, "jsonb": jsonb}


def _merged(attr: str) -> dict:
    return merged(FAMILIES, attr, "sql.types")


#: type name -> (display name, category, preferred in its category)
TYPES: dict[str, tuple[str, str, bool]] = _merged("TYPES")
#: user spelling -> type name
SPELLINGS: dict[str, str] = _merged("SPELLINGS")
#: (from, to) -> the least context of the cast (parametric types: ``arrays``/``lists``)
CASTS: dict[tuple[str, str], str] = _merged("CASTS")
#: type name -> input function (text -> value; raises ``EvalError``)
PARSERS: dict = _merged("PARSERS")
_MODIFIERS: dict = _merged("MODIFIERS")
_FORMATS: dict = _merged("FORMATS")

INTEGER_TYPES = integer.INTEGER_TYPES
#: the numeric types in PostgreSQL's implicit-cast order
NUMERIC_TYPES = INTEGER_TYPES + ("numeric",) + floats.FLOAT_TYPES

_MODIFIER = re.compile(r"\s*\(\s*\d+\s*(,\s*-?\d+\s*)?\)\s*$")


def normalize_type_name(name: str) -> str:
    """The short name for a user spelling; raises 42704 for an unknown type."""
    raw = name
    if name.strip().lower() in ('"char"', 'pg_catalog."char"'):  # quoted: the one-byte type
        return "char"
    n = " ".join(name.strip().lower().replace('"', "").split())
    if n.startswith("pg_catalog."):
        n = n[len("pg_catalog."):]
    n = _MODIFIER.sub("", n)
    if n in SPELLINGS:
        return SPELLINGS[n]
    if maps.spelled_map(n):
        return maps.normalize(n, raw, normalize_type_name, display_name)
    if lists.is_list(n) or (arrays.is_array(n) and lists.is_list(arrays.element_type(n).strip())):
        if arrays.is_array(n):  # an array of lists does not exist
            raise ProgrammingError(f'type "{raw}" does not exist', sqlstate="42704")
        return lists.normalize(n, normalize_type_name)
    if arrays.is_array(n) and arrays.element_type(n).strip() and arrays.element_type(n).strip() != "unknown":
        return arrays.array_of(normalize_type_name(arrays.element_type(n)))
    raise ProgrammingError(f'type "{raw}" does not exist', sqlstate="42704")


def display_name(type_: str) -> str:
    """The name shown to users (``cursor.description``, error messages)."""
    t = TYPES.get(type_)
    if t is None and maps.is_map(type_):
        return maps.display(type_, display_name)
    if t is None and lists.is_list(type_):
        return display_name(lists.element_type(type_)) + lists.SUFFIX
    if t is None and arrays.is_array(type_):
        return display_name(arrays.element_type(type_)) + arrays.SUFFIX
    return t[0] if t else type_


def category(type_: str) -> str:
    """PostgreSQL's typcategory: B boolean, N numeric, S string, D date/time, X unknown, ..."""
    t = TYPES.get(type_)
    if t is None and maps.is_map(type_):
        return maps.CATEGORY
    if t is None and lists.is_list(type_):
        return lists.CATEGORY
    if t is None and arrays.is_array(type_):
        return arrays.CATEGORY
    return t[1] if t else "U"


def is_preferred(type_: str) -> bool:
    t = TYPES.get(type_)
    return bool(t and t[2])


_RANK = {"implicit": 0, "assignment": 1, "explicit": 2}


def cast_context(from_: str, to: str) -> str | None:
    """The least context in which ``from_`` converts to ``to`` (None: never)."""
    if from_ == to or from_ == "unknown":
        return "implicit"
    c = CASTS.get((from_, to))
    if c is not None:
        return c
    if maps.is_map(from_) or maps.is_map(to):
        return maps.cast_context(from_, to)
    if lists.is_list(from_) or lists.is_list(to):
        return lists.cast_context(from_, to, cast_context)
    if arrays.is_array(from_) or arrays.is_array(to):
        return arrays.cast_context(from_, to, cast_context)
    return None


def can_cast(from_: str, to: str, context: str) -> bool:
    """Whether a value of ``from_`` converts to ``to`` in ``context``
    (``implicit`` ⊂ ``assignment`` ⊂ ``explicit``)."""
    c = cast_context(from_, to)
    return c is not None and _RANK[c] <= _RANK[context]


def common_type(types) -> str | None:
    """PostgreSQL's select_common_type: the type every input converts to implicitly,
    or None when the inputs' categories do not match (the caller raises 42804)."""
    types = list(types)
    known = [t for t in types if t != "unknown"]
    if not known:
        return "text" if types else None
    ptype = known[0]
    pcat, ppref = category(ptype), is_preferred(ptype)
    for t in known[1:]:
        if t == ptype:
            continue
        if category(t) != pcat:
            return None
        if not ppref and can_cast(ptype, t, "implicit") and not can_cast(t, ptype, "implicit"):
            ptype, ppref = t, is_preferred(t)
    if all(can_cast(t, ptype, "implicit") for t in known):
        return ptype
    return None


# ----------------------------------------------------------------------------- literals

def parse_literal(text: str, type_: str):
    """The value of the string literal ``text`` as ``type_`` (the type's input function).

    Raises ``DataError`` 22P02 for bad syntax, 22003 for out-of-range values (the input
    function's SQLSTATE and message), 42846 for a type read only at run time
    (``runtime_input``)."""
    if type_ in ("text", "unknown"):
        return text
    parse = PARSERS.get(type_)
    if parse is None:
        raise ProgrammingError(f"cannot cast type unknown to {display_name(type_)}", sqlstate="42846")
    try:
        return parse(text)
    except EvalError as ex:
        raise DataError(ex.message, sqlstate=ex.sqlstate) from None


def runtime_input(type_: str) -> bool:
    """Whether a literal of ``type_`` is read by the run-time cast from text rather than by
    ``parse_literal``: the parametric types, whose input composes the element type's
    (``expr.functions.arrays``/``lists`` synthesize it)."""
    return arrays.is_array(type_) or lists.is_list(type_) or maps.is_map(type_)


# ------------------------------------------------------------------------ type modifiers

def typmod_for(spelled: str, type_: str, mods) -> Optional[tuple]:
    """The modifier of the type spelled ``spelled`` (last name part, e.g. ``varchar``) whose
    base type is ``type_``, given the integer modifiers ``mods`` written after it; None when
    the type carries none.  Raises 22023 (PostgreSQL's bounds) or 42601 (no modifier allowed)."""
    entry = _MODIFIERS.get(spelled.lower())
    mods = list(mods or ())
    if entry is None or entry[0] != type_:
        if mods:
            raise ProgrammingError(f'type modifier is not allowed for type "{spelled}"', sqlstate="42601")
        return None
    return entry[1](mods)


def format_type(type_: str, typmod: Optional[tuple]) -> str:
    """PostgreSQL's format_type: ``character varying(3)``, ``character(3)``, ``numeric(5,2)``."""
    fmt = _FORMATS.get(typmod[0]) if typmod is not None else None
    return fmt(typmod) if fmt is not None else display_name(type_)


#: bits of binary precision of the binary-radix numeric types (information_schema)
_BINARY_PRECISION = {"int2": 16, "int4": 32, "int8": 64, "float4": 24, "float8": 53}


def column_facts(type_: str, typmod: Optional[tuple]) -> dict:
    """``information_schema.columns``' type columns for a column: data_type,
    character_maximum_length, character_octet_length, numeric_precision,
    numeric_precision_radix, numeric_scale (as PostgreSQL 15 reports them)."""
    facts = {"data_type": display_name(type_), "character_maximum_length": None,
             "character_octet_length": None, "numeric_precision": None, "numeric_precision_radix": None,
             "numeric_scale": None}
    if typmod is not None and typmod[0] == "varchar":
        facts["data_type"] = "character varying"
    if type_ in ("text", "bpchar"):
        n = typmod[1] if typmod is not None else None
        facts["character_maximum_length"] = n
        facts["character_octet_length"] = n * 4 if n is not None else 1073741824
    elif type_ in _BINARY_PRECISION:
        facts["numeric_precision"] = _BINARY_PRECISION[type_]
        facts["numeric_precision_radix"] = 2
        if type_.startswith("int"):
            facts["numeric_scale"] = 0
    elif type_ == "numeric":
        facts["numeric_precision_radix"] = 10
        if typmod is not None:
            facts["numeric_precision"], facts["numeric_scale"] = typmod[1], typmod[2]
    return facts
