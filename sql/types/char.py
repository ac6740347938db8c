"""The SQL type ``char(n)`` (``bpchar``) and the ``char(n)``/``varchar(n)`` modifiers.

Owns ``bpchar`` (displayed ``character``, string category), its spellings, its casts and
literal input, and the validation (``MODIFIERS``: length 1..``repr.char.VARCHAR_MAX``,
PostgreSQL's messages) and display (``FORMATS``: ``character varying(3)``,
``character(3)``) of the length modifiers.
Design: a modifier never changes the type string the rest of the engine sees (``varchar(3)``
is ``text``): it is carried beside the type (the catalog's ``ColumnDef.typmod``, the binder's
cast target) and enforced by an explicit call the binder inserts (``typmod_varchar`` /
``typmod_bpchar``, ``repr.char``): silently truncating for an explicit cast, raising 22001
for an assignment (INSERT, UPDATE, DEFAULT).
``char(n)`` needs its own type because its comparisons differ (trailing blanks are
insignificant).  Rather than a second family of operators, values are stored padded to
``n`` (what the user reads back), and ``bpchar`` converts implicitly to ``text`` by
dropping trailing blanks, as PostgreSQL's ``text(bpchar)`` does; having no operators of
its own, every comparison, ``length``, ``LIKE`` or ``||`` on ``bpchar`` resolves to the
text one through that cast, which gives PostgreSQL's bpchar answers
(``'a '::char(3) = 'a'::char(3)``, ``length('a'::char(3)) = 1``) without touching the
operator tables.  Values of one ``char(n)`` column all have length ``n``, so grouping and
ordering on the stored strings agree with the stripped ones.
The one-byte ``"char"`` (category ``Z``, as PostgreSQL's) is here too, by the same design: its
values are their text (``repr.char.pg_char_in``), it converts implicitly to ``text`` and has
no operators of its own; text, ``char(n)`` and ``varchar`` convert to it by assignment (the
first byte), ``integer`` both ways explicitly (the byte as a signed integer).  Only a quoted
``"char"`` (or ``pg_catalog.char``) names it; ``char`` unquoted is ``char(1)``.
Invariant: every cast here has its ``cast_<from>_to_<to>`` in ``expr.functions.char``.
Deliberately not here: evaluation (``expr.functions.char``) or binding.
"""
from __future__ import annotations

from repr.char import VARCHAR_MAX, pg_char_in
from sql.types.common import bad

TYPES = {"bpchar": ("character", "S", False), "char": ('"char"', "Z", False)}
SPELLINGS = {"bpchar": "bpchar", "char": "bpchar", "character": "bpchar"}
#: types that convert to and from bpchar (through their text forms)
BPCHAR_PEERS = ("bool", "int2", "int4", "int8", "numeric", "float4", "float8")
CASTS = {("bpchar", "text"): "implicit", ("text", "bpchar"): "implicit",
         **{(t, "bpchar"): "assignment" for t in BPCHAR_PEERS}, **{("bpchar", t): "explicit" for t in BPCHAR_PEERS}}
CASTS.update({("char", "text"): "implicit", ("text", "char"): "assignment", ("bpchar", "char"): "assignment",
              ("char", "bpchar"): "assignment", ("char", "int4"): "explicit", ("int4", "char"): "explicit"})
PARSERS = {"bpchar": lambda s: s, "char": pg_char_in}


def _length_typmod(kind: str):
    word = "varchar" if kind == "varchar" else "char"

    def validate(mods: list):
        if not mods:
            return ("varchar", None) if kind == "varchar" else None
        if len(mods) != 1:
            raise bad("invalid type modifier", "42601")
        n = mods[0]
        if n < 1:
            raise bad(f"length for type {word} must be at least 1")
        if n > VARCHAR_MAX:
            raise bad(f"length for type {word} cannot exceed {VARCHAR_MAX}")
        return (kind, n)
    return validate


#: spelling -> (base type, validator of the written modifiers)
MODIFIERS = {**{sp: ("text", _length_typmod("varchar")) for sp in ("varchar", "character varying", "char varying")},
             **{sp: ("bpchar", _length_typmod("bpchar")) for sp in ("bpchar", "char", "character")}}
#: modifier kind -> its display (PostgreSQL's format_type)
FORMATS = {"varchar": lambda m: "character varying" if m[1] is None else f"character varying({m[1]})",
           "bpchar": lambda m: f"character({m[1]})"}
