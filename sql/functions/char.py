"""Signatures over ``char(n)``: none of its own, by design, and the modifier checks.

``char(n)`` has no functions or operators: it converts implicitly to ``text`` (dropping its
trailing blanks) and every call resolves to text's (``sql.types.char`` explains why; ``LIKE``
keeps the blanks, ``sql.functions.text``).  What the family names is the modifier checks the
binder inserts for ``char(n)`` and ``varchar(n)`` and the casts of ``sql.types.char``.
Invariant: every func id here is implemented in ``expr.functions.char``.
"""
from __future__ import annotations

#: func ids the binder writes for syntax rather than resolving a name
FUNC_IDS = {"typmod_bpchar": "a char(n) modifier on a cast or an assignment (sql.types.char)",
            "typmod_varchar": "a varchar(n) modifier on a cast or an assignment (sql.types.char)"}
