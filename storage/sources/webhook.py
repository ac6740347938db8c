"""Webhook ingestion: one HTTP request appended as one row in one table commit.

Owns ``WebhookIngestion`` (one webhook source: the collection it writes, what the adapter
decided about its requests -- ``spec``, opaque here -- and its statistics) and ``append``,
which writes one request's row through ``TableStorage.commit`` at one fresh timestamp, as
the load generators' ticks are written.  Invariants: a row is appended only while the
source is registered with its storage's ``Ingestions`` (``append`` checks under the
ingestion's lock, and ``Ingestions.remove`` waits for that lock, so a dropped source's
collection is never written); one request is one commit, so a reader sees it whole or not
at all.  Deliberately not here: HTTP (``server.webhook``), the CHECK expression and
decoding the body (``mzlite.webhooks``); a webhook source has nothing to poll, so ``run``
does nothing.
"""
from __future__ import annotations

import threading


class WebhookIngestion:
    def __init__(self, source_id, spec):
        self.source_id = source_id
        #: the adapter's description of the source (``mzlite.webhooks.WebhookSpec``)
        self.spec = spec
        self.lock = threading.Lock()
        self.messages_received = 0
        self.updates_committed = 0

    def status(self) -> tuple:
        return "running", None

    def statistics(self) -> tuple:
        """``(messages_received, updates_committed, snapshot_committed, offset_known,
        offset_committed)``: offsets are requests appended."""
        return (self.messages_received, self.updates_committed, True, self.updates_committed,
                self.updates_committed)

    def forget(self, gid) -> None:
        """A webhook source is its only collection: nothing else to forget."""

    def run(self, storage) -> int:
        return 0

    def append(self, sources, row: tuple) -> bool:
        """Commit ``row`` into the source's collection (True), or False when the source is no
        longer registered with ``sources`` (dropped)."""
        with self.lock:
            self.messages_received += 1
            if sources.get(self.source_id) is not self:
                return False
            sources.storage.commit({self.source_id: [(row, 1)]})
            self.updates_committed += 1
            return True
