"""The graveyard: dropped dataflows are freed a bounded slice at a time.

Owns ``Graveyard``.  Dropping a hydrated dataflow releases its operators' state (join
arrangements, reduce groups, exported spines: often millions of objects) in one cascade
of deallocations, which runs in C and keeps the GIL for tens of milliseconds: every read
on every runtime waits behind it.  A runtime instead ``bury``s the dataflow and calls
``work(budget)`` between steps; each call removes at most ``budget`` entries from the
dead containers, so the freeing is spread over many short slices that other threads
interleave with.

Invariant: only objects nobody else can reach are emptied.  An object is taken apart only
when ``sys.getrefcount`` shows that the graveyard's own reference is the only one; anything
still shared (a batch a reader's handle holds, a storage collection, the registry, a
callback's closure) is merely let go, and its other owners keep it intact.  Weak
references are not counted by ``getrefcount``, so a buried object must not be watched by
one that reads it: the runtime closes a dataflow (releasing its holds, which its
finalizer would otherwise do) before burying it.

Deliberately not here: deciding what to drop (``compute.replica.core``), tuples (they are
immutable and freed cheaply with their container's entries).
"""
from __future__ import annotations

import sys

__all__ = ["Graveyard", "SLICE"]

#: container entries removed per ``work`` call from the runtime's step (about a millisecond)
SLICE = 5000

_getrefcount = sys.getrefcount


def _diggable(v) -> bool:
    t = type(v)
    return t is dict or t is list or t is set or (
        t.__module__.startswith("compute.") and (hasattr(v, "__dict__") or hasattr(t, "__slots__")))


class Graveyard:
    def __init__(self):
        self._stack: list = []

    def __len__(self) -> int:
        return len(self._stack)

    def bury(self, obj) -> None:
        """Take over ``obj`` (the caller drops its own references to it)."""
        self._stack.append(obj)

    def work(self, budget: int = SLICE) -> bool:
        """Free at most about ``budget`` entries; True when anything was left to do."""
        stack = self._stack
        if not stack:
            return False
        while stack and budget > 0:
            o = stack.pop()
            # our local ``o`` and the call's argument: nobody else holds it
            if _getrefcount(o) > 2:
                del o
                continue
            t = type(o)
            if t is dict or t is list:
                n = min(budget, len(o))
                pop = o.popitem if t is dict else o.pop
                for _ in range(n):
                    v = pop()
                    if t is dict:
                        v = v[1]
                    if _diggable(v):
                        stack.append(v)
                    del v
                budget -= n + 1
                if o:
                    stack.append(o)
            elif t is set:
                n = min(budget, len(o))
                pop = o.pop
                for _ in range(n):
                    pop()
                budget -= n + 1
                if o:
                    stack.append(o)
            else:
                # a compute object (or a tuple subclass such as a spine's read handle) only
                # we hold: its fields' own references go first, so what we push is ours
                if isinstance(o, tuple):
                    stack.extend(v for v in o if _diggable(v))
                d = getattr(o, "__dict__", None)
                if d is not None:
                    stack.extend(v for v in d.values() if _diggable(v))
                    d.clear()
                for name in getattr(t, "__slots__", ()):
                    v = getattr(o, name, None)
                    if _diggable(v):
                        stack.append(v)
                        try:
                            delattr(o, name)
                        except AttributeError:
                            stack.pop()  # cannot detach it: leave it to o
                    v = None
                budget -= 1
            del o
        return True
