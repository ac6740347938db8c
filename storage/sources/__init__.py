"""storage.sources: data that arrives by itself -- Materialize's load generator sources.

Owns the generators (``storage.sources.generators``: COUNTER, AUCTION, MARKETING;
``storage.sources.tpch``: TPCH) and their ingestion (``storage.sources.ingest``): a source
writes its ticks into ordinary table collections through ``TableStorage.commit``, one tick at
one timestamp from the oracle, together with the source's progress collection and (in a data
directory) the generator's resume state, all in one commit.  Invariant: a tick is ingested
whole or not at all, and the offsets a source writes are consecutive from its ``AS OF``.
Deliberately not here: SQL (the adapter maps ``CREATE SOURCE`` onto this), the clock that
says when a tick is due (the coordinator passes the oracle's clock in), dataflows.
"""
