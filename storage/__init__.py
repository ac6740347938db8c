"""storage: storage collections, the home of tables, materialized-view outputs and sources.

Owns the collections compute reads and writes (``storage.persist``: a log of immutable
batches with ``since`` and ``upper``, shaped after Materialize's persist), the upper
listeners they wake (``storage.listeners``) and table storage with group commit
(``storage.tables``).  Invariant: a collection's upper only advances and its since only
advances; every update at a time below the upper is final.  Deliberately not here:
dataflows (``compute``), timestamps' choice (the adapter's oracle), SQL.
"""
