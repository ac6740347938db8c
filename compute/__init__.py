"""compute: the compute protocol and the replica that speaks it (Materialize's ``mz_compute``).

The top of the package is what the planner and the adapter may use: ``protocol``
(commands and responses), ``dataflow`` (``DataflowDescription``, ``is_peek_dataflow``),
``multiplexer`` (one endpoint over the two runtimes), ``peek`` (answering a peek off an
arrangement) and ``errors``.  Below it, runtime machinery only the adapter's controller
constructs: ``replica`` (runtimes, registry, drivers), ``render`` (dataflows and
operators) and ``arrangement`` (spines and batches).  ``compute`` never sees SQL text.
"""
