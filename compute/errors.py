"""Violations of the compute protocol.

Owns ``ComputeProtocolError``: a sender broke one of the protocol's "musts"
(``compute.protocol``).  It is a bug, raised loudly at the receiving boundary, never an
answer to user input.  Deliberately not here: errors in the data (``repr.errors.EvalError``),
which flow through the dataflows' error collections instead.
"""
from __future__ import annotations


class ComputeProtocolError(AssertionError):
    """A violated protocol invariant (a sender broke a "must"): a bug, raised loudly."""
