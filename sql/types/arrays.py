"""SQL array types (``int4[]``, ``text[]``, ...): a type per element type, so no table.

Owns the naming (an array type is the element type's short name followed by ``[]``:
``is_array``, ``element_type``, ``array_of``), the category (``CATEGORY``, PostgreSQL's
``A``) and the casts (``cast_context``): an array converts to another array when its
elements convert, in the same context (PostgreSQL's array coercion), to ``text`` by
assignment and from ``text`` explicitly, as any type.
Invariant: ``element_type(array_of(t)) == t``; one array type covers every number of
dimensions, as in PostgreSQL (``int4[][]`` is ``int4[]``; the shape is the value's,
``repr.arrays.MdArray``).  The casts are synthesized per element type by
``expr.functions.arrays.RESOLVERS``.
Deliberately not here: the display name and spelling rules (``sql.types`` asks the helpers
here), values (``repr.arrays``) and signatures (``sql.functions.arrays``).
"""
from __future__ import annotations

from sql.types.common import element_wise

SUFFIX = "[]"
CATEGORY = "A"


def is_array(t: str) -> bool:
    return t.endswith(SUFFIX)


def element_type(t: str) -> str:
    return t[:-2]


def array_of(t: str) -> str:
    return t + SUFFIX


def cast_context(from_: str, to: str, element_context):
    """The least context converting ``from_`` to ``to`` when either is an array type (None:
    no such cast); ``element_context`` is ``sql.types.cast_context``, for the elements."""
    return element_wise(from_, to, is_array, element_type, element_context, "assignment")
