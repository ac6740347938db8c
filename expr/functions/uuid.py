"""The functions over ``uuid`` (Python ``uuid.UUID``).

Owns the func ids ``sql.functions.uuid`` names: ``gen_random_uuid`` (volatile: ``VOLATILE``
names it, so it is never folded at plan time nor maintained) and the casts to and from
``text`` (``sql.types.uuid``; lowercase hyphenated output).
Invariant: raises only ``EvalError``.
Deliberately not here: the text input (``repr.strconv.parse_uuid``) and comparisons
(``expr.functions.generic``).
"""
from __future__ import annotations

import functools
import uuid

from expr.functions.common import add
from repr.strconv import parse_uuid

FUNCTIONS: dict = {}
_add = functools.partial(add, FUNCTIONS)

#: func ids whose value changes per call: never constant-folded, refused in maintained objects
VOLATILE = frozenset({"gen_random_uuid"})

_add("cast_text_to_uuid", parse_uuid)
_add("cast_uuid_to_text", str)
_add("gen_random_uuid", uuid.uuid4)
