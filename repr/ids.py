"""Collection identifiers: ``u1..`` user objects, ``t1..`` transient, ``s1..`` system.

Owns the ``GlobalId`` value type.  Invariant: a transient id names a collection that
lives only as long as the statement that made it (a peek dataflow, a subscribe).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class GlobalId:
    kind: str  #: one of "u" (user), "t" (transient), "s" (system)
    n: int     #: positive; unique within ``kind``

    def __post_init__(self) -> None:
        if self.kind not in ("u", "t", "s"):
            raise ValueError(f"bad GlobalId kind {self.kind!r}")
        # ids key every per-collection dict on the hot path: hash once, not per lookup
        object.__setattr__(self, "_hash", hash((self.kind, self.n)))

    def __hash__(self) -> int:
        return self._hash

    def is_transient(self) -> bool:
        return self.kind == "t"

    def is_user(self) -> bool:
        return self.kind == "u"

    def is_system(self) -> bool:
        return self.kind == "s"

    def __str__(self) -> str:
        return f"{self.kind}{self.n}"

    __repr__ = __str__

    @classmethod
    def parse(cls, text: str) -> "GlobalId":
        return cls(text[0], int(text[1:]))


def user(n: int) -> GlobalId:
    return GlobalId("u", n)


def transient(n: int) -> GlobalId:
    return GlobalId("t", n)


def system(n: int) -> GlobalId:
    return GlobalId("s", n)
