"""Arrangements: collections indexed by key, as spines of immutable batches.

Owns the batch (``batch``), the spine that holds, merges and compacts batches (``spine``)
and the read handle (``read``): a consistent snapshot of a spine and the one read path over
batches.  Invariant: a batch is never mutated once built, so another runtime may hold a
list of batches as a consistent snapshot without locks.
"""
