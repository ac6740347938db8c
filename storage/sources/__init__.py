"""storage.sources: data that arrives by itself -- load generators and PostgreSQL.

Owns the generators (``storage.sources.generators``: COUNTER, AUCTION, MARKETING;
``storage.sources.tpch``: TPCH), PostgreSQL replication (``storage.sources.postgres``,
``storage.sources.pgoutput``) and their ingestion (``storage.sources.ingest``): a source
writes its ticks (or PostgreSQL's transactions) into ordinary table collections through
``TableStorage.commit``, one at one timestamp from the oracle, together with the source's
progress collection and (in a data directory) its resume state, all in one commit.
Invariant: a tick or a transaction is ingested whole or not at all, in order, once.
Deliberately not here: SQL (the adapter maps ``CREATE SOURCE`` onto this), the clock that
says when a tick is due (the coordinator passes the oracle's clock in), dataflows.
"""
