"""Upper listeners: the one way a collection tells waiters that its ``upper`` advanced.

Owns the listener list shared by storage collections and arrangement spines.  Invariant:
listeners run on the writer's thread after the advance is visible, so a woken reader that
re-checks ``upper`` sees it; a listener that removes itself while being notified is safe
(notification iterates over a copy).  Deliberately not here: what a listener does (runtime
drivers wake their runtime) or any locking of the collection itself.
"""
from __future__ import annotations

from typing import Callable


class UpperListeners:
    """Mixin: ``add_listener``, ``remove_listener`` and ``_notify`` over ``self._listeners``."""

    _listeners: list[Callable[[], None]]

    def add_listener(self, fn: Callable[[], None]) -> None:
        """``fn()`` is called (on the writer's thread) after every advance of ``upper``."""
        self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[], None]) -> None:
        try:
            self._listeners.remove(fn)
        except ValueError:
            pass

    def _notify(self) -> None:
        for fn in list(self._listeners):
            fn()
