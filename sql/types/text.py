"""The SQL type ``text`` and ``unknown``, the type of an untyped literal.

Owns ``text`` (typcategory ``S``, preferred) and its spellings (``varchar``, ``character
varying``, ``string``, ``name``: a ``varchar(n)`` is ``text`` with a modifier,
``sql.types.char``), and ``unknown`` (typcategory ``X``): a string literal or NULL before
the binder coerces it; it converts implicitly to every type (``sql.types.cast_context``),
by the target type's input function.
Invariant: ``text`` has no cast table of its own: every other type declares its I/O casts
with ``text`` in its own family.
Deliberately not here: the functions (``sql.functions.text``) and ``char(n)``.
"""
from __future__ import annotations

TYPES = {"text": ("text", "S", True), "unknown": ("unknown", "X", False)}
SPELLINGS = {"text": "text", "varchar": "text", "character varying": "text", "string": "text", "name": "text",
             "unknown": "unknown"}
CASTS: dict = {}
PARSERS: dict = {}
