"""SQL typing of Materialize's ``map`` types (``map[text=>int4]``, ``map[text=>map[text=>text]]``).

Owns the map type names (``map[text=><value type's short name>]``: ``is_map``,
``value_type``, ``map_of``), their category (``CATEGORY``, a pseudo-category ``M``), spelling
(``normalize``: the key type must be ``text``, as Materialize requires) and casts
(``cast_context``: text to map explicitly, map to text by assignment, as for every type's
I/O conversion).  Like list types, map types are not keys of ``sql.types.TYPES`` (there is one
per value type): ``sql.types`` asks this module.
Invariant: ``value_type(map_of(t)) == t``; the key type is always ``text``.
Deliberately not here: values and evaluation (``repr.maps``, ``expr.functions.maps``),
signatures (``sql.functions.maps``) and the ``map[text=>int]`` syntax (``sql.syntax_maps``).
"""
from __future__ import annotations

from sql.errors import ProgrammingError

PREFIX = "map[text=>"
CATEGORY = "M"


def is_map(t: str) -> bool:
    return t.startswith(PREFIX) and t.endswith("]")


def value_type(t: str) -> str:
    return t[len(PREFIX):-1]


def map_of(t: str) -> str:
    return PREFIX + t + "]"


def _split(inner: str):
    """``(key spelling, value spelling)`` of ``k=>v`` at its top-level ``=>`` (None: none)."""
    depth = 0
    for i, c in enumerate(inner):
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif depth == 0 and inner.startswith("=>", i):
            return inner[:i].strip(), inner[i + 2:].strip()
    return None


def spelled_map(n: str) -> bool:
    """Whether the (lower-cased) spelling ``n`` is a map type's, ``map[k=>v]``."""
    return n.startswith("map[") and n.endswith("]")


def normalize(n: str, raw: str, normalize_type_name, display_name) -> str:
    """The short name of the map spelling ``n`` (``map[text=>int]`` -> ``map[text=>int4]``)."""
    kv = _split(n[4:-1])
    if kv is None or not kv[0] or not kv[1]:
        raise ProgrammingError(f'type "{raw}" does not exist', sqlstate="42704")
    key = normalize_type_name(kv[0])
    if key != "text":
        raise ProgrammingError(f"map key type must be text, got {display_name(key)}", sqlstate="42804")
    return map_of(normalize_type_name(kv[1]))


def display(t: str, display_name) -> str:
    return "map[text=>" + display_name(value_type(t)) + "]"


def cast_context(from_: str, to: str):
    """The least context converting ``from_`` to ``to`` when either is a map type (None: no
    such cast)."""
    if is_map(from_) and to == "text":
        return "assignment"
    if is_map(to) and from_ == "text":
        return "explicit"
    return None
