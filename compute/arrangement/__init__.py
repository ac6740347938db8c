"""Arrangements: collections indexed by key, as spines of immutable batches.

Owns the batch (``batch``) and the spine that holds, merges and compacts batches
(``spine``).  Invariant: a batch is never mutated once built, so another runtime may hold
a list of batches as a consistent snapshot without locks.
"""
